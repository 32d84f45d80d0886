"""The benchmark's measurements, one function per step; each returns a dict of
figures for bench/results.json.

writes: bulk registration beside COPY, change fan-out. wsp: WSP import and the
COPY of its rows. serving: HTTP under gunicorn (register, floor, naive peer) and
32 writers on one revision. memory: peak RSS of a writer process. reads: list pages
at each corpus size beside the raw query, revisions/{n}. throttle: the throttle's
cost per request. transparency: the log's cost to the writes, proofs at scale, the
verifier, checkpoint lag. log_pace: the sequencer service beside two bulk writers.
feed: register with the outbox beside without, webhook delivery lag, the stream's
fan-out to idle subscribers. ha: register on a Patroni leader with synchronous
replication on and off. pdf: PDF import beside the
extraction library alone, and a server's peak RSS importing a 50 MB PDF.
"""

from bench.workloads.feed import event_feed
from bench.workloads.ha import ha_sync_commit
from bench.workloads.log_pace import log_pace
from bench.workloads.memory import peak_rss
from bench.workloads.pdf import pdf_import
from bench.workloads.reads import reads_at_scale
from bench.workloads.serving import concurrency, http_register
from bench.workloads.throttle import throttle_cost
from bench.workloads.transparency import transparency_log
from bench.workloads.writes import bulk_register, fanout
from bench.workloads.wsp import wsp_import

__all__ = [
    "bulk_register",
    "concurrency",
    "event_feed",
    "fanout",
    "ha_sync_commit",
    "http_register",
    "log_pace",
    "pdf_import",
    "peak_rss",
    "reads_at_scale",
    "throttle_cost",
    "transparency_log",
    "wsp_import",
]
