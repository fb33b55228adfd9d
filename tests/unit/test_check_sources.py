"""A check's data source is declared once: every source in twin.checks.base.Source has its local
reader, the gNMI readers are a subset, and a source nobody reads is an error, not a silent fallback."""

from __future__ import annotations

from typing import Any, ClassVar, get_args

import pytest

from twin.checks.base import Check, CheckInput, Source
from twin.checks.collect_gnmi import GNMI_READERS, GNMI_SOURCES
from twin.checks.collect_local import LOCAL_READERS, collect_local
from twin.model.errors import TwinError


def test_every_source_has_one_local_reader() -> None:
    assert set(LOCAL_READERS) == set(get_args(Source))


def test_gnmi_reads_only_declared_sources() -> None:
    assert set(GNMI_READERS) == GNMI_SOURCES and set(get_args(Source)) > GNMI_SOURCES


class _Unknown(Check[CheckInput]):
    name = "unknown-source"
    description = "asks for what no reader serves"
    needs: ClassVar[tuple[Any, ...]] = ("bgp_summary", "tea_leaves")

    def nodes(self) -> list[str]:
        return ["leaf1"]


def test_an_unknown_source_is_an_error_before_any_read() -> None:
    with pytest.raises(TwinError, match="tea_leaves"):
        collect_local(object(), [_Unknown(CheckInput())])  # type: ignore[arg-type]
