"""The drill's order: start the topology, run the drills, then stop everything (or,
with HA_KEEP=1, leave it running and write $HA_STATE)."""

from __future__ import annotations

import json
import os
import sys

import requests

from tests.ha_drill import drills, restores, state
from tests.ha_drill.cluster import MEMBERS, HaTopology
from tests.prod_smoke.procs import wait_until
from tests.prod_smoke.run import Run, Steps
from tests.prod_smoke.topology import ensure_packages
from tests.prod_smoke.web import PROJECT, SERVERS

# The whole run, start to teardown: within 8 minutes on two loaded cores.
TIME_LIMIT = int(os.environ.get("HA_DRILL_TIME_LIMIT", "480"))
# HA_DRILLS=failover,switchover runs those only (all by default), in this order.
DRILLS = {
    "replica": [
        ("a replica lost: its Patroni and PostgreSQL SIGKILLed", "replica_lost"),
        ("the lost replica comes back", "member_back"),
    ],
    "failover": [
        ("the leader's host lost under a keyed write load", "leader_lost"),
        ("the lost leader comes back as a replica (pg_rewind)", "member_back"),
    ],
    "switchover": [("a planned switchover under load", "switchover")],
    "restore": [],
}
PROGRAMS = (
    *("nginx", "pgbouncer", "openssl", "initdb", "redis-server"),
    *("patroni", "patronictl", "etcd", "etcdctl", "haproxy", "pgbackrest", "python3-etcd"),
)


def _databases(top: HaTopology, step: Steps) -> str:
    step(f"etcd: three members on 127.0.0.1:{top.ports['etcd-1-client']}, …")
    top.start_etcd()
    step("Patroni: three PostgreSQL members (pg-1 bootstraps, the others clone it)")
    top.write_pgbackrest_config()
    leader = top.start_patroni()
    print(f"   leader {leader}; standbys {top.standbys()}")
    step(f"HAProxy: leader on {top.ports['primary']}, async standby on {top.ports['replica']}")
    top.start_haproxy()
    step("the app's role and database; migrations and the demo, once, on the leader")
    top.create_app_database()
    direct = top.direct_env()
    top.manage("migrate", "--noinput", env=direct)
    top.demo = json.loads(top.manage("seed_demo", "--json", env=direct).stdout.splitlines()[-1])
    top.manage("collectstatic", "--noinput", env=direct)
    step("pgBackRest: stanza, WAL archive checked, a full backup of the leader")
    info = top.first_backup(leader)
    backup = info["backup"][-1]
    print(f"   {backup['type']} backup {backup['label']}: {backup['info']['size']} bytes, "
          f"WAL {backup['archive']['start']}..{backup['archive']['stop']}")  # fmt: skip
    return leader


def _services(top: HaTopology, step: Steps) -> None:
    step("the log's sequencer (manage.py run_sequencer), through HAProxy to the leader")
    top.start_sequencer()
    step(f"PgBouncer (transaction pooling) on {top.ports['pgbouncer']} → HAProxy's leader")
    top.start_pgbouncer()
    top.start_redis()
    step(f"gunicorn {', '.join(SERVERS)}; nginx with TLS on {top.ports['https']}")
    (top.scratch / "journal").mkdir()  # the disposal journal's, off the database
    top.start_app_servers()
    top.start_nginx()
    step("the feed: a receiver (its own process) and two deliver_events workers")
    top.journal = top.scratch / "receiver" / "deliveries.jsonl"
    top.journal.parent.mkdir()
    top.services["receiver"] = receiver = top.supervisor.start(
        "receiver",
        [sys.executable, "-m", "tests.ha_drill.receiver", str(top.ports["receiver"]),
         str(top.journal)],
        cwd=PROJECT,
    )  # fmt: skip
    wait_until("the receiver", lambda: "receiving" in receiver.log.read_text(), timeout=30,
               service=receiver)  # fmt: skip
    for name in ("deliver-1", "deliver-2"):
        top.services[name] = top.supervisor.start(
            name,
            [sys.executable, "manage.py", "deliver_events", "--threads", "2", "--poll", "0.2"],
            env=top.app_env(name),
            cwd=PROJECT,
        )
    answer = requests.post(
        f"{top.base_url()}/api/v1/webhooks/",
        json={"dimension": "demo", "url": f"http://127.0.0.1:{top.ports['receiver']}/hook"},
        headers={"Authorization": f"Token {top.demo['tokens']['steward']}"},
        verify=str(top.cert),
        timeout=30,
    )
    drills.expect(answer.status_code == 201, f"subscribing: {answer.status_code} {answer.text}")
    top.webhook = answer.json()
    print(f"   subscribed {top.webhook['url']} (webhook {top.webhook['webhook_id']})")


def main() -> int:
    with Run("ha-drill", time_limit=TIME_LIMIT, keep_env="HA_KEEP_LOGS") as run:
        run.step("programs (apt-get install what is missing)")
        programs = ensure_packages(PROGRAMS)
        print(f"   {', '.join(f'{n}={p}' for n, p in sorted(programs.items()))}")
        print("   " + state.versions(programs))
        top = HaTopology(run.scratch, run.supervisor, programs)
        _databases(top, run.step)
        _services(top, run.step)
        drill = drills.Drill(top)
        run.step("ready: every app server, its replica, through nginx")
        drill.ready()
        chosen = os.environ.get("HA_DRILLS", ",".join(DRILLS)).split(",")
        for name in DRILLS:
            if name in chosen:
                for title, method in DRILLS[name]:
                    run.step(title)
                    getattr(drill, method)()
        run.step("the record after every drill: writes, log, feed")
        drill.settled()
        if "restore" in chosen:
            restores.run_all(top, drill, run.step)
        drill.summary()
        run.failed = False
        if os.environ.get("HA_KEEP"):
            path = state.write(top)
            run.keep_running = True
            print(f"   HA_KEEP: left running; $HA_STATE {path}; stop: {state.stop_command(top)}")
    return run.result()


__all__ = ["MEMBERS", "main"]
