"""`make ha-drill`: the record survives a lost server (issue 36).

On loopback, free ports, a scratch folder, from Debian's programs (apt-installed when
missing): etcd (three members), Patroni (three PostgreSQL 15 members, synchronous
replication, one YAML file each), HAProxy routing to the leader and to the
asynchronous standby by Patroni's REST checks, PgBouncer in front as in the prod
smoke, two gunicorn app servers behind nginx (TLS), the log's sequencer, two
`deliver_events` workers and a receiver, pgBackRest (local repository, continuous WAL
archive, a full backup at start). Then the drills (tests/ha_drill/drills.py,
restores.py), each printing its figures and failing the run when its guarantee
breaks. Run it with `python -m tests.ha_drill` (README "High availability and
recovery"); `HA_KEEP=1` leaves it running and writes `$HA_STATE`. Not collected by
pytest.
"""
