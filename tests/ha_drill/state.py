"""`HA_KEEP=1`: the topology left running, described in $HA_STATE (API.md "Surviving a
lost server"), with a shell command that stops it all."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from tests.ha_drill.cluster import ETCD, MEMBERS, HaTopology
from tests.prod_smoke.procs import run
from tests.prod_smoke.web import SERVERS

DEFAULT = "/tmp/grounding-ha/topology.json"


def versions(programs: dict[str, str]) -> str:
    """The programs' own word on their versions."""
    found = []
    for name, args in (("patroni", ["--version"]), ("etcd", ["--version"]),
                       ("haproxy", ["-v"]), ("pgbackrest", ["version"])):  # fmt: skip
        out = run([programs[name], *args], timeout=30, check=False).stdout
        found.append(out.splitlines()[0].strip() if out else f"{name} ?")
    return "; ".join(found)


def stop_command(top: HaTopology) -> str:
    return f"sh {shlex.quote(str(top.scratch / 'stop.sh'))}"


def write(top: HaTopology) -> Path:
    """The stop script and $HA_STATE; the path of the latter."""
    groups = sorted({service.process.pid for service in top.supervisor.services})
    members = " ".join(shlex.quote(str(top.data_dir(m))) for m in MEMBERS)
    script = top.scratch / "stop.sh"
    # POSIX sh (dash too): `kill -s KILL -- -PGID` kills a process group.
    script.write_text(
        "#!/bin/sh\n# Stops what `HA_KEEP=1 make ha-drill` left running, then removes it.\n"
        f"groups='{' '.join(map(str, groups))}'\n"
        "for group in $groups; do kill -s KILL -- -$group 2>/dev/null; done\n"
        f"for data in {members}; do\n"
        '  [ -f "$data/postmaster.pid" ] && kill -s KILL "$(head -1 "$data/postmaster.pid")" '
        "2>/dev/null\ndone\n"
        "# Until every group is gone (10 s at most), then the scratch folder.\n"
        "for _ in 1 2 3 4 5 6 7 8 9 10; do\n"
        "  alive=; for group in $groups; do kill -s 0 -- -$group 2>/dev/null && alive=1; done\n"
        '  [ -z "$alive" ] && break; sleep 1\n'
        "done\n"
        f"rm -rf {shlex.quote(str(top.scratch))}\n"
    )
    state = {
        "api": top.base_url(),
        "ca_file": str(top.cert),
        "dimension": "demo",
        "profile": "wm-mem-016@1.0.0",
        "tokens": top.demo["tokens"],
        "app_servers": [f"http://127.0.0.1:{top.ports[name]}" for name in SERVERS],
        "patroni": [top.rest(member) for member in MEMBERS],
        "postgres": [
            {"name": m, "host": "127.0.0.1", "port": top.ports[m], "data_dir": str(top.data_dir(m))}
            for m in MEMBERS
        ],
        "etcd": top.etcd_urls(),
        "stop": stop_command(top),
    }
    path = Path(os.environ.get("HA_STATE") or DEFAULT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    return path


__all__ = ["ETCD", "versions", "write"]
