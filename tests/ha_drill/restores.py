"""Point-in-time restores with pgBackRest into scratch clusters of their own, after
the other drills (the repository then holds a backup on timeline 1 and WAL across
two leader changes):

- to the latest point: `verify_log --checkpoint` against the last checkpoint the live
  log signed, kept in a file outside the database, says OK;
- to a point before three disposals: the text is back in the restored database;
  given the later checkpoint (and the consistency proof from the live API)
  `verify_log` says BEHIND by N leaves (exit 3; 4 without the proof), never OK and
  never REWRITTEN; an app server on it is unready (`disposals: pending`) until
  `reapply_disposals` has applied the journal's disposals again; then no disposed
  text is readable, in the database or through the API."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import subprocess
import sys
import time
import uuid
from datetime import UTC
from pathlib import Path

import requests

from tests.ha_drill.cluster import HaTopology
from tests.prod_smoke.checks import expect
from tests.prod_smoke.databases import APP_USER, DATABASE
from tests.prod_smoke.observe import BASE_PAYLOAD
from tests.prod_smoke.procs import wait_until
from tests.prod_smoke.run import Steps
from tests.prod_smoke.web import PROJECT

FIXTURE = PROJECT / "tests" / "evidence" / "fixtures" / "extract.json"
DISPOSED = 3
TEXT_ROWS = (
    "SELECT (SELECT count(*) FROM evidence_content WHERE text LIKE %(m)s) "
    "+ (SELECT count(*) FROM evidence_passage WHERE title LIKE %(m)s)"
)


def wsp_extract(text: str, url: str) -> dict:
    """A WSP extract response (the evidence tests' fixture) carrying `text`."""
    document = json.loads(FIXTURE.read_text(encoding="utf-8"))
    run = uuid.uuid4().hex[:12]
    document["execution_id"], document["request_id"] = f"exec-{run}", f"req-{run}"
    observation, result = document["observations"][0], document["results"][0]
    for place in (observation["url"], result["url"]):
        place["observed"] = place["canonical"] = url
    observation["text"] = text
    observation["title"] = text.split(" crossed")[0]
    projected = result["text"]
    projected["text"], projected["text_sha256"] = text, hashlib.sha256(text.encode()).hexdigest()
    projected["segments"] = [{"start": 0, "end": len(text), "text": text}]
    return document


class Restores:
    def __init__(self, top: HaTopology, drill, step: Steps) -> None:
        self.top, self.drill, self.step = top, drill, step
        self.mark = f"HAQ{uuid.uuid4().hex[:6].upper()}"
        self.kept = top.scratch / "kept-outside"  # what an operator keeps off the database
        self.kept.mkdir()
        self.session = requests.Session()
        self.verify = str(top.cert)

    def call(self, role: str, method: str, path: str, expected: int, **kwargs) -> dict:
        """One request as a careful client sends it: a write with an Idempotency-Key,
        sent again (same key) on a 503, as its Retry-After says."""
        headers = {
            "Authorization": f"Token {self.top.demo['tokens'][role]}",
            "Idempotency-Key": f"ha-restore-{uuid.uuid4().hex}",
            **kwargs.pop("headers", {}),
        }
        for _ in range(10):
            answer = self.session.request(
                method, self.top.base_url() + path, verify=self.verify, timeout=30,
                headers=headers, **kwargs,
            )  # fmt: skip
            if answer.status_code != 503:
                break
            time.sleep(int(answer.headers.get("Retry-After", "1")))
        expect(
            answer.status_code == expected,
            f"{method} {path}: {answer.status_code} (expected {expected}) {answer.text[:300]}",
        )
        return answer.json()

    def leader_sql(self, query: str, params=None):
        with self.top.connect("primary") as conn:
            return conn.execute(query, params).fetchone()

    def integrated(self) -> int:
        """Wait until the sequencer has integrated every write; the log's size."""

        def done() -> int | None:
            pending, size = self.leader_sql(
                "SELECT (SELECT count(*) FROM transparency_pendingwrite), (SELECT l.size FROM "
                "transparency_log l JOIN policies_dimension d ON d.id = l.dimension_id "
                "WHERE d.name = 'demo')"
            )
            return size if pending == 0 else None

        return wait_until("the log integrated every write", done, timeout=60, interval=0.3)

    def served(self) -> str | None:
        """The checkpoint the API serves, once it is of the log's size."""
        note = self.session.get(
            f"{self.top.base_url()}/api/v1/log/checkpoint?dimension=demo",
            headers={"Authorization": f"Token {self.top.demo['tokens']['curator']}"},
            verify=self.verify,
            timeout=10,
        ).text
        return note if note.split("\n")[1:2] == [str(self.size)] else None

    # -- before the restores -----------------------------------------------------------
    def prepare(self) -> None:
        """Three links bound to passages carrying text; the restore point; the three
        disposed; the live log's last checkpoint kept; the WAL archived."""
        self.links = []
        for n in range(DISPOSED):
            text = f"The ferry {self.mark}{n} crossed the strait at dawn."
            imported = self.call(
                "curator",
                "POST",
                "/api/v1/evidence/wsp-imports/?dimension=demo",
                201,
                json=wsp_extract(text, f"https://example.org/ferry-{self.mark}-{n}"),
            )
            payload = copy.deepcopy(BASE_PAYLOAD)
            payload["statement"]["statement_ref"] = f"urn:answer:ha-{uuid.uuid4().hex[:12]}#s1"
            payload["passage"] = {"passage_id": imported["passages"][0]["passage_id"]}
            payload["anchor"]["source_selector"] = {
                "type": "TextQuoteSelector",
                "exact": f"ferry {self.mark}{n} crossed",
                "prefix": "The ",
                "suffix": " the",
            }
            link = self.call("curator", "POST", "/api/v1/groundings/", 201, json=payload)
            self.links.append(link["grounding_id"])
        size = self.integrated()
        (self.target,) = self.leader_sql("SELECT clock_timestamp()")
        rows = self.leader_sql(TEXT_ROWS, {"m": f"%{self.mark}%"})[0]
        print(
            f"   {DISPOSED} links on passages with text {self.mark}…: {rows} rows hold it; "
            f"log of {size} leaves; restore point {self.target.isoformat()}"
        )
        wait_until(
            "the leader's clock past the restore point",
            lambda: self.leader_sql("SELECT clock_timestamp() > %s", (self.target,))[0],
            timeout=10,
        )
        for grounding_id in self.links:
            self.call(
                "access_steward",
                "POST",
                f"/api/v1/groundings/{grounding_id}/disposal/",
                201,
                headers={"If-Match": '"1"'},
                json={"receipt_ref": "urn:receipt:ha-drill", "policy_ref": "urn:policy:r"},
            )
        self.size = self.integrated()
        expect(
            self.leader_sql(TEXT_ROWS, {"m": f"%{self.mark}%"})[0] == 0,
            "the disposed text is still in the live database",
        )
        # The last checkpoint the live log signed, as a client keeps it: from the API.
        note = wait_until("the served checkpoint covering the disposals", self.served, timeout=30)
        self.checkpoint = self.kept / "latest-checkpoint.txt"
        self.checkpoint.write_text(note, encoding="utf-8")
        journal = Path(self.top.app_env()["GROUNDING_DISPOSAL_JOURNAL"])
        journaled = len(journal.read_text().splitlines()) if journal.exists() else 0
        leader = self.top.leader()
        started = time.monotonic()
        self.top.archive_now(leader)
        print(
            f"   disposed all {DISPOSED}; the live log signed {self.size} leaves "
            f"(kept in {self.checkpoint.name}); journal {journal.name}: {journaled} lines; "
            f"WAL switched and archived from {leader} in "
            f"{time.monotonic() - started:.1f} s"
        )

    # -- the restores ------------------------------------------------------------------
    def restored(self, name: str, *target: str) -> dict[str, str]:
        started = time.monotonic()
        data = self.top.restore(name, *target)
        restored_at = time.monotonic() - started
        self.top.start_restored(name, data, self.top.ports[name])
        print(
            f"   pgbackrest restore {' '.join(target) or '(latest)'}: {restored_at:.1f} s; "
            f"recovered and promoted in {time.monotonic() - started - restored_at:.1f} s"
        )
        env = self.top.direct_env(name)
        env["DATABASE_URL"] = f"postgres://{APP_USER}@127.0.0.1:{self.top.ports[name]}/{DATABASE}"
        return env

    def verify_log(self, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", "verify_log", "--dimension", "demo", *args],
            env=env,
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=180,
        )

    def latest(self) -> None:
        env = self.restored("restore-latest")
        result = self.verify_log(env, "--checkpoint", str(self.checkpoint))
        lines = result.stdout.strip().splitlines()
        print(
            f"   verify_log --checkpoint {self.checkpoint.name}: exit {result.returncode}: "
            f"{' / '.join(lines)}"
        )
        expect(
            result.returncode == 0 and lines[-1] == "OK",
            f"the latest restore does not verify: {result.stdout}{result.stderr}",
        )
        with self.top.connect("restore-latest") as conn:
            rows = conn.execute(TEXT_ROWS, {"m": f"%{self.mark}%"}).fetchone()[0]
        expect(rows == 0, f"the latest restore holds disposed text ({rows} rows)")
        self.top.supervisor.stop(self.top.services.pop("restore-latest"))

    def before_disposals(self) -> None:
        env = self.restored(
            "restore-before",
            "--type=time",
            # pgBackRest's time format: YYYY-MM-DD HH:MM:SS.ffffff+00.
            f"--target={self.target.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S.%f+00')}",
            "--target-action=promote",
        )
        with self.top.connect("restore-before") as conn:
            rows = conn.execute(TEXT_ROWS, {"m": f"%{self.mark}%"}).fetchone()[0]
            (size,) = conn.execute(
                "SELECT l.size FROM transparency_log l JOIN policies_dimension d ON "
                "d.id = l.dimension_id WHERE d.name = 'demo'"
            ).fetchone()
        print(
            f"   restored to before the disposals: the log holds {size} leaves, {rows} rows "
            f"hold the disposed text"
        )
        expect(rows > 0, "the restore point is not before the disposals")
        self.behind(env, size)
        self.reapplied(env)

    def behind(self, env: dict[str, str], size: int) -> None:
        proof = self.call(
            "curator",
            "GET",
            f"/api/v1/log/proof/consistency?dimension=demo&first={size}&second={self.size}",
            200,
        )
        proof_file = self.kept / "consistency-proof.json"
        proof_file.write_text(json.dumps(proof), encoding="utf-8")
        unproved = self.verify_log(env, "--checkpoint", str(self.checkpoint))
        proved = self.verify_log(
            env, "--checkpoint", str(self.checkpoint), "--consistency-proof", str(proof_file)
        )
        behind = self.size - size
        for label, result, code in (("", unproved, 4), (" --consistency-proof", proved, 3)):
            last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
            print(f"   verify_log --checkpoint{label}: exit {result.returncode}: {last[:160]}")
            expect(
                result.returncode == code
                and last.startswith(f"BEHIND by {behind} leaves")
                and "REWRITTEN" not in result.stdout,
                f"verify_log on the earlier restore: {result.stdout}{result.stderr}",
            )
        self.drill.figure(
            "restore before the disposals: verify_log",
            f"BEHIND by {behind} leaves (exit 3 with the proof, 4 without)",
        )

    def reapplied(self, env: dict[str, str]) -> None:
        top = self.top
        journal = top.scratch / "restore-before" / "disposals.jsonl"
        shutil.copy(Path(top.app_env()["GROUNDING_DISPOSAL_JOURNAL"]), journal)
        env["GROUNDING_DISPOSAL_JOURNAL"] = str(journal)
        top.start_app_server("web-restored", workers=1, env=env)
        url = f"http://127.0.0.1:{top.ports['web-restored']}"
        before = requests.get(f"{url}/readyz", timeout=10)
        print(
            f"   an app server on it before reapplying: /readyz {before.status_code} "
            f"{before.json()}"
        )
        expect(
            before.status_code == 503 and before.json()["checks"].get("disposals") == "pending",
            "the restored registry would serve before the disposals are applied again",
        )
        started = time.monotonic()
        result = top.manage("reapply_disposals", "--journal", str(journal), env=env)
        print(f"   reapply_disposals ({time.monotonic() - started:.1f} s): {result.stdout.strip()}")
        ready = wait_until(
            "the restored registry ready",
            lambda: (lambda r: r if r.status_code == 200 else None)(
                requests.get(f"{url}/readyz", timeout=10)
            ),
            timeout=30,
        )
        print(f"   then /readyz {ready.status_code} {ready.json()}")
        with top.connect("restore-before") as conn:
            rows = conn.execute(TEXT_ROWS, {"m": f"%{self.mark}%"}).fetchone()[0]
        headers = {
            "Authorization": f"Token {top.demo['tokens']['curator']}",
            "X-Forwarded-Proto": "https",
        }
        reads = [
            requests.get(f"{url}/api/v1/groundings/{g}/", headers=headers, timeout=10)
            for g in self.links
        ]
        shown = [r.status_code for r in reads]
        states = [r.json().get("record_state") for r in reads]
        leaked = [r.text for r in reads if self.mark in r.text]
        print(
            f"   after: {rows} rows hold the text; the links read {shown}, record_state "
            f"{states}; the text in {len(leaked)} answers"
        )
        expect(
            rows == 0 and not leaked and states == ["disposed"] * DISPOSED,
            f"disposed text readable after the restore: {rows} rows; {leaked[:1]}",
        )


def run_all(top: HaTopology, drill, step: Steps) -> None:
    restores = Restores(top, drill, step)
    step("point-in-time restore: links with text, a restore point, three disposals")
    restores.prepare()
    step("restore to the latest point (pgBackRest) into a scratch cluster; verify_log")
    restores.latest()
    step("restore to before the disposals; verify_log; the disposals applied again")
    restores.before_disposals()
