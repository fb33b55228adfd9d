"""A node's sysctls are written from a thread inside its namespace (twin.host.shell.sysctl): the
namespace's values change, the host's and another namespace's do not, and a bad name is an error
that names the namespace and the setting."""

from __future__ import annotations

import subprocess

import pytest

from twin.host.shell import sysctl
from twin.model.errors import RuntimeBackendError

KEYS = ("net.ipv4.ip_forward", "net.ipv4.fib_multipath_hash_policy", "net.ipv4.conf.all.rp_filter")


def _read(netns: str | None, key: str) -> str:
    argv = ["sysctl", "-n", key]
    if netns is not None:
        argv = ["ip", "netns", "exec", netns, *argv]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def test_sysctls_land_in_the_namespace_only(two_netns: tuple[str, str]) -> None:
    ns, other = two_netns
    host = {k: _read(None, k) for k in KEYS}
    before = {k: _read(other, k) for k in KEYS}
    want = {"net.ipv4.ip_forward": "1", "net.ipv4.fib_multipath_hash_policy": "3",
            "net.ipv4.conf.all.rp_filter": "2"}
    assert any(before[k] != v for k, v in want.items())   # the test would see no write otherwise
    sysctl(ns, want)
    assert {k: _read(ns, k) for k in KEYS} == want
    assert {k: _read(other, k) for k in KEYS} == before
    assert {k: _read(None, k) for k in KEYS} == host


def test_a_setting_the_kernel_lacks_is_an_error_naming_it(two_netns: tuple[str, str]) -> None:
    ns, _ = two_netns
    with pytest.raises(RuntimeBackendError, match=rf"sysctl in {ns}: net\.ipv4\.no_such_setting=1 failed"):
        sysctl(ns, {"net.ipv4.no_such_setting": "1"})
    with pytest.raises(RuntimeBackendError, match=r"sysctl in tw-sysctl-absent: .*failed"):
        sysctl("tw-sysctl-absent", {"net.ipv4.ip_forward": "1"})
