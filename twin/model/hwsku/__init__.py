"""Hardware SKUs: each SONiC hwsku's front-panel ports as its port_config.ini declares them.

One data file per SKU (`data/<hwsku>.json`): the platform folder it lives in on a SONiC image,
the file it was read from, and every port with SONiC's columns (name, lanes, alias, index, speed,
fec). The plan numbers a switch's ports by their position in this list, so port names, lanes and
aliases in generated configs are exactly those of the declared SKU.
"""

from __future__ import annotations

import json
from functools import cache, cached_property
from importlib import resources

from pydantic import BaseModel, ConfigDict


class SkuPort(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    lanes: str
    alias: str
    index: str
    speed: str
    fec: str | None = None


class SkuBuffers(BaseModel):
    """The SKU's lossless buffer defaults, as its buffers_defaults_*.j2 and pg_profile_lookup.ini give
    them: BUFFER_POOL and BUFFER_PROFILE rows, and the lossless PG profile buffermgrd derives for
    the SKU's port speed at `cable_length`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    cable_length: str
    pools: dict[str, dict[str, str]]
    profiles: dict[str, dict[str, str]]
    pg_lossless: dict[str, str]


class Sku(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hwsku: str
    platform: str
    source: str
    buffers: SkuBuffers | None = None
    ports: list[SkuPort]

    @property
    def port_count(self) -> int:
        return len(self.ports)

    @property
    def speed(self) -> int:
        """The front-panel speed: that of the first port."""
        return int(self.ports[0].speed)

    @property
    def fabric_ports(self) -> int:
        """Ports at the front-panel speed (a SKU's extra 10G management-side ports are not fabric ports)."""
        return sum(1 for p in self.ports if int(p.speed) == self.speed)

    def port(self, number: int) -> SkuPort:
        """The `number`-th front-panel port (0-based, in port_config.ini order)."""
        return self.ports[number]

    def number(self, name: str) -> int | None:
        """Position of port `name` in the SKU, or None when the SKU has no such port."""
        return self._numbers.get(name)

    @cached_property
    def _numbers(self) -> dict[str, int]:
        return {p.name: i for i, p in enumerate(self.ports)}

    def by_name(self, name: str) -> SkuPort | None:
        n = self.number(name)
        return None if n is None else self.ports[n]


def names() -> list[str]:
    """Every SKU twin ships data for."""
    folder = resources.files(__package__) / "data"
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


@cache
def load(hwsku: str) -> Sku:
    """The SKU named `hwsku`; KeyError when twin has no data for it."""
    if hwsku not in names():
        raise KeyError(hwsku)
    text = (resources.files(__package__) / "data" / f"{hwsku}.json").read_text()
    return Sku.model_validate(json.loads(text))
