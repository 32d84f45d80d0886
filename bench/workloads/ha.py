"""The cost of synchronous replication (issue 36): register against the leader of a
Patroni cluster, with Patroni's `synchronous_mode` on (a commit returns once the
synchronous standby has flushed it: RPO 0) and off (asynchronous streaming), the
modes taking turns in rounds so that a busy machine slows both alike.

The cluster is `make ha-drill`'s (tests/ha_drill: etcd × 3, Patroni × 3 members of
PostgreSQL, one YAML file each), started in a scratch folder for this step and
stopped after it; not the bench's own database. The writer is a process of its own
(`python -m bench.ha_writer`, the bench settings, DATABASE_URL the leader): one
`register` per transaction, one writer, so each figure is the commit's latency
(registrations/s and p50 ms per register). Patroni's mode is switched through its
REST API (PATCH /config) and each round waits until the leader's
synchronous_standby_names says the switch took.
BENCH_HA_ROUNDS [3], BENCH_HA_REGISTERS [200] per mode and round.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.workloads.common import ROOT, env_int


def ha_sync_commit() -> dict:
    from tests.ha_drill.cluster import MEMBERS, HaTopology
    from tests.ha_drill.run import PROGRAMS
    from tests.prod_smoke.databases import APP_PASSWORD, APP_USER, DATABASE
    from tests.prod_smoke.procs import Supervisor
    from tests.prod_smoke.topology import ensure_packages

    rounds, registers = env_int("BENCH_HA_ROUNDS", 3), env_int("BENCH_HA_REGISTERS", 200)
    scratch = Path(tempfile.mkdtemp(prefix="bench-ha-"))
    scratch.chmod(0o755)
    (scratch / "logs").mkdir()
    supervisor = Supervisor(scratch / "logs")
    try:
        top = HaTopology(scratch, supervisor, ensure_packages(PROGRAMS))
        top.start_etcd()
        top.write_pgbackrest_config()
        leader = top.start_patroni()
        top.pgbackrest("stanza-create", leader=leader)
        top.ports["primary"] = top.ports[leader]  # no HAProxy here: the leader itself
        top.create_app_database()
        url = f"postgres://{APP_USER}:{APP_PASSWORD}@127.0.0.1:{top.ports[leader]}/{DATABASE}"
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "bench.settings"}
        args = [sys.executable, "-m", "bench.ha_writer", top.rest(leader),
                top.superuser_dsn(leader, "postgres"), str(rounds), str(registers)]  # fmt: skip
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=1800)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"the HA writer failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        figures["members"] = len(MEMBERS)
        print(f"   register on the Patroni leader: synchronous {figures['synchronous']}, "
              f"asynchronous {figures['asynchronous']}: synchronous replication keeps "
              f"{figures['sync_over_async']:.0%} of the throughput", flush=True)  # fmt: skip
        return figures
    finally:
        supervisor.stop_all()
        shutil.rmtree(scratch, ignore_errors=True)
