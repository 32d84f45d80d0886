"""The faults: replication paused, an app server killed and brought back. Each prints
its figures; a failed expectation raises SmokeFailure."""

from __future__ import annotations

import threading
import time
from collections import Counter

import requests

from tests.prod_smoke.checks import LINK_TABLE, expect, wait_on_replica
from tests.prod_smoke.observe import Client, register_payload, show
from tests.prod_smoke.procs import wait_until
from tests.prod_smoke.topology import SERVERS, Topology


def replication_paused(top: Topology, curator: Client, link: str) -> None:
    with top.connect("replica") as replica:
        replica.execute("SELECT pg_wal_replay_pause()")
        wait_until(
            "replay paused",
            lambda: (
                replica.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()[0] == "paused"
            ),
            timeout=10,
        )
        print("   pg_wal_replay_pause() on the replica: paused")
        try:
            first = curator.call("GET", f"/api/v1/groundings/{link}/", expect=200)
            seen = first.headers["ETag"]
            writer = curator.call(
                "PATCH",
                f"/api/v1/groundings/{link}/",
                expect=200,
                headers={"If-Match": seen},
                json={"owner_ref": "role:curator-a", "revision_reason": "writer A"},
            )
            show(f"PATCH If-Match {seen} (writer A)", writer)
            stale = curator.call("GET", f"/api/v1/groundings/{link}/", expect=200)
            show("GET detail while paused (writer B)", stale)
            lagging = curator.call("GET", "/api/v1/groundings/?dimension=demo", expect=200)
            show("GET list while paused", lagging)
            expect(
                stale.headers["ETag"] == seen and writer.headers["ETag"] == '"2"',
                "the paused replica did not serve the older revision",
            )
            behind, paused = replica.execute(
                "SELECT pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()),"
                " pg_get_wal_replay_pause_state()"
            ).fetchone()
            with top.connect("primary") as primary:
                lag = primary.execute(
                    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), state "
                    "FROM pg_stat_replication"
                ).fetchone()
            print(
                f"   replica {paused}: {behind:.0f} bytes received but not replayed; primary "
                f"sees the standby {lag[1]}, {lag[0]:.0f} bytes behind; reads answered with "
                f'ETag {stale.headers["ETag"]} while the primary is at "2"'
            )
            expect(
                writer.body["revision"] == 2 and writer.body["owner_ref"] == "role:curator-a",
                "the write response did not show the write",
            )
            print(
                "   read-your-writes under lag: writer A's PATCH answered rev 2 with its change, "
                "read on the primary, while the replica still had rev 1"
            )
            refused = curator.call(
                "PATCH",
                f"/api/v1/groundings/{link}/",
                headers={"If-Match": stale.headers["ETag"]},
                json={
                    "support": {
                        "support_kind": "paraphrase",
                        "support_scope": {"covers": "opening year"},
                        "use_basis": "post_generation",
                    },
                    "revision_reason": "writer B",
                },
            )
            show(f"PATCH If-Match {stale.headers['ETag']} (writer B, stale)", refused)
            expect(
                refused.status == 412
                and refused.body.get("code") == "revision_mismatch"
                and refused.body.get("current_revision") == 2,
                f"a stale If-Match was not refused with the current revision: {refused.body}",
            )
            print(
                f"   412 {refused.body['code']}, current_revision "
                f"{refused.body['current_revision']}"
            )
            retried = curator.call(
                "PATCH",
                f"/api/v1/groundings/{link}/",
                expect=200,
                headers={"If-Match": f'"{refused.body["current_revision"]}"'},
                json={
                    "support": {
                        "support_kind": "paraphrase",
                        "support_scope": {"covers": "opening year"},
                        "use_basis": "post_generation",
                    },
                    "revision_reason": "writer B",
                },
            )
            show('PATCH If-Match "2" (writer B, retried)', retried)
        finally:
            replica.execute("SELECT pg_wal_replay_resume()")
    waited = wait_on_replica(top, link, 3)
    print(f"   pg_wal_replay_resume(): the replica caught up to rev 3 in {waited * 1000:.0f} ms")
    final = curator.call("GET", f"/api/v1/groundings/{link}/", expect=200)
    revisions = curator.call("GET", f"/api/v1/groundings/{link}/revisions/", expect=200)
    show("GET detail after resume", final)
    results = revisions.body["results"] if isinstance(revisions.body, dict) else revisions.body
    expect(
        final.body["owner_ref"] == "role:curator-a"
        and final.body["support"]["support_kind"] == "paraphrase"
        and final.headers["ETag"] == '"3"'
        and len(results) == 3,
        f"an update was lost: {final.body.get('owner_ref')}, {final.body.get('support')}",
    )
    print(
        f"   no update lost: rev 3 keeps writer A's owner_ref and writer B's support; "
        f"{len(results)} revisions"
    )


def app_server_killed(top: Topology, curator_token: str) -> None:
    # Writers go on until enough writes were sent well after the kill (half a second:
    # nginx has marked web-a down by then), however fast the writes are.
    threads, kill_after, after_wanted, most = 4, 25, 24, 1000
    outcomes: list[tuple[str, int, str, float]] = []
    lock = threading.Lock()
    killed_at: list[float] = []
    enough = threading.Event()
    done = threading.Event()

    def writer(index: int) -> None:
        session = requests.Session()
        session.headers["Authorization"] = f"Token {curator_token}"
        for n in range(most):
            if done.is_set():
                break
            owner = f"role:smoke-kill-{index}-{n}"
            started = time.monotonic()
            try:
                response = session.post(
                    f"{top.base_url()}/api/v1/groundings/",
                    json=register_payload(owner),
                    timeout=30,
                    verify=str(top.cert),
                )
                status, server = response.status_code, response.headers.get("X-Served-By", "-")
            except requests.RequestException:
                status, server = 0, "-"
            with lock:
                outcomes.append((owner, status, server, started))
                if len(outcomes) >= kill_after:
                    enough.set()
                if killed_at and after_wanted <= sum(
                    1 for *_, t in outcomes if t >= killed_at[0] + 0.5
                ):
                    done.set()

    workers = [threading.Thread(target=writer, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    enough.wait(timeout=60)
    top.supervisor.kill(top.services["web-a"])
    with lock:
        killed_at.append(time.monotonic())
    print(f"   SIGKILL to web-a's process group after {kill_after} answered writes")
    for worker in workers:
        worker.join(timeout=120)
    expect(not any(worker.is_alive() for worker in workers), "writers did not finish")

    before = Counter(s for _, st, s, t in outcomes if t < killed_at[0])
    after = Counter(s for _, st, s, t in outcomes if t >= killed_at[0] + 0.5)
    statuses = Counter(status for _, status, _, _ in outcomes)
    accepted = {owner for owner, status, _, _ in outcomes if status == 201}
    with top.connect("primary") as conn:
        stored = {
            row[0]
            for row in conn.execute(
                f"SELECT owner_ref FROM {LINK_TABLE} WHERE owner_ref LIKE 'role:smoke-kill-%%'"
            )
        }
    lost = accepted - stored
    unanswered = [o for o, status, _, _ in outcomes if status != 201]
    committed_anyway = [o for o in unanswered if o in stored]
    print(
        f"   {len(outcomes)} writes: statuses {dict(sorted(statuses.items()))}; "
        f"answered by, for writes sent before the kill {dict(before)}, after it "
        f"{dict(after)} ('-': a 502 from nginx, in flight on web-a)"
    )
    print(
        f"   accepted (201) {len(accepted)}, stored {len(stored)}, lost {len(lost)}; "
        f"not answered 201: {len(unanswered)} (of which committed before the kill: "
        f"{len(committed_anyway)})"
    )
    expect(not lost, f"accepted writes lost: {sorted(lost)[:5]}")
    expect(set(after) == {"web-b"}, f"after the kill traffic went to {dict(after)}")
    expect(
        len(unanswered) <= threads * 2,
        f"{len(unanswered)} writes failed: more than those in flight at the kill",
    )
    expect(stored <= {o for o, _, _, _ in outcomes}, "a write was stored twice or invented")
    health = requests.get(f"{top.base_url()}/readyz", verify=top.cert, timeout=5)
    print(
        f"   /readyz through nginx with web-a down: {health.status_code}, served-by "
        f"{health.headers.get('X-Served-By')}"
    )
    expect(health.status_code == 200, "the proxy did not keep serving")


def server_back(top: Topology) -> None:
    """The killed server restarted: nginx takes it back once its fail_timeout is over."""
    started = time.monotonic()
    top.start_app_server("web-a")

    def both_answer():
        seen = {
            requests.get(f"{top.base_url()}/healthz", verify=top.cert, timeout=5).headers.get(
                "X-Served-By"
            )
            for _ in range(4)
        }
        return seen == set(SERVERS)

    wait_until("nginx sending traffic to web-a again", both_answer, timeout=40, interval=1)
    print(
        f"   web-a restarted; nginx balances over both again "
        f"{time.monotonic() - started:.1f}s later (fail_timeout 10s)"
    )
