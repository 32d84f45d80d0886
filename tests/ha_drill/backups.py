"""pgBackRest in `make ha-drill`: a local repository every member archives into
(patroni.yml's archive_command), a full backup from the leader at start, and restores
into scratch clusters of their own (never a member's data directory)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from tests.prod_smoke.procs import Service, chown_tree, render, run, wait_until

HERE = Path(__file__).resolve().parent
STANZA = "grounding"


class Backups:
    """pgBackRest for an `HaTopology` (whose scratch, programs and leader it uses)."""

    scratch: Path
    user: str | None
    programs: dict[str, str]
    ports: dict[str, int]
    services: dict[str, Service]
    sockets: Path
    pgbin: Path
    pgbackrest_conf: Path

    def write_pgbackrest_config(self) -> None:
        directory = self.pgbackrest_conf.parent
        directory.mkdir()
        for sub in ("repo", "lock", "log", "spool"):
            (directory / sub).mkdir()
        render(
            HERE / "pgbackrest.conf.in",
            self.pgbackrest_conf,
            {"dir": directory, "sockets": self.sockets},
        )
        chown_tree(directory, self.user)

    def pgbackrest(self, *args: str, leader: str | None = None, timeout: float = 180):
        """One pgBackRest command as the service user; with `leader`, against that
        member's data directory and port."""
        target = []
        if leader is not None:
            target = [f"--pg1-path={self.data_dir(leader)}", f"--pg1-port={self.ports[leader]}"]
        return run(
            [self.programs["pgbackrest"], f"--config={self.pgbackrest_conf}",
             f"--stanza={STANZA}", *target, *args],
            user=self.user,
            timeout=timeout,
        )  # fmt: skip

    def first_backup(self, leader: str) -> dict:
        """stanza-create, check (a WAL segment archived), a full backup; its info."""
        self.pgbackrest("stanza-create", leader=leader)
        self.pgbackrest("check", leader=leader)
        self.pgbackrest("backup", "--type=full", leader=leader, timeout=300)
        return self.backup_info()

    def backup_info(self) -> dict:
        info = json.loads(self.pgbackrest("info", "--output=json").stdout)[0]
        return info

    def archive_now(self, leader: str) -> None:
        """Switch the leader's WAL segment and wait until the repository has it
        (`pgbackrest check`): what was committed is then restorable."""
        self.pgbackrest("check", leader=leader)

    # -- restores ----------------------------------------------------------------------
    def restore(self, name: str, *target: str) -> Path:
        """Restore the repository into a scratch data directory of its own; `target`:
        pgBackRest's restore options (`--type=time`, `--target=…`). Its directory."""
        data = self.scratch / name / "data"
        data.mkdir(parents=True, mode=0o700)
        chown_tree(data.parent, self.user)
        self.pgbackrest(f"--pg1-path={data}", "restore", *target, timeout=300)
        return data

    def start_restored(self, name: str, data: Path, port: int) -> Service:
        """PostgreSQL on a restored directory, recovering to its target, then promoted.
        Alone: no archiving into the live repository, no synchronous standby, its own
        pg_hba.conf (the backup's postgresql.conf names the member's)."""
        service = self.supervisor.start(
            name,
            [str(self.pgbin / "postgres"), "-D", str(data), "-p", str(port),
             "-k", str(self.sockets), "-c", "listen_addresses=127.0.0.1",
             "-c", "archive_mode=off", "-c", "synchronous_standby_names=",
             "-c", f"hba_file={data}/pg_hba.conf", "-c", f"ident_file={data}/pg_ident.conf",
             "-c", f"cluster_name={name}"],
            stop_signal=signal.SIGINT,
            user=self.user,
            cwd=data.parent,
        )  # fmt: skip
        self.services[name] = service
        self.ports[name] = port

        def promoted() -> bool:
            with self.connect(name, "postgres") as conn:
                return not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]

        wait_until(f"{name} recovered and promoted", promoted, timeout=120, service=service)
        return service
