"""twin.host.poll.wait_until: the one wait-until of twin."""

from __future__ import annotations

import itertools

import pytest

from twin.host.poll import wait_until
from twin.model.errors import TwinError


def test_returns_once_the_condition_holds() -> None:
    calls = itertools.count(1)
    seconds = wait_until(lambda: next(calls) >= 3, timeout=5, every=0.01, failed=lambda: TwinError("never"))
    assert next(calls) == 4 and 0.015 <= seconds < 5


def test_raises_what_failed_makes_past_the_timeout() -> None:
    seen = []

    def ready() -> bool:
        seen.append(1)
        return False

    with pytest.raises(TwinError, match=r"still off after \d+ polls"):
        wait_until(ready, timeout=0.1, every=0.02, failed=lambda: TwinError(f"still off after {len(seen)} polls"))
    assert len(seen) >= 3


def test_an_error_of_the_condition_is_not_retried() -> None:
    seen = []

    def ready() -> bool:
        seen.append(1)
        raise ValueError("broken probe")

    with pytest.raises(ValueError, match="broken probe"):
        wait_until(ready, timeout=5, every=0.01, failed=lambda: TwinError("never"))
    assert len(seen) == 1
