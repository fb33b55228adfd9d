"""The gNMI agent as a server a user can trust: what was found probing it with malformed Sets and
many clients (issue 14), each case ending with FRR's running config and CONFIG_DB in agreement.

- no value reaches FRR or the kernel as more than one argument (newlines refused, not run);
- numbers are ASCII digits, as FRR and YANG read them; a refused Set never touches a session;
- concurrent writers lose nothing; an IPv6 neighbor works and leaves the agent restartable;
- a 1 MB value, a lone surrogate, 16 STREAM subscriptions: clear answers, nothing blocked;
- LOOPBACK_INTERFACE deleted and added again leaves the kernel with every BGP route;
- a hypothesis fuzz of Set: on refusal nothing changes, the agent stays up, BGP stays Established.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from labtools import netns_exec, running_lab, twin, twin_json, until
from pygnmi.client import gNMIclient

pytestmark = pytest.mark.needs_root

CONFIG = "/sonic-db:CONFIG_DB/localhost/"
NODE = "leaf1"


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "gr") as name:
        yield {"name": name, "status": twin_json("status", "--name", name)}


def client(lab: dict[str, Any], node: str = NODE) -> gNMIclient:
    target = dict(next(n for n in lab["status"]["nodes"] if n["name"] == node)["gnmi"])
    return gNMIclient(**target, gnmi_timeout=20)


def rundir(lab: dict[str, Any], node: str = NODE) -> Path:
    return Path("/run/twin") / lab["name"] / "nodes" / node


def vtysh(lab: dict[str, Any], *commands: str) -> str:
    argv = ["vtysh", "--vty_socket", str(rundir(lab))]
    for command in commands:
        argv += ["-c", command]
    return netns_exec(lab["name"], NODE, *argv).stdout


def config(gc: gNMIclient) -> dict[str, Any]:
    got = gc.get(path=[CONFIG], encoding="json_ietf")
    value: dict[str, Any] = got["notification"][0]["update"][0]["val"]
    return value


def peers(lab: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per neighbor: its state and how often it came up (a reset session counts one more)."""
    out = json.loads(vtysh(lab, "show bgp neighbors json"))
    return {ip: {"state": p.get("bgpState"), "up": p.get("connectionsEstablished")} for ip, p in out.items()}


def set_field(gc: gNMIclient, path: str, value: Any) -> None:
    gc.set(update=[(CONFIG + path, json.dumps(value))], encoding="json_ietf")


def assert_frr_agrees(lab: dict[str, Any], cfg: dict[str, Any]) -> None:
    """FRR runs what CONFIG_DB says: its AS, every neighbor with its description and admin state,
    and no line CONFIG_DB did not ask for. (The `hostname` vtysh prints is vtysh's own: the host's.)"""
    running = vtysh(lab, "show running-config")
    lines = {line.strip() for line in running.splitlines()}
    assert f"router bgp {cfg['DEVICE_METADATA']['localhost']['bgp_asn']}" in lines
    for key, row in cfg["BGP_NEIGHBOR"].items():
        ip = key.split("|")[-1]
        assert f"neighbor {ip} description {row['name']}" in lines, running
        assert (f"neighbor {ip} shutdown" in lines) == (row.get("admin_status", "up") == "down"), running
    assert not any(line.startswith("router ospf") for line in lines)


@pytest.fixture
def settled(lab: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The lab at the start of a case, and after it: FRR agreeing with CONFIG_DB, sessions up."""
    assert until(lambda: all(p["state"] == "Established" for p in peers(lab).values()), timeout=60)
    yield lab
    with client(lab) as gc:
        assert_frr_agrees(lab, config(gc))


def refused(gc: gNMIclient, path: str, value: Any, match: str) -> None:
    with pytest.raises(Exception, match=match):
        set_field(gc, path, value)


def test_a_newline_never_becomes_an_frr_command(settled: dict[str, Any]) -> None:
    lab = settled
    with client(lab) as gc:
        before, sessions = config(gc), peers(lab)
        refused(gc, "BGP_NEIGHBOR/default|10.0.0.64/name", "spine1\n neighbor 10.0.0.66 shutdown",
                "control character U\\+000A")
        refused(gc, "DEVICE_METADATA/localhost/hostname", "leaf1\nrouter ospf", "control character")
        refused(gc, "PORT/Ethernet0/description", "a\x00b", "control character U\\+0000")
        assert config(gc) == before
    assert "10.0.0.66 shutdown" not in vtysh(lab, "show running-config")
    assert "router ospf" not in (rundir(lab) / "frr.conf").read_text()
    assert peers(lab) == sessions


@pytest.mark.parametrize("value", ["65_100", "６５１００", "65100 ", "+65100", "0x10"])
def test_numbers_are_ascii_digits_and_a_refusal_touches_no_session(settled: dict[str, Any], value: str) -> None:
    lab = settled
    with client(lab) as gc:
        before, sessions = config(gc), peers(lab)
        for field in ("asn", "local_asn", "holdtime"):
            with pytest.raises(Exception, match=r"invalid config|Failed to apply patch"):
                set_field(gc, f"BGP_NEIGHBOR/default|10.0.0.64/{field}", value)
        refused(gc, "DEVICE_METADATA/localhost/bgp_asn", value, r"invalid config|Failed to apply patch")
        assert config(gc) == before
    assert peers(lab) == sessions  # not one session was reset


def test_concurrent_writers_keep_every_acknowledged_write(settled: dict[str, Any]) -> None:
    lab = settled
    paths = ["PORT/Ethernet0/description", "PORT/Ethernet128/description", "PORT/Ethernet132/description",
             "BGP_NEIGHBOR/default|10.0.0.64/name"]
    last: dict[str, str] = {}
    errors: list[str] = []

    def writer(path: str) -> None:
        with client(lab) as gc:
            for i in range(25):
                value = f"w{len(path)}-{i}"
                try:
                    set_field(gc, path, value)
                except Exception as exc:  # every one must be acknowledged: reported below
                    errors.append(str(exc))
                    continue
                last[path] = value

    threads = [threading.Thread(target=writer, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    saved = json.loads((rundir(lab) / "config_db.json").read_text())
    with client(lab) as gc:
        cfg = config(gc)
        set_field(gc, "BGP_NEIGHBOR/default|10.0.0.64/name", "spine1")
    assert {p: cfg[p.split("/")[0]][p.split("/")[1]][p.split("/")[2]] for p in paths} == last
    assert {p: saved[p.split("/")[0]][p.split("/")[1]][p.split("/")[2]] for p in paths} == last


def test_ipv6_neighbor_and_a_refused_key_leave_the_agent_restartable(settled: dict[str, Any]) -> None:
    lab = settled
    with client(lab) as gc:
        set_field(gc, "INTERFACE/Ethernet0|fc00::1~1126", {})
        set_field(gc, "BGP_NEIGHBOR/default|fc00::2", {"asn": "65100", "local_addr": "fc00::1", "name": "v6peer"})
        assert "neighbor fc00::2 remote-as 65100" in vtysh(lab, "show running-config")
        before = config(gc)
        with pytest.raises(Exception, match=r"invalid config|Failed to apply"):  # no such VRF, no such port
            set_field(gc, "BGP_NEIGHBOR/Vrf9|10.9.9.9", {"asn": "65100", "name": "x"})
        with pytest.raises(Exception, match=r"invalid config|Failed to apply|do not exist"):
            set_field(gc, "PORT/Ethernet999", {"admin_status": "up"})
        assert config(gc) == before
    assert not (rundir(lab) / "config_db.json.pending").exists()
    twin("agent", "restart", "--name", lab["name"])
    with client(lab) as gc:
        assert config(gc) == before
        gc.set(delete=[CONFIG + "BGP_NEIGHBOR/default|fc00::2", CONFIG + "INTERFACE/Ethernet0|fc00::1~1126"],
               encoding="json_ietf")
    assert "fc00::2" not in vtysh(lab, "show running-config")


def test_a_huge_value_is_refused_at_once_and_a_lone_surrogate_is_gos_replacement(settled: dict[str, Any]) -> None:
    lab = settled
    with client(lab) as gc:
        before = config(gc)
        refused(gc, "PORT/Ethernet0/description", "x" * 1_000_000, "1000000 characters long")
        assert config(gc) == before
        gc.set(update=[(CONFIG + "PORT/Ethernet0/description", '"\\ud800abc"')], encoding="json_ietf")
        got = gc.get(path=[CONFIG + "PORT/Ethernet0/description"], encoding="json_ietf")
        assert got["notification"][0]["update"][0]["val"] == "\ufffdabc"  # as Go's encoding/json reads it
        set_field(gc, "PORT/Ethernet0/description", before["PORT"]["Ethernet0"].get("description", "x"))


def test_stream_subscriptions_do_not_starve_gets(settled: dict[str, Any]) -> None:
    lab = settled
    subscribers = [client(lab) for _ in range(4)]
    streams = []
    try:
        for i in range(16):
            gc = subscribers[i % 4]
            gc.connect()
            streams.append(gc.subscribe_stream(subscribe={
                "subscription": [{"path": CONFIG + ("PORT" if i % 2 else "BGP_NEIGHBOR"), "mode": "on_change"}],
                "mode": "stream", "encoding": "json_ietf"}))
        for stream in streams:  # each is open: its first update came
            next(stream)
        with client(lab) as gc:  # gnmi_timeout=20: a starved Get fails here
            for _ in range(20):
                assert "DEVICE_METADATA" in config(gc)
    finally:
        for stream in streams:
            stream.close()
        for gc in subscribers:
            gc.close()


def test_loopback_deleted_and_added_again_leaves_every_bgp_route_in_the_kernel(settled: dict[str, Any]) -> None:
    lab = settled

    def kernel_routes() -> int:
        return sum(1 for line in netns_exec(lab["name"], NODE, "ip", "route").stdout.splitlines()
                   if "proto bgp" in line)

    before = kernel_routes()
    assert before > 0
    with client(lab) as gc:
        loopbacks = config(gc)["LOOPBACK_INTERFACE"]
        gc.set(delete=[CONFIG + "LOOPBACK_INTERFACE"], encoding="json_ietf")
        gc.set(update=[(CONFIG + "LOOPBACK_INTERFACE", json.dumps(loopbacks))], encoding="json_ietf")
    assert until(lambda: kernel_routes() == before, timeout=15), vtysh(lab, "show ip route")
    verify = twin("verify", "--name", lab["name"], check=False)
    assert verify.returncode == 0, verify.stdout


# -- the fuzz: malformed Sets, nothing changes on refusal ------------------------------------------------

TEXT_FIELDS = ["PORT/Ethernet0/description", "BGP_NEIGHBOR/default|10.0.0.64/name"]
NUMBER_FIELDS = ["BGP_NEIGHBOR/default|10.0.0.64/asn", "BGP_NEIGHBOR/default|10.0.0.64/holdtime",
                 "PORT/Ethernet128/mtu", "DEVICE_METADATA/localhost/bgp_asn"]
# Never a valid number (so a Set that took one would change a session): not ASCII digits, or not
# a string at all; any JSON for the free-text fields.
not_ascii_digits = st.text(max_size=40).filter(lambda s: not (s.isascii() and s.isdigit()))
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                          max_size=4),
                           max_leaves=12)
not_a_number = st.one_of(not_ascii_digits, json_values.filter(lambda v: not isinstance(v, str | list)),
                         st.lists(not_ascii_digits, max_size=3))
fuzzed_sets = st.one_of(st.tuples(st.sampled_from(NUMBER_FIELDS), not_a_number),
                        st.tuples(st.sampled_from(TEXT_FIELDS), json_values))


@pytest.fixture(scope="module")
def fuzz_client(lab: dict[str, Any]) -> Iterator[gNMIclient]:
    with client(lab) as gc:
        yield gc


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(fuzzed=fuzzed_sets, raw=st.booleans())
def test_fuzzed_sets_change_nothing_when_refused(lab: dict[str, Any], fuzz_client: gNMIclient,
                                                 fuzzed: tuple[str, Any], raw: bool) -> None:
    gc, (path, value) = fuzz_client, fuzzed
    before = config(gc)
    payload = value.encode("utf-8", "surrogatepass") if raw and isinstance(value, str) else json.dumps(value)
    try:
        gc.set(update=[(CONFIG + path, payload)], encoding="json_ietf")
    except Exception:
        assert config(gc) == before  # refused: nothing changed
        return
    table, key, field = path.split("/")
    assert path not in NUMBER_FIELDS, f"{value!r} was taken as {field}"  # never a number: must be refused
    gc.set(update=[(CONFIG + path, json.dumps(before[table][key][field]))], encoding="json_ietf")


def test_after_the_fuzz_the_agent_is_up_and_bgp_established(lab: dict[str, Any]) -> None:
    assert until(lambda: all(p["state"] == "Established" for p in peers(lab).values()), timeout=60)
    with client(lab) as gc:
        assert_frr_agrees(lab, config(gc))
    status = twin_json("status", "--name", lab["name"], check=False)
    assert status["healthy"], status
