"""The one way twin waits for something to become true: poll a condition until it holds or a
deadline passes (tenacity's stop-after-delay and fixed wait), then say what never happened."""

from __future__ import annotations

import time
from collections.abc import Callable

from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed


def poll_until(ready: Callable[[], object], timeout: float, every: float) -> bool:
    """Call `ready` every `every` seconds until it returns something true (True), or until `timeout`
    passed (False: the caller says what that means). `ready` is called at least once; an exception it
    raises is not retried: it goes to the caller."""
    retrying = Retrying(stop=stop_after_delay(timeout), wait=wait_fixed(every),
                        retry=retry_if_result(lambda result: not result))
    try:
        retrying(ready)
    except RetryError:
        return False
    return True


def wait_until(ready: Callable[[], object], timeout: float, every: float,
               failed: Callable[[], BaseException]) -> float:
    """Call `ready` every `every` seconds until it returns something true; the seconds that took.
    Past `timeout`, raise what `failed()` makes (it may read the last state to say what is off)."""
    start = time.monotonic()
    if not poll_until(ready, timeout, every):
        raise failed() from None
    return time.monotonic() - start
