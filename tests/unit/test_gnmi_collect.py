"""What twin's own gNMI readers make of SONiC's tables (twin.checks.collect_gnmi)."""

from __future__ import annotations

import pytest

from twin.checks.collect_gnmi import as_fib, host_prefix


@pytest.mark.parametrize(("key", "prefix"), [
    ("10.1.4.2", "10.1.4.2/32"), ("fc00::1", "fc00::1/128"), ("10.0.0.0/31", "10.0.0.0/31"),
    ("0.0.0.0/0", "0.0.0.0/0"), ("Vrf-red:10.0.0.0/24", "Vrf-red:10.0.0.0/24"),
])
def test_route_keys_get_their_prefix_length(key: str, prefix: str) -> None:
    """fpmsyncd writes host routes as the bare address (no /32)."""
    assert host_prefix(key) == prefix


def test_fib_keeps_bgp_routes_with_their_next_hops() -> None:
    table = {"10.1.4.2": {"nexthop": "10.0.0.1,10.0.0.3", "ifname": "Ethernet0,Ethernet4", "protocol": "bgp"},
             "10.0.0.0/31": {"nexthop": "0.0.0.0", "ifname": "Ethernet0", "protocol": "kernel"}}
    assert as_fib(table) == [{"dst": "10.1.4.2/32", "nexthops": [{"gateway": "10.0.0.1"}, {"gateway": "10.0.0.3"}]}]
