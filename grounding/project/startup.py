"""What every process of the registry does once its apps are loaded.

The modules, models, URL patterns and schemas loaded at start-up live as long as the
process. Left with the collector, each full collection walks all of them again
(docs/performance.md has the count and the cost), which a 1,000-link bulk registration
triggered several times (its instances are many young objects). `gc.freeze()` moves
them into the permanent generation, which no collection walks; what is created
later is collected as before. A collection first, so that start-up's own garbage
is freed, not kept for good. With fork (gunicorn's workers), frozen objects are
also never written by the collector, so their pages stay shared.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> int:
    """Collect start-up's garbage, then keep what survives out of later collections;
    how many objects are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
