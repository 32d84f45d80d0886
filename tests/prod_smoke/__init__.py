"""`make prod-smoke`: the production topology started from Debian's programs on loopback.

A PostgreSQL primary and a streaming replica (`pg_basebackup`), PgBouncer in
transaction mode in front of the primary, two gunicorn app servers with
`DJANGO_ENV=production`, and nginx terminating TLS and balancing over both; then
the checks of issue 19 over HTTPS, and everything stopped again, also on failure.
Run it with `python -m tests.prod_smoke` (see README "Operating the topology").
Not collected by pytest: it starts real servers and takes about a minute.
"""
