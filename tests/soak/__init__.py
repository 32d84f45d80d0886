"""`make soak`: the soak and kill drills of issue 27 against gunicorn on PostgreSQL.

A smaller topology than `make prod-smoke`, from its parts (tests/prod_smoke): one
PostgreSQL cluster of its own on a free loopback port, two gunicorn servers
(`DJANGO_ENV=production`, 2 workers × 4 threads each) connected to it directly, the
throttle counters in PostgreSQL. Then, in order: a mixed soak (registrations, small
bulks, PATCH with If-Match, assessments, reads and lists, every write with an
Idempotency-Key and retried on a 5xx or a lost connection); the kill drill
(`pg_terminate_backend` during INSERT, COPY and COMMIT under load); one gunicorn
worker of each server SIGKILLed under load; 32 writers racing on one revision; and,
with the servers restarted under a tight write rate, a throttle burst across both.
After each, the invariants of tests/soak/invariants.py; any broken one fails the run.
Run it with `python -m tests.soak` (README "Soak and kill drills"). Not collected by
pytest; tests/ops/test_soak_invariants.py covers the checks themselves.
"""
