"""grounding.project.startup: what start-up loaded is kept out of the collector, and
garbage made later is still collected."""

from __future__ import annotations

import gc
import weakref


def test_start_up_objects_are_frozen_and_later_garbage_is_still_collected():
    # grounding's ready() froze what start-up loaded (tens of thousands of objects).
    assert gc.get_freeze_count() > 10_000

    class Node:
        pass

    node = Node()
    node.self = node  # a cycle: only the collector frees it
    gone = weakref.ref(node)
    del node
    gc.collect()
    assert gone() is None
