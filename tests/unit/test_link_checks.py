"""Every link that carries RoCE, server ports included: MTUs on both ends (link-mtu) and a DF ping at
the link's MTU from each server to its switch port (server-port-df-ping), judged on canned outputs;
which node each is read from, and how (docs/gate.md, "Push and verify by hand")."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from twin.checks import collect_gnmi as gnmi
from twin.checks import collect_local as local
from twin.checks.base import Outputs
from twin.checks.catalog import df_probes, server_links, verify_checks
from twin.checks.collect_local import jobs_of
from twin.checks.df_ping import DfPingInput, DfProbe, ServerPortsCarryFullFrames
from twin.checks.mtu import MtuConsistent, MtuInput
from twin.model.plan import Plan
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology

DATA = Path(__file__).resolve().parents[1] / "integration" / "data"

FABRIC = ("leaf1", "Ethernet128", "spine1", "Ethernet0")
SERVER = ("leaf1", "Ethernet0", "server1", "eth1")
MTU = MtuConsistent(MtuInput(links=[FABRIC], server_links=[SERVER]))


@pytest.fixture(scope="module")
def mini() -> Plan:
    return plan_topology(load_topology(DATA / "mini.yaml"))


def _outputs(leaf_server_port: str = "9100", server_nic: str | None = "9100") -> Outputs:
    return {"leaf1": {"port_table": {"Ethernet0": {"mtu": leaf_server_port}, "Ethernet128": {"mtu": "9100"}}},
            "spine1": {"port_table": {"Ethernet0": {"mtu": "9100"}}},
            "server1": {"interfaces": {"lo": {"mtu": "65536"}} | ({} if server_nic is None else
                                                                   {"eth1": {"mtu": server_nic}})}}


@pytest.mark.parametrize(("outputs", "status", "failures"), [
    pytest.param(_outputs(), "success", [], id="all-equal"),
    pytest.param(_outputs(leaf_server_port="9000"), "failure",
                 [("leaf1:Ethernet0 - server1:eth1", "expected equal MTUs, seen 9000 and 9100")],
                 id="leaf-port-lowered-below-the-server"),
    pytest.param(_outputs(server_nic="1500"), "failure",
                 [("leaf1:Ethernet0 - server1:eth1", "expected equal MTUs, seen 9100 and 1500")],
                 id="server-nic-lowered"),
    pytest.param(_outputs(server_nic=None), "failure",
                 [("leaf1:Ethernet0 - server1:eth1", "expected equal MTUs, seen 9100 and missing")],
                 id="server-nic-not-seen"),
])
def test_link_mtu_covers_server_links(outputs: Outputs, status: str, failures: list[tuple[str, str]]) -> None:
    result = MTU.evaluate(outputs)
    assert result.status == status
    assert [(i.subject, i.message) for i in result.failures] == failures
    assert [i.subject for i in result.items] == ["leaf1:Ethernet128 - spine1:Ethernet0",
                                                 "leaf1:Ethernet0 - server1:eth1"]


def test_a_links_switch_end_is_read_from_state_db_and_its_server_end_from_the_kernel() -> None:
    assert MTU.nodes() == ["leaf1", "server1", "spine1"]
    assert [MTU.sources(n) for n in MTU.nodes()] == [("port_table",), ("interfaces",), ("port_table",)]
    assert jobs_of(MTU, ["server1", "leaf1"]) == [("server1", "interfaces", None), ("leaf1", "port_table", None)]
    fabric_only = MtuConsistent(MtuInput(links=[FABRIC]))  # as the mtu-mismatch drill builds it
    assert {fabric_only.sources(n) for n in fabric_only.nodes()} == {("port_table",)}


PROBE = DfProbe(switch="leaf1", port="Ethernet0", server="server1", nic="eth1", address="10.2.0.0", mtu=9100)
DF = ServerPortsCarryFullFrames(DfPingInput(probes=[
    PROBE, DfProbe(switch="leaf2", port="Ethernet0", server="server2", nic="eth1", address="10.2.0.8", mtu=9100)]))


def test_df_ping_names_the_link_and_the_sizes() -> None:
    result = DF.evaluate({"server1": {"df_ping": []}, "server2": {"df_ping": ["10.2.0.8"]}})
    assert result.status == "failure"
    assert [(i.subject, i.message) for i in result.failures] == [(
        "leaf1:Ethernet0 - server1:eth1",
        "no reply from leaf1 Ethernet0 (10.2.0.0) to a 9100-byte ping with Don't Fragment (9072 bytes of ICMP "
        "data) from server1 eth1: an MTU below 9100 on this link drops full RoCE frames")]
    assert DF.evaluate({"server1": {"df_ping": ["10.2.0.0"]}, "server2": {"df_ping": ["10.2.0.8"]}}).status == \
        "success"
    assert DF.evaluate({}).status == "failure"  # a server not read is not a pass


def test_each_server_pings_its_own_switch_ports_at_the_mtu_less_the_headers() -> None:
    assert DF.nodes() == ["server1", "server2"]
    assert DF.argument("server1", "df_ping") == {"10.2.0.0": 9072}
    assert jobs_of(DF, ["server2"]) == [("server2", "df_ping", {"10.2.0.8": 9072})]


def test_the_catalog_checks_every_server_link_of_the_plan(mini: Plan) -> None:
    assert server_links(mini) == [("leaf1", "Ethernet0", "server1", "eth1"), ("leaf2", "Ethernet0", "server2", "eth1")]
    leaf1 = mini.node("leaf1").iface("Ethernet0")
    assert leaf1.address is not None
    assert df_probes(mini)[0] == DfProbe(switch="leaf1", port="Ethernet0", server="server1", nic="eth1",
                                         address=str(leaf1.address.ip), mtu=mini.fabric.mtu)
    by_name = {c.name: c for c in verify_checks(mini)}
    assert isinstance(by_name["link-mtu"], MtuConsistent)
    assert by_name["link-mtu"].inputs.server_links == server_links(mini)
    assert isinstance(by_name["server-port-df-ping"], ServerPortsCarryFullFrames)


def test_df_ping_reader_sends_one_fping_per_size_with_dont_fragment(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> SimpleNamespace:
        calls.append(argv)
        return SimpleNamespace(stdout="10.2.0.0\n", returncode=0)

    monkeypatch.setattr(local, "run", fake_run)
    monkeypatch.setattr(local, "netns_argv", lambda ns, argv: ["ns", ns, *argv])
    state = SimpleNamespace(node=lambda name: SimpleNamespace(netns=f"lab-{name}"))
    answered = local._df_ping(state, "server1", {"10.2.0.0": 9072, "10.2.0.2": 9072, "10.3.0.0": 1472})  # type: ignore[arg-type]
    assert calls == [["ns", "lab-server1", "fping", "-a", "-M", "-b", "1472", "-r", "1", "-t", "300", "-i", "1",
                      "10.3.0.0"],
                     ["ns", "lab-server1", "fping", "-a", "-M", "-b", "9072", "-r", "1", "-t", "300", "-i", "1",
                      "10.2.0.0", "10.2.0.2"]]
    assert answered == ["10.2.0.0", "10.2.0.0"]


class _Switch:
    def __init__(self, node: str, target: Any) -> None:
        self.node = node

    def __enter__(self) -> _Switch:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def table(self, db: str, table: str) -> dict[str, Any]:
        assert (db, table) == ("STATE_DB", "PORT_TABLE")
        return {"Ethernet0": {"mtu": "9000"}, "Ethernet128": {"mtu": "9100"}} if self.node == "leaf1" else \
            {"Ethernet0": {"mtu": "9100"}}


def test_verify_reads_switch_ends_over_gnmi_and_server_ends_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    read_locally: list[local.Job] = []

    def fake_read_local(lab: object, jobs: list[local.Job]) -> Outputs:
        read_locally.extend(jobs)
        return {"server1": {"interfaces": {"eth1": {"mtu": "9100"}}}}

    monkeypatch.setattr(gnmi, "read_local", fake_read_local)
    monkeypatch.setattr(gnmi, "SwitchClient", _Switch)
    lab = SimpleNamespace(gnmi_target=lambda node: None if node.startswith("server") else {"host": node})
    outputs = gnmi.collect_gnmi(lab, [MTU])  # type: ignore[arg-type]
    assert read_locally == [("server1", "interfaces", None)]
    assert [(i.subject, i.message) for i in MTU.evaluate(outputs).failures] == [
        ("leaf1:Ethernet0 - server1:eth1", "expected equal MTUs, seen 9000 and 9100")]
