"""The per-SKU port data against the facts of each SKU's port_config.ini in sonic-buildimage."""

from __future__ import annotations

import re

import pytest

from twin.model import hwsku

# hwsku: (platform, ports, front-panel speed, lanes per port, name step, first alias, fec)
FACTS = {
    "Force10-S6000": ("x86_64-kvm_x86_64-r0", 32, 40000, 4, 4, "fortyGigE0/0", None),
    "Arista-7060DX5-64S": ("x86_64-arista_7060dx5_64s", 66, 400000, 8, 8, "Ethernet1/1", "rs"),
    "Arista-7060X6-64PE-B-P64": ("x86_64-arista_7060x6_64pe_b", 64, 800000, 8, 8, "etp1", "rs"),
    "Arista-7060X6-64PE-B-O128": ("x86_64-arista_7060x6_64pe_b", 128, 400000, 4, 4, "etp1a", "rs"),
}


def test_every_shipped_sku_is_described() -> None:
    assert hwsku.names() == sorted(FACTS)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_port_rows_match_the_sku(name: str) -> None:
    platform, count, speed, lanes, step, alias, fec = FACTS[name]
    sku = hwsku.load(name)
    assert (sku.hwsku, sku.platform, sku.port_count, sku.speed) == (name, platform, count, speed)
    fabric = [p for p in sku.ports if int(p.speed) == speed]
    assert [p.name for p in fabric] == [f"Ethernet{step * i}" for i in range(len(fabric))]
    assert all(len(p.lanes.split(",")) == lanes and p.fec == fec for p in fabric)
    assert sku.ports[0].alias == alias
    every_lane = [lane for p in sku.ports for lane in p.lanes.split(",")]
    assert len(every_lane) == len(set(every_lane)), "a lane belongs to one port"
    assert all(re.fullmatch(r"[0-9]+", p.index) for p in sku.ports)
    assert sku.number(fabric[-1].name) == len(fabric) - 1 and sku.number("Ethernet9999") is None


def test_dx5_has_two_10g_ports_beyond_its_64_fabric_ports() -> None:
    sku = hwsku.load("Arista-7060DX5-64S")
    assert sku.fabric_ports == 64
    assert [(p.name, p.speed) for p in sku.ports[64:]] == [("Ethernet512", "10000"), ("Ethernet513", "10000")]


@pytest.mark.parametrize(("name", "profile"), [
    ("Arista-7060X6-64PE-B-O128", {"size": "18796", "xon": "0", "xoff": "445770", "dynamic_th": "0",
                                   "xon_offset": "3556"}),
    ("Arista-7060X6-64PE-B-P64", {"size": "8636", "xon": "0", "xoff": "724662", "dynamic_th": "0",
                                  "xon_offset": "3556"}),
    ("Force10-S6000", {"size": "56368", "xon": "18432", "xoff": "55120", "dynamic_th": "-3", "xon_offset": "2496"}),
])
def test_lossless_profile_is_the_pg_profile_lookup_row(name: str, profile: dict[str, str]) -> None:
    buffers = hwsku.load(name).buffers
    assert buffers is not None and buffers.cable_length == "5m" and buffers.pg_lossless == profile
    assert "ingress_lossless_pool" in buffers.pools
    assert {p["pool"] for p in buffers.profiles.values()} <= set(buffers.pools)


def test_dx5_has_no_buffer_defaults_in_sonic() -> None:
    assert hwsku.load("Arista-7060DX5-64S").buffers is None
