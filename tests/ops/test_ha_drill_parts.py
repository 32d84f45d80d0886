"""The parts of `make ha-drill` (tests/ha_drill) that need no running program: the
$HA_STATE it writes (API.md "Surviving a lost server" gives its shape), its stop
script, the receiver's journal, and how a fault's window is measured."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.ha_drill import state
from tests.ha_drill.cluster import MEMBERS, HaTopology
from tests.ha_drill.load import outage
from tests.ha_drill.receiver import deliveries
from tests.prod_smoke.procs import SmokeFailure, Supervisor
from tests.soak.load import Attempt, Op


def _topology(tmp_path: Path) -> HaTopology:
    (tmp_path / "logs").mkdir()
    top = HaTopology(tmp_path, Supervisor(tmp_path / "logs"),
                     {"initdb": "/usr/lib/postgresql/15/bin/initdb"}, user=None)  # fmt: skip
    top.demo = {"tokens": {"curator": "c0ffee", "steward": "5ca1ab1e"}}
    top.cert = tmp_path / "nginx" / "cert.pem"
    return top


def test_ha_state_has_the_shape_api_md_gives(tmp_path, monkeypatch):
    monkeypatch.setenv("HA_STATE", str(tmp_path / "out" / "topology.json"))
    top = _topology(tmp_path)
    path = state.write(top)
    written = json.loads(path.read_text())
    assert path == tmp_path / "out" / "topology.json"
    assert set(written) == {"api", "ca_file", "dimension", "profile", "tokens", "app_servers",
                            "patroni", "postgres", "etcd", "stop"}  # fmt: skip
    assert written["api"] == f"https://localhost:{top.ports['https']}"
    assert written["ca_file"] == str(top.cert)
    assert (written["dimension"], written["profile"]) == ("demo", "wm-mem-016@1.0.0")
    assert written["tokens"] == {"curator": "c0ffee", "steward": "5ca1ab1e"}
    assert written["app_servers"] == [
        f"http://127.0.0.1:{top.ports[n]}" for n in ("web-a", "web-b")
    ]
    assert written["patroni"] == [f"http://127.0.0.1:{top.ports[f'{m}-rest']}" for m in MEMBERS]
    assert [(p["name"], p["host"], p["port"]) for p in written["postgres"]] == [
        (m, "127.0.0.1", top.ports[m]) for m in MEMBERS
    ]
    assert all(Path(p["data_dir"]) == tmp_path / p["name"] / "data" for p in written["postgres"])
    assert len(written["etcd"]) == 3 and len(set(written["etcd"])) == 3
    assert written["stop"] == f"sh {tmp_path / 'stop.sh'}"
    # Every port is its own.
    assert len(set(top.ports.values())) == len(top.ports)


def test_the_stop_script_stops_its_process_groups_and_removes_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HA_STATE", str(tmp_path.parent / f"{tmp_path.name}-state.json"))
    top = _topology(tmp_path)
    # A process group of its own that is no child of ours (as after the drill exits):
    # the script waits until the group is gone, and a zombie of ours would linger.
    started = subprocess.run(["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!"],
                             capture_output=True, text=True, timeout=10)  # fmt: skip
    pid = int(started.stdout)
    # setsid(1) makes the group only once it runs: until then there is no group to stop.
    deadline = time.monotonic() + 10
    while os.getpgid(pid) != pid:
        assert time.monotonic() < deadline, "the process group was not made within 10 s"
        time.sleep(0.01)
    top.supervisor.services.append(SimpleNamespace(process=SimpleNamespace(pid=pid)))
    state.write(top)
    top.supervisor.detach()
    done = subprocess.run(["sh", str(tmp_path / "stop.sh")], capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert not _running(pid)
    assert not tmp_path.exists()


def _running(pid: int) -> bool:
    """Alive and not a zombie: a killed process whose parent has exited waits for the
    machine's init to reap it, and some inits (a VM's agent as PID 1) never do."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_the_receivers_journal_skips_a_half_written_last_line(tmp_path):
    journal = tmp_path / "deliveries.jsonl"
    assert deliveries(journal) == []
    journal.write_text('{"at": 1, "headers": {}, "body": "{}"}\n{"at": 2, "hea')
    assert deliveries(journal) == [{"at": 1, "headers": {}, "body": "{}"}]


def _write(answered: list[tuple[float, float, int]]) -> Op:
    op = Op("drill", "register", "k")
    op.attempts = [Attempt("r", status, sent_at=sent, answered_at=at)
                   for sent, at, status in answered]  # fmt: skip
    return op


def test_the_window_is_the_longest_time_without_an_acknowledged_write_from_the_fault_on():
    ops = [
        _write([(0.0, 1.0, 201)]),
        _write([(1.5, 2.0, 201)]),  # the last acknowledgement before the fault at 2.5
        _write([(2.4, 3.0, 503), (3.1, 9.0, 201)]),  # waited, then acknowledged
        _write([(8.0, 9.5, 201)]),
        _write([(9.6, 9.7, 201)]),
    ]
    assert outage(ops, 2.5) == pytest.approx((7.0, -0.5, 6.5))


def test_no_acknowledgement_after_the_fault_is_a_failure():
    with pytest.raises(SmokeFailure, match="one side of the fault"):
        outage([_write([(0.0, 1.0, 201), (1.5, 3.0, 503)])], 2.0)
