"""Checks judged on canned FRR and kernel JSON: data tables of (outputs, status, failures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from twin.checks.base import Check, Outputs
from twin.checks.bgp import BgpInput, BgpSessionsEstablished
from twin.checks.catalog import expected_ecmp, expected_pings, expected_sessions, health_checks, host_addresses
from twin.checks.ecmp import EcmpInput, EcmpWidth, fib_widths
from twin.checks.health import evaluate
from twin.checks.ospf import OspfAdjacencies, OspfInput
from twin.checks.reachability import PingInput, ServerReachability
from twin.model.plan import InterfacePlan, NodePlan, Plan
from twin.model.results import CheckResult
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"

Failures = list[tuple[str, str]]  # (subject, message) of every item that is not a success


@pytest.fixture(scope="module")
def clos() -> Plan:
    return plan_topology(load_topology(TOPOLOGIES / "clos-4x8.yaml"))


def _failures(result: CheckResult) -> Failures:
    return [(i.subject, i.message) for i in result.failures]


# -- BGP ----------------------------------------------------------------------------------------

BGP_SESSIONS = {"leaf1": {"10.0.0.64": "spine1", "10.0.0.66": "spine2"}}


def _summary(**states: str) -> dict[str, Any]:
    """`show bgp summary json` with the given peer states (keys: ip with '_' for '.')."""
    peers = {ip.replace("_", "."): {"remoteAs": 65100, "state": state, "peerState": "OK", "pfxRcd": 10}
             for ip, state in states.items()}
    return {"ipv4Unicast": {"routerId": "10.1.4.1", "as": 65101, "peers": peers, "totalPeers": len(peers)}}


@pytest.mark.parametrize(("outputs", "status", "failures", "established"), [
    pytest.param({"leaf1": {"bgp_summary": _summary(**{"10_0_0_64": "Established", "10_0_0_66": "Established"})}},
                 "success", [], 2, id="all-established"),
    pytest.param({"leaf1": {"bgp_summary": _summary(**{"10_0_0_64": "Established", "10_0_0_66": "Active"})}},
                 "failure", [("leaf1 -> spine2 (10.0.0.66)", "expected Established, seen Active")], 1,
                 id="one-active"),
    pytest.param({"leaf1": {"bgp_summary": _summary(**{"10_0_0_64": "Established"})}},
                 "failure", [("leaf1 -> spine2 (10.0.0.66)", "expected Established, seen missing")], 1,
                 id="peer-missing"),
    pytest.param({"leaf1": {"bgp_summary": {}}},
                 "failure", [("leaf1 -> spine1 (10.0.0.64)", "expected Established, seen missing"),
                             ("leaf1 -> spine2 (10.0.0.66)", "expected Established, seen missing")], 0,
                 id="no-ipv4-unicast"),
    pytest.param({"leaf1": {"bgp_summary": None}},
                 "failure", [("leaf1", "no BGP summary (is bgpd running?)")], 0, id="collector-got-nothing"),
    pytest.param({}, "failure", [("leaf1", "no BGP summary (is bgpd running?)")], 0, id="node-absent"),
])
def test_bgp_sessions(outputs: Outputs, status: str, failures: Failures, established: int) -> None:
    result = BgpSessionsEstablished(BgpInput(sessions=BGP_SESSIONS)).evaluate(outputs)
    assert (result.status, _failures(result)) == (status, failures)
    assert result.measurements == {"established": established, "total": 2}


def test_bgp_success_items() -> None:
    outputs = {"leaf1": {"bgp_summary": _summary(**{"10_0_0_64": "Established", "10_0_0_66": "Established"})}}
    result = BgpSessionsEstablished(BgpInput(sessions=BGP_SESSIONS)).evaluate(outputs)
    assert [(i.subject, i.status, i.message) for i in result.items] == [
        ("leaf1 -> spine1 (10.0.0.64)", "success", "Established"),
        ("leaf1 -> spine2 (10.0.0.66)", "success", "Established"),
    ]


# -- ECMP ---------------------------------------------------------------------------------------

ECMP_EXPECTED = {"leaf1": {"10.1.4.2/32": 4, "10.2.0.4/31": 4}}


def _nexthops(n: int) -> list[dict[str, Any]]:
    return [{"gateway": f"10.0.0.{64 + 2 * k}", "dev": f"Ethernet{128 + 4 * k}", "weight": 1, "flags": []}
            for k in range(n)]


def _ecmp_route(dst: str, paths: int) -> dict[str, Any]:
    """One route of `ip -j -4 route show proto bgp`: a single next hop has no "nexthops" list."""
    if paths == 1:
        return {"dst": dst, "gateway": "10.0.0.64", "dev": "Ethernet128", "protocol": "bgp", "metric": 20,
                "flags": []}
    return {"dst": dst, "protocol": "bgp", "metric": 20, "flags": [], "nexthops": _nexthops(paths)}


@pytest.mark.parametrize(("routes", "widths"), [
    pytest.param([_ecmp_route("10.1.4.2", 4)], {"10.1.4.2/32": 4}, id="host-route-with-nexthops"),
    pytest.param([_ecmp_route("10.2.0.4/31", 1)], {"10.2.0.4/31": 1}, id="single-nexthop"),
    pytest.param([_ecmp_route("10.2.0.4/31", 2), _ecmp_route("10.1.4.3", 1)],
                 {"10.2.0.4/31": 2, "10.1.4.3/32": 1}, id="mixed"),
    pytest.param([{"dst": "default", "gateway": "10.0.0.64", "dev": "Ethernet128"}], {}, id="default-skipped"),
    pytest.param([], {}, id="empty"),
])
def test_fib_widths(routes: list[dict[str, Any]], widths: dict[str, int]) -> None:
    assert fib_widths(routes) == widths


@pytest.mark.parametrize(("outputs", "status", "failures"), [
    pytest.param({"leaf1": {"fib": [_ecmp_route("10.1.4.2", 4), _ecmp_route("10.2.0.4/31", 4)]}},
                 "success", [], id="full-width"),
    pytest.param({"leaf1": {"fib": [_ecmp_route("10.1.4.2", 4), _ecmp_route("10.2.0.4/31", 2)]}},
                 "failure", [("leaf1 10.2.0.4/31", "expected 4 paths, seen 2")], id="narrow"),
    pytest.param({"leaf1": {"fib": [_ecmp_route("10.1.4.2", 1)]}},
                 "failure", [("leaf1 10.1.4.2/32", "expected 4 paths, seen 1"),
                             ("leaf1 10.2.0.4/31", "expected 4 paths, seen 0")], id="single-and-missing"),
    pytest.param({"leaf1": {"fib": None}},
                 "failure", [("leaf1 10.1.4.2/32", "expected 4 paths, seen 0"),
                             ("leaf1 10.2.0.4/31", "expected 4 paths, seen 0")], id="no-fib"),
])
def test_ecmp_width(outputs: Outputs, status: str, failures: Failures) -> None:
    result = EcmpWidth(EcmpInput(expected=ECMP_EXPECTED)).evaluate(outputs)
    assert (result.status, _failures(result)) == (status, failures)


def test_ecmp_success_message() -> None:
    outputs = {"leaf1": {"fib": [_ecmp_route("10.1.4.2", 4), _ecmp_route("10.2.0.4/31", 4)]}}
    result = EcmpWidth(EcmpInput(expected=ECMP_EXPECTED)).evaluate(outputs)
    assert [(i.subject, i.message) for i in result.items] == [("leaf1", "2 prefixes at full width")]


# -- reachability -------------------------------------------------------------------------------

PROBES = {"server1": {"10.2.0.1": {"10.2.0.5": "server3/10.2.0.5", "10.2.0.7": "server4/10.2.0.7"}}}
MANY = {"server1": {"10.2.0.1": {f"10.2.1.{k}": f"s{k}/10.2.1.{k}" for k in range(1, 9)}}}


@pytest.mark.parametrize(("probes", "outputs", "status", "failures"), [
    pytest.param(PROBES, {"server1": {"ping": {"10.2.0.1": ["10.2.0.5", "10.2.0.7"]}}}, "success", [],
                 id="all-answer"),
    pytest.param(PROBES, {"server1": {"ping": {"10.2.0.1": ["10.2.0.5"]}}}, "failure",
                 [("server1 (10.2.0.1)", "no reply from 1/2: server4/10.2.0.7")], id="one-silent"),
    pytest.param(PROBES, {"server1": {"ping": {}}}, "failure",
                 [("server1 (10.2.0.1)", "no reply from 2/2: server3/10.2.0.5, server4/10.2.0.7")],
                 id="source-not-probed"),
    pytest.param(PROBES, {}, "failure",
                 [("server1 (10.2.0.1)", "no reply from 2/2: server3/10.2.0.5, server4/10.2.0.7")],
                 id="no-output"),
    pytest.param(MANY, {"server1": {"ping": {"10.2.0.1": ["10.2.1.8"]}}}, "failure",
                 [("server1 (10.2.0.1)", "no reply from 7/8: s1/10.2.1.1, s2/10.2.1.2, s3/10.2.1.3, "
                   "s4/10.2.1.4, s5/10.2.1.5, s6/10.2.1.6 ...")], id="long-list-elided"),
])
def test_server_reachability(probes: dict[str, dict[str, dict[str, str]]], outputs: Outputs, status: str,
                             failures: Failures) -> None:
    result = ServerReachability(PingInput(probes=probes)).evaluate(outputs)
    assert (result.status, _failures(result)) == (status, failures)


def test_reachability_success_message() -> None:
    outputs = {"server1": {"ping": {"10.2.0.1": ["10.2.0.5", "10.2.0.7"]}}}
    result = ServerReachability(PingInput(probes=PROBES)).evaluate(outputs)
    assert [i.message for i in result.items] == ["2 servers reached"]


# -- OSPF ---------------------------------------------------------------------------------------

ADJ = {"router1": {"eth1": "router2", "eth2": "router3"}}


def _ospf(*neighbors: tuple[str, str, str]) -> dict[str, Any]:
    """`show ip ospf neighbor json`: (router id, state, interface) per neighbor."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rid, state, iface in neighbors:
        out.setdefault(rid, []).append({"priority": 1, "state": state, "nbrState": state,
                                        "address": "192.168.1.2", "ifaceName": f"{iface}:192.168.1.1",
                                        "retransmitCounter": 0})
    return {"neighbors": out}


@pytest.mark.parametrize(("outputs", "status", "failures"), [
    pytest.param({"router1": {"ospf_neighbors": _ospf(("10.10.10.2", "Full/DR", "eth1"),
                                                      ("10.10.10.3", "Full/Backup", "eth2"))}},
                 "success", [], id="all-full"),
    pytest.param({"router1": {"ospf_neighbors": {"neighbors": {
        "10.10.10.2": [{"state": "Full/DROther", "ifaceName": "eth1:192.168.1.1"}],
        "10.10.10.3": [{"state": "Full/DR", "ifaceName": "eth2:192.168.2.1"}]}}}},
                 "success", [], id="older-frr-state-key"),
    pytest.param({"router1": {"ospf_neighbors": _ospf(("10.10.10.2", "Full/DR", "eth1"),
                                                      ("10.10.10.3", "ExStart/DROther", "eth2"))}},
                 "failure", [("router1 eth2 -> router3", "expected a Full adjacency, none seen")], id="exstart"),
    pytest.param({"router1": {"ospf_neighbors": {"neighbors": {}}}},
                 "failure", [("router1 eth1 -> router2", "expected a Full adjacency, none seen"),
                             ("router1 eth2 -> router3", "expected a Full adjacency, none seen")], id="none"),
    pytest.param({"router1": {"ospf_neighbors": None}},
                 "failure", [("router1 eth1 -> router2", "expected a Full adjacency, none seen"),
                             ("router1 eth2 -> router3", "expected a Full adjacency, none seen")], id="no-output"),
])
def test_ospf_adjacencies(outputs: Outputs, status: str, failures: Failures) -> None:
    result = OspfAdjacencies(OspfInput(adjacencies=ADJ)).evaluate(outputs)
    assert (result.status, _failures(result)) == (status, failures)


# -- a bug in a check (or garbage in) is an error result, not a traceback ------------------------

CHECKS: dict[str, Check[Any]] = {
    "bgp": BgpSessionsEstablished(BgpInput(sessions=BGP_SESSIONS)),
    "ecmp": EcmpWidth(EcmpInput(expected=ECMP_EXPECTED)),
    "ping": ServerReachability(PingInput(probes=PROBES)),
    "ospf": OspfAdjacencies(OspfInput(adjacencies=ADJ)),
}


@pytest.mark.parametrize(("check", "outputs"), [
    pytest.param("bgp", {"leaf1": {"bgp_summary": "bgpd is not running"}}, id="bgp-string"),
    pytest.param("bgp", {"leaf1": {"bgp_summary": {"ipv4Unicast": {"peers": []}}}}, id="bgp-peers-list"),
    pytest.param("bgp", {"leaf1": "garbage"}, id="bgp-node-string"),
    pytest.param("ecmp", {"leaf1": {"fib": "garbage"}}, id="ecmp-string"),
    pytest.param("ecmp", {"leaf1": {"fib": [{"dst": "10.1.4.2", "nexthops": 3}]}}, id="ecmp-nexthops-int"),
    pytest.param("ping", {"server1": {"ping": "garbage"}}, id="ping-string"),
    pytest.param("ospf", {"router1": {"ospf_neighbors": "garbage"}}, id="ospf-string"),
    pytest.param("ospf", {"router1": {"ospf_neighbors": {"neighbors": {"1.1.1.1": ["x"]}}}}, id="ospf-entry-string"),
])
def test_malformed_outputs_give_error(check: str, outputs: Outputs) -> None:
    result = CHECKS[check].evaluate(outputs)
    assert result.status == "error"
    assert [(i.subject, i.status) for i in result.items] == [("(check)", "error")]
    assert result.items[0].message.split(":")[0] in ("AttributeError", "TypeError")


@pytest.mark.parametrize("outputs", [
    pytest.param({"leaf1": {"bgp_summary": "garbage"}}, id="bgp-string"),
    pytest.param({"leaf1": {"fib": "garbage"}}, id="fib-string"),
])
def test_health_evaluate_survives_malformed_outputs(clos: Plan, outputs: Outputs) -> None:
    """Regression: the BGP and ECMP summaries were computed outside the checks' error guard."""
    health = evaluate(clos, health_checks(clos), outputs)
    assert not health.healthy
    assert "error" in {r.status for r in health.results}


# -- the catalog: what a plan implies -----------------------------------------------------------


def test_health_checks_of_clos(clos: Plan) -> None:
    assert [c.name for c in health_checks(clos)] == ["bgp-sessions", "ecmp-width", "server-reachability"]


def test_expected_sessions_of_clos(clos: Plan) -> None:
    sessions = expected_sessions(clos)
    assert len(sessions) == 12
    assert sessions["leaf1"] == {"10.0.0.64": "spine1", "10.0.0.66": "spine2", "10.0.0.68": "spine3",
                                 "10.0.0.70": "spine4"}
    assert sum(len(p) for p in sessions.values()) == 64


def test_expected_ecmp_of_clos(clos: Plan) -> None:
    ecmp = expected_ecmp(clos)
    assert sorted(ecmp) == [f"leaf{i}" for i in range(1, 9)]
    assert len(ecmp["leaf1"]) == 7 * 3
    assert set(ecmp["leaf1"].values()) == {4}
    assert "10.1.4.1/32" not in ecmp["leaf1"] and "10.1.4.2/32" in ecmp["leaf1"]


def test_expected_pings_of_clos(clos: Plan) -> None:
    pings = expected_pings(clos)
    assert sorted(pings) == sorted(f"server{i}" for i in range(1, 17))
    assert {len(by_src) for by_src in pings.values()} == {1}
    assert {len(t) for by_src in pings.values() for t in by_src.values()} == {14}


def test_expected_pings_skip_same_leaf(clos: Plan) -> None:
    (targets,) = expected_pings(clos)["server1"].values()
    server2 = clos.node("server2").iface("eth1").address
    assert server2 is not None and str(server2.ip) not in targets
    assert targets["10.2.0.129"] == "server3/10.2.0.129"


def _host(*exec_lines: str, address: str | None = None) -> NodePlan:
    nics = [InterfacePlan(name="eth1", kernel="eth1", peer_node="router1", peer_iface="eth3", address=address),
            InterfacePlan(name="eth2", kernel="eth2", peer_node="router2", peer_iface="eth3")]
    return NodePlan(name="PC1", role="host", kind="host", index=1, interfaces=nics, exec=list(exec_lines))


@pytest.mark.parametrize(("line", "found"), [
    ("ip addr add 192.168.11.2/24 dev eth1", [("192.168.11.2", "router1")]),
    ("ip address add 192.168.11.2/24 dev eth1", [("192.168.11.2", "router1")]),
    ("ip a add 192.168.11.2/24 dev eth1", [("192.168.11.2", "router1")]),
    ("ip -4 addr add 192.168.12.2/24 dev eth2", [("192.168.12.2", "router2")]),
    ("ip addr add 192.168.11.2/24 dev eth9", []),
    ("ip route add 192.168.0.0/16 via 192.168.11.1", []),
    ("ip link set eth1 up", []),
])
def test_host_addresses_from_exec(line: str, found: list[tuple[str, str]]) -> None:
    assert host_addresses(_host(line)) == found


def test_host_addresses_planned_first() -> None:
    host = _host("ip addr add 192.168.12.2/24 dev eth2", address="10.2.0.1/31")
    assert host_addresses(host) == [("10.2.0.1", "router1"), ("192.168.12.2", "router2")]
