"""An nftables script run through libnftables in a namespace (twin.host.nftables): the table lands in
that namespace only, is replaced whole when run again, and a script nft refuses is an error carrying
nft's own message, with nothing applied."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from labtools import unique

from twin.host import nftables
from twin.switch.access.mgmt_nft import TABLE, rules

pytestmark = pytest.mark.skipif(not nftables.available(), reason=f"{nftables.LIBRARY} is not installed")


def _tables(netns: str | None) -> str:
    argv = ["nft", "list", "tables"]
    if netns is not None:
        argv = ["ip", "netns", "exec", netns, *argv]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def _ruleset(netns: str) -> str:
    return subprocess.run(["ip", "netns", "exec", netns, "nft", "list", "table", "inet", TABLE],
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def two_netns() -> Iterator[tuple[str, str]]:
    names = (unique("tw-nft-"), unique("tw-nft-"))
    for name in names:
        subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield names
    finally:
        for name in names:
            subprocess.run(["ip", "netns", "delete", name], check=False)


def test_the_management_table_lands_in_the_namespace_only_and_is_replaced_whole(
        two_netns: tuple[str, str]) -> None:
    ns, other = two_netns
    host_before = _tables(None)
    nftables.run_in(ns, rules([50051, 22]))
    assert f"table inet {TABLE}" in _tables(ns)
    assert f"table inet {TABLE}" not in _tables(other)
    assert _tables(None) == host_before
    assert "50051" in _ruleset(ns) and "8080" not in _ruleset(ns)
    nftables.run_in(ns, rules([8080]))   # an agent restarted with another port: the table replaced
    assert "8080" in _ruleset(ns) and "50051" not in _ruleset(ns)


def test_a_script_nft_refuses_is_an_error_with_nft_s_message_and_nothing_applied(
        two_netns: tuple[str, str]) -> None:
    ns, _ = two_netns
    bad = rules([50051]).replace("policy accept;", "policy acept;", 1)
    with pytest.raises(nftables.NftError, match="syntax error"):
        nftables.run_in(ns, bad)
    assert TABLE not in _tables(ns)


def test_a_namespace_that_is_gone_is_an_error() -> None:
    with pytest.raises(OSError):
        nftables.run_in(unique("tw-nft-gone-"), rules([50051]))
