"""Every shell block of README.md works as written, on a scratch copy of the
repository with a scratch SQLite database and none of the environment the test
suite runs with (no secret key, no DEBUG, no DATABASE_URL): what a new user has
after a fresh clone.

`make run` is run as `make -n run` prints it, except that its server listens on a
free port (the blocks' `127.0.0.1:8000` is rewritten to it) until the blocks are
done. The blocks listed in SKIPPED are not run, each for the reason given there.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import venv
from dataclasses import dataclass
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

import pytest

PROJECT = Path(__file__).resolve().parents[2]
README = PROJECT / "README.md"

# A block containing the key is not run, for this reason.
SKIPPED = {
    "DATABASE_URL=postgres": "the same two commands on PostgreSQL: `make run` serves until "
    "stopped (its steps run here on SQLite) and `make test` is this very suite",
    "PYTEST_WORKERS=0": "variants of `make test`, which is this very suite",
    "docker compose": "needs a Docker engine, which this machine has not; "
    "tests/ops/test_compose.py validates docker-compose.yml instead",
}
MAKE_RUN = "make run    #"
# Variables of the suite's own environment a fresh shell would not have.
SUITE_ONLY = (
    "DJANGO_SECRET_KEY",
    "DJANGO_DEBUG",
    "DJANGO_ENV",
    "GROUNDING_ENV_FILE",
    "DATABASE_URL",
    "DATABASE_REPLICA_URL",
    "GROUNDING_LOG_SIGNING_KEY",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    "COLUMNS",
)


@dataclass(frozen=True)
class Block:
    line: int
    text: str


def shell_blocks(markdown: str) -> list[Block]:
    return [
        Block(markdown[: match.start()].count("\n") + 1, match.group(1))
        for match in re.finditer(r"^```sh\n(.*?)^```$", markdown, flags=re.S | re.M)
    ]


def test_the_readme_has_the_blocks_this_test_knows():
    blocks = shell_blocks(README.read_text(encoding="utf-8"))
    assert sum(MAKE_RUN in b.text for b in blocks) == 1
    for key in SKIPPED:
        assert any(key in b.text for b in blocks), f"no README block contains {key!r}"


def _scratch_copy(destination: Path) -> None:
    """The tracked files (as a fresh clone has them), and a venv that sees ours."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = PROJECT / name.decode()
        if source.is_file():
            target = destination / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    # Our installed packages without reinstalling them: a bare venv whose
    # site-packages points at this one's (the project itself comes from the copy).
    scratch_venv = destination / ".venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(scratch_venv)
    purelib = Path(sysconfig.get_paths()["purelib"])
    site = scratch_venv / purelib.relative_to(sys.prefix)
    (site / "suite-packages.pth").write_text(f"{purelib}\n", encoding="utf-8")
    (scratch_venv / ".installed").touch()  # newer than the copied pyproject.toml


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(command: str, cwd: Path, env: dict[str, str], where: str) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{where} failed:\n{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _serve(line: str, cwd: Path, env: dict[str, str], port: int) -> subprocess.Popen:
    command = line.replace("127.0.0.1:8000", f"127.0.0.1:{port}") + " --noreload"
    log = (cwd / "server.log").open("w")
    # `exec env …`: the server replaces the shell, so terminating it stops the server.
    server = subprocess.Popen(
        ["bash", "-c", f"exec env {command}"], cwd=cwd, env=env, stdout=log, stderr=log
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                if response.status == 200:
                    return server
        except (URLError, OSError):
            time.sleep(0.3)
        if server.poll() is not None:
            break
    server.terminate()
    server.wait(timeout=30)
    pytest.fail(f"`make run`'s server did not answer:\n{(cwd / 'server.log').read_text()}")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_every_readme_shell_block_works_as_written(tmp_path):
    scratch = tmp_path / "clone"
    _scratch_copy(scratch)
    env = {k: v for k, v in os.environ.items() if k not in SUITE_ONLY}
    port = _free_port()
    server = None
    ran = []
    try:
        for block in shell_blocks(README.read_text(encoding="utf-8")):
            where = f"README.md:{block.line}"
            if any(key in block.text for key in SKIPPED):
                continue
            if MAKE_RUN in block.text:
                _run("make install", scratch, env, where)
                steps = _run("make -n run", scratch, env, where).splitlines()
                *prepare, serve = steps
                assert "runserver 127.0.0.1:8000" in serve, steps
                for step in prepare:
                    _run(step, scratch, env, where)
                server = _serve(serve, scratch, env, port)
                ran.append(block.line)
                continue
            command = block.text.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
            out = _run(command, scratch, env, where)
            if "/api/v1/groundings/" in command:
                assert '"results"' in out, (where, out)
            ran.append(block.line)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    assert len(ran) >= 5, ran
    # The scratch database is the default SQLite file of the copy, never the suite's.
    assert (scratch / "db.sqlite3").is_file()
    # `.env` is `.env.example`, and the transparency log's demo signing key `make run`
    # generated into it (a fresh shell has none: the suite's own is not passed on).
    written = (scratch / ".env").read_text()
    example = (PROJECT / ".env.example").read_text()
    assert written.startswith(example), written
    added = written[len(example) :].splitlines()
    assert len(added) == 1 and re.fullmatch(
        r"GROUNDING_LOG_SIGNING_KEY=[A-Za-z0-9+/]{43}=", added[0]
    )
