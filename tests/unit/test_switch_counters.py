"""SONiC's counter commands over a twin switch's COUNTERS_DB as twin's producers write it: what portstat,
queuestat and pfcstat print where the switch keeps a counter, N/A where it does not, nothing where SONiC
prints nothing (no queue maps), and click's and argparse's answers to bad words.
(tests/fidelity/test_sonic_utilities_counters.py holds them to sonic-utilities' own expected outputs.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from twin.switch.cli import portstat
from twin.switch.cli.counters_cli import run_tool, show_interfaces_counters, show_pfc_counters, show_queue_counters
from twin.switch.cli.shell import CounterTool, Switch, translate
from twin.switch.cli.show_cli import run_show
from twin.switch.state.producers import counter_row, port_oid

PORTS = ("Ethernet0", "Ethernet4", "Ethernet128")


class Twin:
    """A twin switch's databases: COUNTERS_DB from the flex counter poller's rows, APPL_DB PORT_TABLE from
    portsyncd's; `tick` changes the kernel's counters between two readings."""

    def __init__(self, stats: dict[str, dict[str, int]], oper: str = "up") -> None:
        self.stats, self.reads = stats, 0
        self.tables: dict[str, dict[str, dict[str, str]]] = {
            "COUNTERS_DB": {"COUNTERS_PORT_NAME_MAP": {p: port_oid(p) for p in PORTS}},
            "APPL_DB": {f"PORT_TABLE:{p}": {"oper_status": oper, "admin_status": "up", "mtu": "9100"} for p in PORTS},
        }
        self.tick: dict[str, dict[str, int]] = {}

    def hgetall(self, db: str, key: str) -> dict[str, str]:
        port = next((p for p in PORTS if f"COUNTERS:{port_oid(p)}" == key), None)
        if db == "COUNTERS_DB" and port is not None:
            self.reads += 1
            stats = dict(self.stats.get(port, {}))
            if self.reads > len(PORTS):   # the second reading of every port
                for name, more in self.tick.get(port, {}).items():
                    stats[name] = stats.get(name, 0) + more
            return counter_row(stats)
        return dict(self.tables.get(db, {}).get(key, {}))


def kernel(rx: int, tx: int, multicast: int = 0, rx_dropped: int = 0) -> dict[str, int]:
    return {"rx_packets": rx, "tx_packets": tx, "rx_bytes": rx * 100, "tx_bytes": tx * 100, "rx_errors": 0,
            "tx_errors": 0, "rx_dropped": rx_dropped, "tx_dropped": 0, "multicast": multicast}


def test_counter_rows_give_portstat_both_halves_of_rx_ok_and_tx_ok() -> None:
    row = counter_row(kernel(1500, 40, multicast=7))
    assert row["SAI_PORT_STAT_IF_IN_UCAST_PKTS"] == "1493" and row["SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS"] == "7"
    assert row["SAI_PORT_STAT_IF_OUT_UCAST_PKTS"] == "40" and row["SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS"] == "0"
    counters = portstat.buckets(row)
    assert (counters["rx_ok"], counters["tx_ok"], counters["rx_mca"]) == ("1500", "40", "7")
    assert counters["rx_ovr"] == counters["rx_bca"] == counters["fec_corr"] == "N/A"   # not kept: N/A


def test_show_interfaces_counters_on_a_twin_switch() -> None:
    twin = Twin({"Ethernet0": kernel(1500, 1200, rx_dropped=3), "Ethernet4": kernel(0, 0),
                 "Ethernet128": kernel(12, 9)})
    out = show_interfaces_counters(twin, [])
    assert out.status == 0
    lines = out.out.splitlines()
    assert lines[0].split() == list(portstat.HEADERS["std"])
    assert [line.split()[0] for line in lines[2:]] == list(PORTS)   # natural order
    # ports up; RX_OK with a thousands separator; no RATES: RX_BPS and RX_UTIL N/A, as portstat without them
    assert lines[2].split() == ["Ethernet0", "U", "1,500", "N/A", "N/A", "0", "3", "N/A", "1,200", "N/A", "N/A", "0",
                                "0", "N/A"]
    assert show_interfaces_counters(twin, ["-i", "Ethernet128"]).out.splitlines()[2].split()[:3] == \
        ["Ethernet128", "U", "12"]
    errors = show_interfaces_counters(twin, ["errors"]).out.splitlines()
    assert errors[0].split() == list(portstat.HEADERS["errors"]) and errors[2].split()[3] == "3"
    doc = json.loads(run_tool(twin, "portstat", ["-j"]).out)
    assert doc["Ethernet0"]["RX_OK"] == "1,500" and doc["Ethernet4"]["STATE"] == "U" and "IFACE" not in doc["Ethernet0"]
    assert run_tool(twin, "portstat", ["-R", "-nz"]).out.splitlines()[2].split()[0] == "Ethernet0"
    assert "Ethernet4" not in run_tool(twin, "portstat", ["-nz"]).out


def test_a_port_down_and_a_rate_from_counters_db() -> None:
    twin = Twin({p: kernel(0, 0) for p in PORTS}, oper="down")
    twin.tables["COUNTERS_DB"][f"RATES:{port_oid('Ethernet0')}"] = {"RX_BPS": "25000", "RX_PPS": "250",
                                                                    "TX_BPS": "0", "TX_PPS": "0"}
    twin.tables["APPL_DB"]["PORT_TABLE:Ethernet0"]["speed"] = "100000"
    line = run_tool(twin, "portstat", ["-a", "-i", "Ethernet0"]).out.splitlines()[2].split()
    # D: admin up, oper down; 25000 B/s is "25.00 KB/s", 0.02% of 100G (APPL_DB's speed while the port is down)
    assert line[:6] == ["Ethernet0", "D", "0", "25.00", "KB/s", "250.00/s"] and line[6] == "0.00%"
    assert run_tool(twin, "portstat", ["-nz"]).out == "No non-zero statistics found for the specified interfaces.\n"


def test_period_shows_what_changed_meanwhile() -> None:
    twin = Twin({p: kernel(100, 100) for p in PORTS})
    twin.tick = {"Ethernet4": {"rx_packets": 5000, "tx_dropped": 2}}
    slept: list[float] = []
    out = show_interfaces_counters(twin, ["-p", "2"], sleep=slept.append).out.splitlines()
    assert slept == [2] and out[0] == "The rates are calculated within 2 seconds period"
    rows = {line.split()[0]: line.split() for line in out[3:]}
    assert rows["Ethernet0"][2] == "0" and rows["Ethernet4"][2] == "5,000" and rows["Ethernet4"][12] == "2"


def test_detailed_lists_one_port_and_since_when() -> None:
    twin = Twin({"Ethernet4": kernel(40, 4, multicast=1)})
    lines = show_interfaces_counters(twin, ["detailed", "Ethernet4"]).out.splitlines()
    assert lines[0] == "Packets Received 64 Octets..................... N/A"
    assert "Unicast Packets Received....................... 39" in lines
    assert "Multicast Packets Received..................... 1" in lines
    assert "Total Packets Received Without Errors.......... N/A" in lines   # no broadcast counter
    assert lines[-1] == "Time Since Counters Last Cleared............... None"
    assert not any(line.startswith("WRED") for line in lines)   # no PORT_COUNTER_CAPABILITIES
    missing = show_interfaces_counters(twin, ["detailed"])
    assert missing.status == 2 and "Error: Missing argument '<INTERFACE_NAME>'." in missing.err


def test_queue_counters_without_queue_maps_print_what_a_switch_prints() -> None:
    """SonicV2Connector.get_all of a missing COUNTERS_QUEUE_NAME_MAP is {}: no queue, no table, status 0."""
    twin = Twin({})
    assert show_queue_counters(twin, []).out == "" and show_queue_counters(twin, []).status == 0
    assert show_queue_counters(twin, ["Ethernet4"]).out == ""
    doc = json.loads(show_queue_counters(twin, ["--json"]).out)
    assert sorted(doc) == sorted(PORTS) and all(list(entry) == ["time"] for entry in doc.values())
    gone = show_queue_counters(twin, ["Ethernet999"])
    assert (gone.out, gone.status) == ("Port doesn't exist! Ethernet999\n", 1)


def test_queue_counters_from_the_maps_orchagent_writes() -> None:
    twin = Twin({})
    q0, q3 = "oid:0x15000000000100", "oid:0x15000000000103"
    counters = twin.tables["COUNTERS_DB"]
    counters["COUNTERS_QUEUE_NAME_MAP"] = {"Ethernet0:0": q0, "Ethernet0:3": q3}
    counters["COUNTERS_QUEUE_PORT_MAP"] = {q0: port_oid("Ethernet0"), q3: port_oid("Ethernet0")}
    counters["COUNTERS_QUEUE_INDEX_MAP"] = {q0: "0", q3: "3"}
    counters["COUNTERS_QUEUE_TYPE_MAP"] = {q0: "SAI_QUEUE_TYPE_UNICAST", q3: "SAI_QUEUE_TYPE_UNICAST"}
    counters[f"COUNTERS:{q3}"] = {"SAI_QUEUE_STAT_PACKETS": "1234", "SAI_QUEUE_STAT_BYTES": "5678",
                                  "SAI_QUEUE_STAT_DROPPED_PACKETS": "0", "SAI_QUEUE_STAT_DROPPED_BYTES": "0"}
    out = show_queue_counters(twin, ["Ethernet0"]).out.splitlines()
    assert out[0] == "For namespace :" and out[1].split() == ["Port", "TxQ", "Counter/pkts", "Counter/bytes",
                                                              "Drop/pkts", "Drop/bytes"]
    assert out[3].split() == ["Ethernet0", "UC0", "N/A", "N/A", "N/A", "N/A"]   # no counters kept for it
    assert out[4].split() == ["Ethernet0", "UC3", "1234", "5678", "0", "0"]   # queuestat: no separators
    del counters["COUNTERS_QUEUE_INDEX_MAP"][q3]
    broken = show_queue_counters(twin, [])
    assert (broken.out, broken.status) == (f"Queue index is not available! {q3}\n", 1)


def test_pfc_counters_stay_zero_and_the_history_the_switch_does_not_keep_is_na() -> None:
    out = show_pfc_counters(Twin({}), []).out.split("\n\n")
    assert out[0].splitlines()[0].split() == ["Port", "Rx", *(f"PFC{p}" for p in range(8))]
    assert out[0].splitlines()[2].split() == ["Ethernet0", *["0"] * 8]   # no PFC frame is ever sent or received
    assert out[1].splitlines()[0].split()[:2] == ["Port", "Tx"] and len(out[1].splitlines()) == 2 + len(PORTS)
    history = show_pfc_counters(Twin({}), ["--history"]).out.splitlines()
    assert history[2].split() == ["Ethernet0", "PFC0", "N/A", "N/A", "N/A", "N/A"] and history[10] == ""


@pytest.mark.parametrize("ports", ["Ethernet320-Ethernet376", "Ethernet0-", "Ethernet0-foo", "Eth0-3", "Ethernet8-4"])
def test_malformed_ranges_are_refused_as_portstat_refuses_them(ports: str) -> None:
    """sonic-utilities' tests/portstat_test.py test_show_intf_counters_malformed_range."""
    out = run_tool(Twin({}), "portstat", ["-i", ports])
    assert out.status == 1 and "Error: Invalid interface range" in out.err


def test_ranges_and_lists_of_ports() -> None:
    assert portstat.parse_interfaces("Ethernet0,Ethernet4-6,PortChannel1-2,Ethernet-BP0-1") == (
        "Ethernet0", "Ethernet4", "Ethernet5", "Ethernet6", "PortChannel1", "PortChannel2", "Ethernet-BP0",
        "Ethernet-BP1")


@pytest.mark.parametrize("args,message", [
    (["-x"], "Error: No such option: -x"),
    (["-i"], "Error: Option '-i' requires an argument."),
    (["-p", "soon"], "Error: Invalid value for '-p' / '--period': 'soon' is not a valid integer."),
    (["-d", "inside"], "Error: Invalid value for '--display' / '-d': 'inside' is not one of 'all', 'frontend'."),
    (["nothing"], "Error: No such command 'nothing'."),
    (["errors", "Ethernet0"], "Error: Got unexpected extra argument (Ethernet0)"),
])
def test_click_refuses_what_show_refuses(args: list[str], message: str) -> None:
    out = show_interfaces_counters(Twin({}), args)
    assert out.status == 2 and out.err.startswith("Usage: show interfaces counters") and message in out.err


def test_the_scripts_refuse_what_this_shell_cannot_do() -> None:
    twin = Twin({})
    for tool, option in (("portstat", "-c"), ("portstat", "-D"), ("queuestat", "-c"), ("pfcstat", "-c")):
        out = run_tool(twin, tool, [option])
        assert out.status == 1 and "no clear commands" in out.err and out.out == ""
    bad = run_tool(twin, "portstat", ["--bogus"])
    assert bad.status == 2 and bad.err.startswith("usage: portstat") and \
        "portstat: error: unrecognized arguments: --bogus" in bad.err
    assert "Display the ports state and counters" in run_tool(twin, "portstat", ["-h"]).out
    assert run_tool(twin, "portstat", ["-v"]).out == "portstat 1.0\n"
    assert run_tool(twin, "queuestat", ["-p", "Ethernet9"]).out == "Port doesn't exist! Ethernet9\n"


def test_the_shell_runs_the_scripts_and_show_routes_the_commands(tmp_path: Any) -> None:
    switch = Switch(name="leaf1", netns="twin-x-leaf1", rundir=tmp_path)
    assert translate("portstat -j", switch) == CounterTool("portstat", ("-j",))
    assert translate("sudo queuestat -p Ethernet0", switch) == CounterTool("queuestat", ("-p", "Ethernet0"))
    twin = Twin({"Ethernet0": kernel(7, 7)})
    assert run_show(twin, ["interfaces", "counters"]).out.splitlines()[2].split()[2] == "7"  # type: ignore[arg-type]
    assert run_show(twin, ["queue", "counters"]).status == 0  # type: ignore[arg-type]
    assert "PFC7" in run_show(twin, ["pfc", "counters"]).out  # type: ignore[arg-type]
    assert run_show(twin, ["queue", "watermark"]).status == 1  # type: ignore[arg-type]  # not emulated
    assert run_show(twin, ["interfaces", "counters", "rif"]).status == 1  # type: ignore[arg-type]
