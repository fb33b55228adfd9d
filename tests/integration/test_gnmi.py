"""gNMI against the agent, driven with pygnmi exactly as a user's script would drive SONiC."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import running_lab, twin, twin_json, unique
from pygnmi.client import gNMIclient


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "g") as name:
        yield twin_json("status", "--name", name)


def client(status: dict[str, Any], node: str, **override: Any) -> gNMIclient:
    target = dict(next(n for n in status["nodes"] if n["name"] == node)["gnmi"])
    target.update(override)
    host = (target.pop("host"), target.pop("port"))
    return gNMIclient(target=host, **target)


def full_config(gc: gNMIclient) -> Any:
    r = gc.get(path=["/sonic-db:CONFIG_DB/localhost/"], encoding="json_ietf")
    return r["notification"][0]["update"][0]["val"]


def test_capabilities_look_like_sonic(lab: dict[str, Any]) -> None:
    with client(lab, "leaf1") as gc:
        caps = gc.capabilities()
    assert caps["gnmi_version"] == "0.7.0"
    assert {"json", "json_ietf", "proto"} <= set(caps["supported_encodings"])
    assert caps["supported_models"][0]["name"] == "sonic-db"


def test_get_config_state_routes_counters(lab: dict[str, Any]) -> None:
    with client(lab, "leaf1") as gc:
        cfg = full_config(gc)
        assert cfg["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1"
        field = gc.get(path=["/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/mtu"], encoding="json_ietf")
        assert field["notification"][0]["update"][0]["val"] == "9100"
        neigh = gc.get(prefix="", target="STATE_DB", path=["NEIGH_STATE_TABLE"], encoding="json_ietf")
        states = neigh["notification"][0]["update"][0]["val"]
        assert {v["state"] for v in states.values()} == {"Established"} and len(states) == 2
        route = gc.get(path=["/sonic-db:APPL_DB/localhost/ROUTE_TABLE[key=10.1.4.2/32]"], encoding="json_ietf")
        hops = route["notification"][0]["update"][0]["val"]
        assert len(hops["nexthop"].split(",")) == 2 and len(hops["ifname"].split(",")) == 2
        ports = gc.get(prefix="", target="STATE_DB", path=["PORT_TABLE"], encoding="json_ietf")
        assert ports["notification"][0]["update"][0]["val"]["Ethernet128"]["oper_status"] == "up"
        names = gc.get(prefix="", target="COUNTERS_DB", path=["COUNTERS_PORT_NAME_MAP"], encoding="json_ietf")
        oid = names["notification"][0]["update"][0]["val"]["Ethernet128"]
        counters = gc.get(prefix="", target="COUNTERS_DB", path=[f"COUNTERS/{oid}"], encoding="json_ietf")
        assert int(counters["notification"][0]["update"][0]["val"]["SAI_PORT_STAT_IF_IN_OCTETS"]) > 0
        bfd = gc.get(prefix="", target="STATE_DB", path=["BFD_SESSION_TABLE"], encoding="json_ietf")
        assert {v["state"] for v in bfd["notification"][0]["update"][0]["val"].values()} == {"Up"}


def test_wrong_password_is_unauthenticated(lab: dict[str, Any]) -> None:
    with pytest.raises(Exception, match="wrong or missing username/password"), \
            client(lab, "leaf1", password="nope") as gc:
        gc.get(path=["/sonic-db:CONFIG_DB/localhost/PORT"], encoding="json_ietf")


def _uptime(lab_name: str, node: str) -> dict[str, int]:
    out = subprocess.run(["vtysh", "--vty_socket", f"/run/twin/{lab_name}/nodes/{node}", "-c",
                          "show bgp summary json"], capture_output=True, text=True).stdout
    peers = json.loads(out)["ipv4Unicast"]["peers"]
    return {ip: p["connectionsEstablished"] for ip, p in peers.items()}


def test_description_change_resets_nothing(lab: dict[str, Any]) -> None:
    before = _uptime(lab["lab"], "leaf1")
    with client(lab, "leaf1") as gc:
        gc.set(update=[("/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR[key=default|10.0.0.64]",
                        {"name": "spine1-via-gnmi"})], encoding="json_ietf")
        got = gc.get(path=["/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR[key=default|10.0.0.64]/name"],
                     encoding="json_ietf")
    assert got["notification"][0]["update"][0]["val"] == "spine1-via-gnmi"
    run = subprocess.run(["vtysh", "--vty_socket", f"/run/twin/{lab['lab']}/nodes/leaf1", "-c",
                          "show running-config"], capture_output=True, text=True).stdout
    assert "neighbor 10.0.0.64 description spine1-via-gnmi" in run
    assert _uptime(lab["lab"], "leaf1") == before  # no session re-established
    persisted = json.loads(Path(f"/run/twin/{lab['lab']}/nodes/leaf1/config_db.json").read_text())
    assert persisted["BGP_NEIGHBOR"]["default|10.0.0.64"]["name"] == "spine1-via-gnmi"


INVALID_SETS = [
    ("wrong type", dict(update=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128", {"mtu": "jumbo"})]),
     "PORT|Ethernet128 mtu: 'jumbo' is not in 68-9216"),
    ("dangling local_addr", dict(update=[("/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR[key=default|10.9.9.9]",
                                          {"asn": "65100", "local_addr": "10.9.9.8"})]),
     "BGP_NEIGHBOR|default|10.9.9.9 local_addr: 10.9.9.8 is not an address of this switch"),
    ("unknown table", dict(update=[("/sonic-db:CONFIG_DB/localhost/NOT_A_TABLE/x", {"a": "b"})]),
     "NOT_A_TABLE: no SONiC YANG model defines this table"),
    ("interface on a missing port", dict(update=[
        ("/sonic-db:CONFIG_DB/localhost/INTERFACE[key=Ethernet400|10.5.5.0/31]", {})]),
     "INTERFACE|Ethernet400|10.5.5.0/31: port Ethernet400 is not in PORT"),
    ("malformed path", dict(update=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/mtu/extra", "1500")]),
     "path too deep"),
    ("read-only database", dict(update=[("/sonic-db:STATE_DB/localhost/PORT_TABLE/Ethernet128", {"a": "b"})]),
     "STATE_DB is read-only"),
    ("delete of a missing key", dict(delete=["/sonic-db:CONFIG_DB/localhost/PORT/Ethernet999"]),
     "cannot apply remove"),
]


@pytest.mark.parametrize(("case", "kwargs", "reason"), INVALID_SETS, ids=[c[0] for c in INVALID_SETS])
def test_invalid_set_is_rejected_and_changes_nothing(lab: dict[str, Any], case: str, kwargs: dict[str, Any],
                                                     reason: str) -> None:
    with client(lab, "leaf2") as gc:
        before = full_config(gc)
        with pytest.raises(Exception, match="InvalidArgument|INVALID_ARGUMENT|" + reason.split("'")[0][:20]) as err:
            gc.set(encoding="json_ietf", **kwargs)
        assert reason in str(err.value)
        assert full_config(gc) == before


def test_missing_encoding_is_rejected(lab: dict[str, Any]) -> None:
    from pygnmi.spec.v080 import gnmi_pb2

    with client(lab, "leaf2") as gc:
        req = gnmi_pb2.SetRequest(update=[gnmi_pb2.Update(
            path=gnmi_pb2.Path(origin="sonic-db", elem=[gnmi_pb2.PathElem(name=n) for n in
                                                         ("CONFIG_DB", "localhost", "PORT", "Ethernet128", "mtu")]),
            val=gnmi_pb2.TypedValue())])
        meta = [("username", "admin"), ("password", "YourPaSsWoRd")]
        with pytest.raises(Exception, match="needs an encoding"):
            gc._gNMIclient__stub.Set(req, metadata=meta)


def test_subscribe_once_and_poll(lab: dict[str, Any]) -> None:
    with client(lab, "spine1") as gc:
        once = gc.subscribe2(subscribe={"subscription": [{"path": "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE"}],
                                        "mode": "once", "encoding": "json_ietf"})
        msgs = list(once)
        assert any("update" in m for m in msgs)
        poll = gc.subscribe_poll(subscribe={"subscription": [{"path": "/sonic-db:STATE_DB/localhost/PORT_TABLE"}],
                                            "mode": "poll", "encoding": "json_ietf"})
        first = next(poll)
        assert "update" in first


def test_on_change_sees_a_session_go_down_fast(lab: dict[str, Any]) -> None:
    """Shut a neighbor on spine1: leaf1's on-change stream reports it within 100 ms of FRR seeing it."""
    seen: dict[str, float] = {}
    with client(lab, "leaf1") as gc:
        stream = gc.subscribe_stream(subscribe={
            "subscription": [{"path": "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE", "mode": "on_change"}],
            "mode": "stream", "encoding": "json_ietf"})

        def watch() -> None:
            for msg in stream:
                for upd in msg.get("update", {}).get("update", []):
                    val = upd.get("val", {})
                    state = val.get("state") if isinstance(val, dict) else None
                    if state and state != "Established" and "down" not in seen:
                        seen["down"] = time.monotonic()
                        return

        t = threading.Thread(target=watch, daemon=True)
        t.start()
        time.sleep(1.0)
        spine = f"/run/twin/{lab['lab']}/nodes/spine1"
        leaf = f"/run/twin/{lab['lab']}/nodes/leaf1"
        subprocess.run(["vtysh", "--vty_socket", spine, "-c", "configure terminal", "-c", "router bgp 65100",
                        "-c", "neighbor 10.0.0.65 shutdown"], check=True, capture_output=True)
        frr_saw = None
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and frr_saw is None:
            out = json.loads(subprocess.run(["vtysh", "--vty_socket", leaf, "-c", "show bgp summary json"],
                                            capture_output=True, text=True).stdout)
            if out["ipv4Unicast"]["peers"]["10.0.0.64"]["state"] != "Established":
                frr_saw = time.monotonic()
            time.sleep(0.005)
        t.join(timeout=5)
        subprocess.run(["vtysh", "--vty_socket", spine, "-c", "configure terminal", "-c", "router bgp 65100",
                        "-c", "no neighbor 10.0.0.65 shutdown"], check=True, capture_output=True)
        stream.close()
    assert frr_saw is not None and "down" in seen
    assert seen["down"] - frr_saw < 0.1, f"notification {1000 * (seen['down'] - frr_saw):.0f} ms after FRR"


def test_agent_killed_during_set_leaves_old_or_new(lab: dict[str, Any]) -> None:
    run_dir = Path(f"/run/twin/{lab['lab']}")
    config = run_dir / "nodes" / "leaf2" / "config_db.json"
    old = json.loads(config.read_text())
    new_networks = {f"default|ipv4_unicast|10.77.{i}.0/24": {} for i in range(200)}

    def big_set() -> None:
        try:
            with client(lab, "leaf2") as gc:
                gc.set(update=[("/sonic-db:CONFIG_DB/localhost/BGP_GLOBALS_AF_NETWORK", new_networks)],
                       encoding="json_ietf")
        except Exception:
            pass

    t = threading.Thread(target=big_set, daemon=True)
    t.start()
    pending = run_dir / "nodes" / "leaf2" / "config_db.json.pending"
    deadline = time.monotonic() + 10
    while not pending.exists() and time.monotonic() < deadline:
        time.sleep(0.001)
    os.kill(int((run_dir / "agent.pid").read_text()), signal.SIGKILL)
    t.join(timeout=10)
    twin("agent", "restart", "--name", lab["lab"])
    after = json.loads(config.read_text())
    assert after in (old, {**old, "BGP_GLOBALS_AF_NETWORK": {**old["BGP_GLOBALS_AF_NETWORK"], **new_networks}})
    running = subprocess.run(["vtysh", "--vty_socket", str(run_dir / "nodes" / "leaf2"), "-c",
                              "show running-config"], capture_output=True, text=True).stdout
    networks_running = running.count("network 10.77.")
    assert networks_running == (0 if after == old else 200)


def test_subscribe_stream_sample(lab: dict[str, Any]) -> None:
    got: list[float] = []
    with client(lab, "spine2") as gc:
        stream = gc.subscribe_stream(subscribe={
            "subscription": [{"path": "/sonic-db:STATE_DB/localhost/PORT_TABLE/Ethernet0/oper_status",
                              "mode": "sample", "sample_interval": 200_000_000}],
            "mode": "stream", "encoding": "json_ietf"})
        start = time.monotonic()
        for msg in stream:
            if msg.get("update", {}).get("update"):
                got.append(time.monotonic() - start)
            if len(got) >= 4 or time.monotonic() - start > 5:
                break
        stream.close()
    assert len(got) >= 4
    assert got[-1] - got[1] < 1.5  # samples every ~200 ms, not once a second


def test_plaintext_when_the_lab_asks(tmp_path: Path) -> None:
    lab_file = tmp_path / "plain.yaml"
    topo = Path(__file__).parent / "data" / "mini.yaml"
    lab_file.write_text(f"name: plain\ntopology: {topo}\ngnmi: {{tls: false, username: ops, password: s3cret}}\n")
    name = unique("p")
    try:
        assert twin_json("up", str(lab_file), "--name", name)["healthy"]
        status = twin_json("status", "--name", name)
        target = next(n for n in status["nodes"] if n["name"] == "leaf1")["gnmi"]
        assert target["insecure"] is True and "skip_verify" not in target and target["username"] == "ops"
        with client(status, "leaf1") as gc:
            assert full_config(gc)["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1"
    finally:
        twin("down", "--name", name, check=False)
