"""Every CONFIG_DB table and field SONiC's routing stack reads, and whether twin emulates it.

The list (twin/model/data/routing_surface.json) is generated from SONiC's own code by
scripts/routing_surface.py: the tables frrcfgd subscribes to with the fields it translates, the
tables bgpcfgd's managers subscribe to, and the routing tables SONiC's swss config managers program
into the kernel. Each entry is emulated (with the test that proves it) or not emulated (with the
reason). Which reader applies is the config's: frrcfgd when DEVICE_METADATA says
frr_mgmt_framework_config "true", bgpcfgd otherwise; swss's always.

`not_emulated(config)` names what a config holds that SONiC would act on and twin does not: the
agent logs it, `twin validate` reports it and `twin verify`, `ci` and `rehearse` fail on it, unless
the lab file accepts the table by name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Reader = Literal["frrcfgd", "bgpcfgd", "swss"]


class SurfaceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    reader: Reader
    table: str
    field: str                       # "*": the table as a whole
    status: Literal["emulated", "not emulated"]
    test: str | None = None          # what proves it is emulated
    reason: str | None = None        # why it is not
    note: str | None = None
    example: dict[str, Any] | None = None   # {key, value}: set on twin's own config, it must change FRR's


class Surface(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    commit: str
    read: list[str]
    entries: list[SurfaceEntry]


@cache
def surface() -> Surface:
    text = resources.files("twin.model").joinpath("data/routing_surface.json").read_text()
    return Surface.model_validate(json.loads(text))


@dataclass(frozen=True)
class NotEmulated:
    table: str
    key: str
    field: str        # "*": the whole entry
    reason: str

    def __str__(self) -> str:
        where = f"{self.table}|{self.key}" + ("" if self.field == "*" else f" {self.field}")
        return f"{where}: not emulated ({self.reason})"


def readers(config: Mapping[str, Mapping[str, Any]]) -> tuple[Reader, ...]:
    meta = config.get("DEVICE_METADATA", {}).get("localhost", {})
    frrcfgd = str(meta.get("frr_mgmt_framework_config", "")).lower() == "true"
    return ("frrcfgd" if frrcfgd else "bgpcfgd", "swss")


def not_emulated(config: Mapping[str, Mapping[str, Any]], accepted: Iterable[str] = ()) -> list[NotEmulated]:
    """What `config` holds that SONiC's routing stack reads and twin does not emulate, entry by entry;
    tables in `accepted` left out."""
    active = readers(config)
    skip = set(accepted)
    by_table: dict[str, list[SurfaceEntry]] = {}
    for entry in surface().entries:
        if entry.reader in active:
            by_table.setdefault(entry.table, []).append(entry)
    out: list[NotEmulated] = []
    for table in sorted(set(config) & set(by_table) - skip):
        entries = by_table[table]
        whole = [e for e in entries if e.field == "*"]
        emulated_somehow = any(e.status == "emulated" for e in entries)
        fields = {e.field: e for e in entries if e.field != "*" and e.status == "not emulated"}
        for key, row in sorted(config[table].items()):
            if not emulated_somehow:
                reason = next((e.reason for e in whole + entries if e.reason), None) or "not emulated"
                out.append(NotEmulated(table, key, "*", reason))
                continue
            for name in sorted(row if isinstance(row, Mapping) else {}):
                if name in fields:
                    out.append(NotEmulated(table, key, name, fields[name].reason or "not emulated"))
    return out
