"""The long-running services' wait between reconnects: exponential, capped, jittered in
its upper half, and back to the start after a reconnect."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from common.kernel.lost_connection import Backoff


@given(
    base=st.floats(min_value=0.01, max_value=5),
    cap=st.floats(min_value=0.01, max_value=60),
    seed=st.integers(),
    attempts=st.integers(min_value=1, max_value=40),
)
def test_each_wait_is_within_the_upper_half_of_its_capped_ceiling(base, cap, seed, attempts):
    backoff = Backoff(base=base, cap=cap, rng=random.Random(seed))
    for attempt in range(attempts):
        ceiling = min(cap, base * 2**attempt)
        assert ceiling / 2 <= backoff.next_wait() <= ceiling
    assert backoff.attempts == attempts


def test_the_waits_grow_to_the_cap_and_start_again_after_a_reconnect():
    backoff = Backoff(rng=random.Random(7))  # the defaults: 0.5 s, doubling, 5 s at most
    ceilings = [min(5, 0.5 * 2**n) for n in range(7)]
    waits = [backoff.next_wait() for _ in ceilings]
    assert ceilings == [0.5, 1, 2, 4, 5, 5, 5]
    assert all(c / 2 <= w <= c for w, c in zip(waits, ceilings, strict=True))
    assert len(set(waits[-3:])) == 3  # jittered: a fleet does not reconnect in step
    backoff.reset()
    assert backoff.attempts == 0 and 0.25 <= backoff.next_wait() <= 0.5
