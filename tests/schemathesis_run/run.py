"""schemathesis `--checks all` for every role, as a client team would run it (issue 26,
item 5): the `st` program against gunicorn on a free loopback port, over a scratch
database seeded by `seed_demo` (a Dimension, a published profile, one user and token
per role, demo links), once per role: curator, reviewer, steward, projection agent
and access steward.

Every phase runs (examples, coverage, fuzzing, stateful: the schema's OpenAPI links,
declared from each created resource to the operations on it (common.web.
openapi_strict.response_links) and inferred by schemathesis, carry real ids from one
call to the next), every check (`--checks all`), a fixed number of examples and
derandomized generation, so a run is bounded and the same every time. The server is
served as in production: its log signs checkpoints, webhooks take https to public
addresses only.

Configured, not dropped (schemathesis.toml, hooks.py): schema-valid data may still be
refused by the rules no JSON Schema states (an unknown reference, a stale revision, a
reused Idempotency-Key, a state conflict, where a webhook host resolves, a size
beyond the log, the structured values' cross-field rules); hooks.py's check fails any
other refusal of schema-valid data, so such a refusal must be stated in the schema or
fixed. A missing If-Match may be 428 (RFC 6585). The generator's health checks on
size and filtering are off (the register body is large by nature, its oneOf shapes
are drawn by filtering); they judge hypothesis, not the API.

    python -m tests.schemathesis_run   (make schemathesis)

Environment: SCHEMATHESIS_PROFILE (`full`, the default: every role over every
operation; `ci`: CI's subset, below), SCHEMATHESIS_EXAMPLES (examples per operation,
default 10), SCHEMATHESIS_ROLES (comma-separated, default `all`: the five), DATABASE_URL
(default: a scratch SQLite file), SCHEMATHESIS_REPORT_DIR (where each role's NDJSON report is
kept; default: the scratch directory, removed after the run),
SCHEMATHESIS_PATHS (a regular expression over the operations' paths, schemathesis'
--include-path-regex, e.g. `from-citations` or `^/api/v1/groundings/$`; default every
operation), SCHEMATHESIS_PHASES (comma-separated, schemathesis' --phases, e.g.
`examples,coverage,fuzzing` or `stateful`; default all four), SCHEMATHESIS_JOBS (roles
run at once, default 2 on the scratch SQLite file: each on its own copy of the seeded
database behind its own gunicorn; 1 on a DATABASE_URL given). Exit status 0 only when
every role's run is clean.

The CI profile (SCHEMATHESIS_PROFILE=ci, .ci/run): every role, every phase, each role
over the operations it may perform (the operation declares its role, or declares none:
reads, the log, dimensions), but for the bulk registration's coverage phase (ci.toml
says why). A full run spends most of its time in the coverage phase
generating cases (the generator, not the server: 3 s of server time in 127 s for POST
/disclosure-decisions/, 196 s for POST /evidence-sets/, 2026-12-06), and generation is
deterministic, so every role sends the same cases to an operation. A role the operation
does not admit gets, for each case, either the refusal a role it admits gets (where the
body is validated first, by rules that do not depend on the role: POST /evidence-sets/
answered the access steward 400 for 110 of 119 cases) or 403 permission_denied (POST
/evidence/wsp-imports/: 1,357 of 1,373): those duplicated refusals and those 403s are
what the CI profile leaves out. The 403s are the suite's: tests/api/
test_schemathesis.py sends generated positive and negative requests to every operation
as four roles (their answers validated against the schema, on SQLite and PostgreSQL),
tests/leaks and tests/api/test_roles_api.py pin who may do what. What only this run
has stays in CI: real gunicorn over HTTP, the examples, coverage and stateful phases
(OpenAPI links carrying real ids), hooks.py's check, and the access steward, which the
suite's test does not run as. Measured on a loaded two-core machine (2026-12-06): clean
for all five roles, 310 s of CPU in all (curator 1,294 s of wall time: coverage 1,221,
fuzzing 47, stateful 7; reviewer 72, steward 64, projection agent 27, access steward
182), where a whole run takes 261-345 s a role on a quiet machine; the curator's is the
longest, which the second lane (SCHEMATHESIS_JOBS) runs the other four beside: 293 s in
all with two lanes (the curator 279 s, the other four 181 s) at a load average of 3 to 6.
Later the same day, quiet: the curator 299 s of which its coverage phase ~250 s, the
other four 175 s; so CI's first lane runs the curator's coverage phase alone and the
second its other phases before the other four (`_shares`): the same cases, each run
on its lane's own copy of the seeded database.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
ROLES = ("curator", "reviewer", "steward", "projection_agent", "access_steward")
PHASES = ("examples", "coverage", "fuzzing", "stateful")
# Throttles out of the way: the run measures conformance, not rate limits.
RATES = "read=1000000/min,write=1000000/min,bulk=1000000/min,auth_failure=1000000/min"
_PRINTING = threading.Lock()


def _seed(env: dict[str, str]) -> dict[str, str]:
    for command in (["migrate", "--noinput", "-v0"], ["createcachetable"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=PROJECT, env=env, check=True,
            capture_output=True, timeout=300,
        )  # fmt: skip
    seeded = subprocess.run(
        [sys.executable, "manage.py", "seed_demo", "--json"], cwd=PROJECT, env=env,
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return json.loads(seeded.stdout.strip().splitlines()[-1])["tokens"]


def _operations_of(role: str) -> str:
    """schemathesis' operation names ("METHOD /path") of what `role` may perform: the
    operations declaring it, and those declaring no role (reads, the log, ...), as one
    regular expression for --include-name-regex."""
    from common.web.operations import api_routes

    names = sorted(
        f"{route.method} /" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route.pattern)
        for route in api_routes()
        if not route.operation.roles or role in route.operation.roles
    )
    return "^(" + "|".join(re.escape(name) for name in names) + ")$"


def _links_within(base: str, included: re.Pattern[str], paths: str | None) -> bool:
    """Whether an OpenAPI link of the served schema leads from an included operation to
    an included operation (what the stateful phase follows); `paths` narrows them too."""
    import requests

    def selected(name: str) -> bool:
        path = name.split(" ", 1)[1]
        return bool(included.match(name)) and (not paths or bool(re.search(paths, path)))

    document = requests.get(f"{base}/api/schema/?format=json", timeout=60).json()
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "responses" in operation
    ]
    by_id = {operation.get("operationId"): name for name, operation in operations}
    return any(
        selected(by_id.get(link.get("operationId")) or " ")
        for name, operation in operations
        if selected(name)
        for response in operation["responses"].values()
        for link in (response.get("links") or {}).values()
    )


def _config(profile: str, scratch: Path) -> Path:
    """schemathesis.toml, and for the CI profile with ci.toml's operations appended."""
    if profile != "ci":
        return HERE / "schemathesis.toml"
    config = scratch / "schemathesis-ci.toml"
    base, extra = (HERE / name for name in ("schemathesis.toml", "ci.toml"))
    config.write_text(base.read_text(encoding="utf-8") + "\n" + extra.read_text(encoding="utf-8"))
    return config


def _run_role(
    base: str, job: Job, token: str, examples: int, report: Path, config: Path,
    captured: bool = False,
) -> int:  # fmt: skip
    role = job.role
    command = [
        str(Path(sys.executable).with_name("st")),
        "--config-file", str(config),
        "run", f"{base}/api/schema/?format=json",
        "--checks", "all",
        "--header", f"Authorization: Token {token}",
        "--max-examples", str(examples),
        "--generation-deterministic",
        "--workers", "1",
        # The register body is large by nature (a link is five groups of members, each
        # of shipped schemas): hypothesis' generator health checks on size, not checks
        # of the API.
        # and a body of several shapes (oneOf: a passage, an anchor observation) is drawn
        # by filtering: filter_too_much too.
        "--suppress-health-check", "large_base_example,data_too_large,filter_too_much",
        "--no-color",
        "--report", "ndjson", "--report-ndjson-path", str(report),
    ]  # fmt: skip
    # A subset, for a run over the operations a change touched (a whole run is long).
    if paths := os.environ.get("SCHEMATHESIS_PATHS"):
        command += ["--include-path-regex", paths]
    phases = os.environ.get("SCHEMATHESIS_PHASES") or job.phases
    if os.environ.get("SCHEMATHESIS_PROFILE", "full") == "ci":
        included = _operations_of(role)
        command += ["--include-name-regex", included]
        # The PDF upload (multipart) is left to the suite's schemathesis test (four
        # roles, negative data included): here the fuzzing phase reported a `title`
        # holding no U+0000 as violating `^[^\u0000]*$` and its 201 as "schema-violating
        # request accepted" (jsonschema finds the value valid); the refusal of a NUL in a
        # form field is tests/api/test_pdf_form_fields.py. `make schemathesis` (full)
        # still runs it.
        command += ["--exclude-name", "POST /api/v1/evidence/documents/"]
        # Every role's operations hold a link (2026-12-06); where a subset holds none
        # (SCHEMATHESIS_PATHS), schemathesis fails the stateful phase: it is left out.
        wanted = (phases or ",".join(PHASES)).split(",")
        if "stateful" in wanted and not _links_within(base, re.compile(included), paths):
            phases = ",".join(p for p in wanted if p != "stateful")
    if phases:
        command += ["--phases", phases]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.schemathesis_run.hooks"}
    env["PYTHONPATH"] = str(PROJECT)
    started = time.monotonic()
    # Beside another role's run, its output is printed whole when it ends (one at a time).
    output = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT} if captured else {}
    finished = subprocess.run(
        command, cwd=PROJECT, env=env, timeout=1800, check=False, text=True, **output
    )
    with _PRINTING:
        if captured:
            print(finished.stdout, end="", flush=True)
        print(f"== {job}: exit {finished.returncode} in {time.monotonic() - started:.0f}s",
              flush=True)  # fmt: skip
    return finished.returncode


def _lanes(database: str | None, roles: list[str]) -> int:
    """How many roles run at once: SCHEMATHESIS_JOBS, by default 2 on the scratch SQLite
    database (each lane gets its own copy of the seeded file and its own gunicorn, so no
    two runs write to one SQLite file), 1 on a DATABASE_URL given (one database, as
    before). The `st` client is the busy process (generating cases, the coverage phase
    above all) and uses one core; a second lane uses the second."""
    default = "1" if database else "2"
    return max(1, min(int(os.environ.get("SCHEMATHESIS_JOBS", default)), len(roles)))


@dataclass(frozen=True)
class Job:
    """One `st` run: a role, over some phases (None: all, or SCHEMATHESIS_PHASES)."""

    role: str
    phases: str | None = None

    def __str__(self) -> str:
        return f"{self.role} ({self.phases})" if self.phases else self.role

    @property
    def name(self) -> str:
        return f"{self.role}-{self.phases.replace(',', '-')}" if self.phases else self.role


def _shares(roles: list[str], lanes: int, profile: str) -> list[list[Job]]:
    """The runs of each lane: the roles in turn; or (the CI profile, no phases named) the
    first role's coverage phase alone in the first lane, and its other phases then the
    other roles in turn over the other lanes. The curator's coverage phase is most of
    its run (2026-12-06: ~250 of 299 s; the other four roles 175 s together), so
    its other phases go beside it with the others."""
    if profile == "ci" and lanes > 1 and not os.environ.get("SCHEMATHESIS_PHASES"):
        first, others = roles[0], [Job(r) for r in roles[1:]]
        rest = Job(first, ",".join(p for p in PHASES if p != "coverage"))
        shares = [[Job(first, "coverage")]] + [others[i :: lanes - 1] for i in range(lanes - 1)]
        shares[1].insert(0, rest)
        return shares
    return [[Job(r) for r in roles[i::lanes]] for i in range(lanes)]


def _copy_sqlite(source: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if (part := Path(f"{source}{suffix}")).exists():
            shutil.copyfile(part, f"{target}{suffix}")


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding.project.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "schemathesis-only-" + "x" * 40)
    import django

    django.setup()
    from tests.ops.live import gunicorn, server_env

    examples = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "10"))
    profile = os.environ.get("SCHEMATHESIS_PROFILE", "full")
    if profile not in ("full", "ci"):
        raise SystemExit(f"SCHEMATHESIS_PROFILE={profile}: `full` or `ci`")
    wanted = os.environ.get("SCHEMATHESIS_ROLES", "all")
    roles = list(ROLES) if wanted == "all" else [r for r in wanted.split(",") if r]
    started = time.monotonic()
    given = os.environ.get("DATABASE_URL")
    lanes = _lanes(given, roles)
    with tempfile.TemporaryDirectory(prefix="grounding-schemathesis-") as scratch:
        database = given or f"sqlite:///{scratch}/served.sqlite3"
        # Served as in production: the log's checkpoints are signed (without a key the
        # log's routes cannot answer, which is a misconfiguration, not an input).
        extra = {
            "GROUNDING_THROTTLE_RATES": RATES,
            "GROUNDING_LOG_SIGNING_KEY": base64.b64encode(os.urandom(32)).decode(),
            # Webhooks as in production: https to public addresses only (.env's local
            # default also takes http and loopback, which the schema does not state).
            "GROUNDING_WEBHOOK_ALLOW_PRIVATE": "0",
        }
        tokens = _seed(server_env(database, **extra))
        config = _config(profile, Path(scratch))
        reports = Path(os.environ.get("SCHEMATHESIS_REPORT_DIR") or scratch)
        reports.mkdir(parents=True, exist_ok=True)
        failed: list[str] = []
        # Which lane runs which roles and phases, fixed (each lane's database state,
        # which the stateful phase depends on, is then the same every run): in CI the
        # curator's coverage phase (the longest) alone beside everything else.
        shares = _shares(roles, lanes, profile)

        def lane(base: str, share: list[Job]) -> None:
            for job in share:
                report = reports / f"{job.name}.ndjson"
                try:
                    status = _run_role(
                        base, job, tokens[job.role], examples, report, config, lanes > 1
                    )
                except Exception as error:  # a timeout: the run failed, not the lane
                    print(f"== {job}: {error!r}", flush=True)
                    status = 1
                if status != 0:
                    failed.append(str(job))

        with ExitStack() as servers:
            bases = []
            for number in range(lanes):
                served = database
                if lanes > 1:  # a copy of the seeded file per lane
                    copy = Path(scratch) / f"lane{number}.sqlite3"
                    _copy_sqlite(Path(scratch) / "served.sqlite3", copy)
                    served = f"sqlite:///{copy}"
                bases.append(servers.enter_context(gunicorn(served, workers=2, threads=2, **extra)))
            threads = [
                threading.Thread(target=lane, args=(base, share))
                for base, share in zip(bases, shares, strict=True)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    took = time.monotonic() - started
    runs = sum(len(share) for share in shares)
    print(f"schemathesis --checks all ({profile}): {runs - len(failed)} of {runs} runs clean "
          f"({len(roles)} roles) in {took:.0f}s ({examples} examples per operation, "
          f"{lanes} at once)", flush=True)  # fmt: skip
    if failed:
        print(f"FAILED runs: {', '.join(failed)}", flush=True)
        return 1
    return 0
