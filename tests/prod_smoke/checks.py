"""The checks of issue 19, each printing its figures; a failed one raises SmokeFailure."""

from __future__ import annotations

import re
import time
from collections import Counter

import requests

from tests.prod_smoke.databases import POOL_SIZE
from tests.prod_smoke.observe import Client, register_payload, show
from tests.prod_smoke.procs import SmokeFailure, wait_until
from tests.prod_smoke.topology import SERVERS, Topology

LINK_TABLE = "grounding_groundinglink"


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise SmokeFailure(message)


def migrations_ran_once(top: Topology, applied_output: str) -> None:
    with top.connect("primary") as conn:
        total, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT (app, name)) FROM django_migrations"
        ).fetchone()
    on_disk = applied_output.count("  Applying ")
    with top.connect("replica") as conn:
        (replicated,) = conn.execute("SELECT count(*) FROM django_migrations").fetchone()
    print(
        f"   migrate applied {on_disk} migrations on the primary; django_migrations rows "
        f"{total} (distinct {distinct}); on the replica by replication: {replicated}"
    )
    expect(total == distinct == on_disk, "a migration was recorded twice or not at all")
    check = top.manage("migrate", "--check")
    expect(check.returncode == 0, "the app servers' settings see unapplied migrations")
    print("   `migrate --check` with the app servers' settings (via PgBouncer): nothing to apply")


def readiness(top: Topology) -> None:
    for name in SERVERS:
        url = f"http://127.0.0.1:{top.ports[name]}/readyz"
        body = requests.get(url, timeout=5).json()
        print(f"   {name} /readyz (direct, plain HTTP): {body}")
        expect(
            body
            == {
                "status": "ok",
                "checks": dict.fromkeys(("database", "migrations", "replica"), "ok"),
            },
            f"{name} is not ready with its replica",
        )
    answer = requests.get(f"{top.base_url()}/readyz", verify=top.cert, timeout=5)
    print(f"   /readyz through nginx: {answer.status_code} {answer.json()}")
    expect(answer.json()["checks"].get("replica") == "ok", "/readyz does not report the replica")


def tls_and_proxy_headers(top: Topology, client: Client) -> None:
    answer = client.call("GET", "/api/v1/", expect=200)
    show("GET /api/v1/ over HTTPS", answer, databases=False)
    headers = answer.headers
    expect("max-age=31536000" in headers.get("Strict-Transport-Security", ""), "no HSTS")
    expect(headers.get("X-Content-Type-Options") == "nosniff", "no nosniff")
    expect(headers.get("X-Frame-Options") == "DENY", "no X-Frame-Options")
    print(f"   HSTS {headers['Strict-Transport-Security']!r}, nosniff, X-Frame-Options DENY")
    spoofed = requests.get(
        f"http://127.0.0.1:{top.ports['http']}/api/v1/",
        headers={"X-Forwarded-Proto": "https"},
        allow_redirects=False,
        timeout=5,
    )
    expect(spoofed.status_code == 301, f"plain HTTP via nginx answered {spoofed.status_code}")
    expect(spoofed.headers["Location"].startswith("https://"), "redirect is not to HTTPS")
    print(
        f"   plain HTTP via nginx with a forged X-Forwarded-Proto: {spoofed.status_code} → "
        f"{spoofed.headers['Location']} (nginx overwrites the header)"
    )
    direct = requests.get(
        f"http://127.0.0.1:{top.ports['web-a']}/api/v1/", allow_redirects=False, timeout=5
    )
    expect(direct.status_code == 301, "an app server answers plain HTTP without the proxy")
    print(f"   web-a directly over plain HTTP: {direct.status_code} (only probes are exempt)")
    login = requests.get(f"{top.base_url()}/admin/login/", verify=top.cert, timeout=10)
    cookie = login.headers.get("Set-Cookie", "")
    expect("csrftoken=" in cookie and "Secure" in cookie, f"CSRF cookie not Secure: {cookie}")
    print("   admin login over HTTPS: 200, csrftoken cookie is Secure")


def body_limits(top: Topology, client: Client) -> None:
    """nginx passes a PDF upload of up to 50 MiB on to the app (16 MiB elsewhere), and
    refuses a larger body as the app would: 413 problem+json, not its HTML page."""
    big = b"x" * (17 * 1024 * 1024)
    answer = client.call(
        "POST", "/api/v1/groundings/", data=big, headers={"Content-Type": "application/json"}
    )
    kind = answer.headers.get("Content-Type", "")
    print(f"   17 MiB JSON body: {answer.status} {kind} code={_code(answer.body)} (nginx)")
    expect(answer.status == 413 and kind.startswith("application/problem+json"),
           f"a 17 MiB body: {answer.status} {kind}")  # fmt: skip
    expect(_code(answer.body) == "payload_too_large", f"a 17 MiB body: {answer.body!r:.200}")
    upload = client.call(
        "POST",
        "/api/v1/evidence/documents/",
        files={"file": ("big.pdf", big, "application/pdf")},
        data={"source_ref": "https://smoke.example/big.pdf", "title": "big"},
    )
    kind = upload.headers.get("Content-Type", "")
    print(
        f"   17 MiB PDF upload: {upload.status} {kind} code={_code(upload.body)} "
        f"(answered by {upload.served_by})"
    )
    expect(upload.served_by in SERVERS, "nginx did not pass a 17 MiB PDF upload on to the app")
    expect(kind.startswith("application/problem+json") and _code(upload.body) == "invalid_pdf",
           f"a 17 MiB upload that is no PDF: {upload.status} {upload.body!r:.200}")  # fmt: skip


def _code(body) -> str | None:
    return body.get("code") if isinstance(body, dict) else None


def balancing(top: Topology) -> Counter:
    served = Counter()
    for _ in range(12):
        answer = requests.get(f"{top.base_url()}/healthz", verify=top.cert, timeout=5)
        served[answer.headers.get("X-Served-By", "?")] += 1
    print(f"   12 × GET /healthz through nginx: {dict(sorted(served.items()))}")
    expect(set(served) == set(SERVERS), "nginx did not balance over both app servers")
    return served


def static_files(top: Topology) -> None:
    page = requests.get(f"{top.base_url()}/admin/login/", verify=top.cert, timeout=10)
    match = re.search(r'href="(/static/admin/css/base\.([0-9a-f]{12})\.css)"', page.text)
    expect(match is not None, "the admin page does not link a hashed base.css")
    url = match.group(1)
    asset = requests.get(
        top.base_url() + url, verify=top.cert, timeout=10, headers={"Accept-Encoding": "gzip"}
    )
    expect(asset.status_code == 200, f"{url}: {asset.status_code}")
    cache = asset.headers.get("Cache-Control", "")
    expect("immutable" in cache, f"hashed file not cached as immutable: {cache}")
    print(
        f"   {url}: 200, Cache-Control {cache!r}, Content-Encoding "
        f"{asset.headers.get('Content-Encoding', 'identity')}, served-by "
        f"{asset.headers.get('X-Served-By')}"
    )


def wait_on_replica(top: Topology, grounding_id: str, revision: int, timeout: float = 15) -> float:
    started = time.monotonic()

    def caught_up():
        with top.connect("replica") as conn:
            row = conn.execute(
                f"SELECT revision FROM {LINK_TABLE} WHERE grounding_id = %s", (grounding_id,)
            ).fetchone()
        return row is not None and row[0] >= revision

    wait_until(f"link {grounding_id} rev {revision} on the replica", caught_up, timeout=timeout)
    return time.monotonic() - started


def read_your_writes_and_replica_reads(top: Topology, curator: Client) -> str:
    created = curator.call("POST", "/api/v1/groundings/", json=register_payload(), expect=201)
    link = created.body["grounding_id"]
    show("POST /api/v1/groundings/ (register)", created)
    expect(created.body["revision"] == 1 and created.headers["ETag"] == '"1"', "no rev 1")
    expect(
        created.databases["primary"] and not created.databases["replica"],
        "the write request did not stay on the primary",
    )
    print(
        '   the register response is the link as written (rev 1, ETag "1"), read on the '
        "primary: read-your-writes"
    )
    waited = wait_on_replica(top, link, 1)
    print(f"   the replica had it {waited * 1000:.0f} ms later")
    for label, path in (
        ("GET detail", f"/api/v1/groundings/{link}/"),
        ("GET list", "/api/v1/groundings/?dimension=demo"),
        ("GET revisions", f"/api/v1/groundings/{link}/revisions/"),
    ):
        answer = curator.call("GET", path, expect=200)
        show(label, answer)
        names = {name for name, _ in answer.databases["replica"]}
        expect(
            bool(names) and not answer.databases["primary"],
            f"{label} was not served by the replica alone",
        )
        expect(
            names == {answer.served_by},
            f"{label}: replica backends {names} are not those of {answer.served_by}",
        )
        print(f"      replica's last query: {answer.databases['replica'][0][1]}…")
    return link


def pooler(top: Topology) -> None:
    pools = [p for p in top.pgbouncer_show("POOLS") if p["database"] == "grounding"]
    stats = [s for s in top.pgbouncer_show("STATS") if s["database"] == "grounding"]
    config = {row["key"]: row["value"] for row in top.pgbouncer_show("CONFIG")}
    clients = [c for c in top.pgbouncer_show("CLIENTS") if c["database"] == "grounding"]
    servers = [s for s in top.pgbouncer_show("SERVERS") if s["database"] == "grounding"]
    transactions = sum(int(s["total_xact_count"]) for s in stats)
    print(
        f"   PgBouncer pool_mode={config['pool_mode']}, default_pool_size="
        f"{config['default_pool_size']}: {len(clients)} client connections from the app "
        f"servers, {len(servers)} server connections to the primary, {transactions} "
        f"transactions, {sum(int(s['total_query_count']) for s in stats)} queries"
    )
    expect(config["pool_mode"] == "transaction", "PgBouncer is not in transaction mode")
    expect(len(servers) <= POOL_SIZE and transactions > 0 and pools, "the pool was not used")
    code = (
        "from django.db import connections\n"
        "from grounding.models import GroundingLink\n"
        "d = connections['default'].settings_dict\n"
        "n = sum(1 for _ in GroundingLink.objects.using('default').iterator(chunk_size=7))\n"
        "print(d['DISABLE_SERVER_SIDE_CURSORS'], d['OPTIONS'].get('prepare_threshold', 5), n)"
    )
    out = top.manage("shell", "-c", code).stdout.split()[-3:]
    print(
        f"   app settings behind it: DISABLE_SERVER_SIDE_CURSORS={out[0]}, "
        f"prepare_threshold={out[1]}; iterator() over {out[2]} links through PgBouncer"
    )
    expect(out[:2] == ["True", "None"], "the transaction-pooling settings are not in effect")


def replica_statistics(top: Topology) -> None:
    def scans(side: str) -> int:
        with top.connect(side) as conn:
            return conn.execute(
                "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables "
                "WHERE relname = %s",
                (LINK_TABLE,),
            ).fetchone()[0]

    # Backends flush their statistics when idle, up to 10 s later (PostgreSQL 15).
    on_replica = wait_until(
        "link-table scans in the replica's statistics",
        lambda: scans("replica"),
        timeout=15,
        interval=0.5,
    )
    with top.connect("replica") as conn:
        commits, fetched = conn.execute(
            "SELECT xact_commit, tup_fetched FROM pg_stat_database WHERE datname = 'grounding'"
        ).fetchone()
    print(
        f"   replica statistics: {on_replica} scans of {LINK_TABLE}, {commits} transactions, "
        f"{fetched} tuples fetched in `grounding`; primary: {scans('primary')} scans"
    )
