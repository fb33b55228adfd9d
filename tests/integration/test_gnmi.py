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
from labtools import running_lab, twin, twin_json, unique, without_yang
from pygnmi.client import gNMIclient


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "g") as name:
        yield twin_json("status", "--name", name)


def client(status: dict[str, Any], node: str, **override: Any) -> gNMIclient:
    target = dict(next(n for n in status["nodes"] if n["name"] == node)["gnmi"])
    target.update(override)
    return gNMIclient(**target)


def full_config(gc: gNMIclient) -> Any:
    r = gc.get(path=["/sonic-db:CONFIG_DB/localhost/"], encoding="json_ietf")
    return r["notification"][0]["update"][0]["val"]


def test_capabilities_look_like_sonic(lab: dict[str, Any]) -> None:
    with client(lab, "leaf1") as gc:
        caps = gc.capabilities()
    assert caps["gnmi_version"] == "0.7.0"
    assert set(caps["supported_encodings"]) == {"json", "json_ietf", "proto"}
    names = [m["name"] for m in caps["supported_models"]]
    if (why := without_yang()) is not None:
        assert names == ["sonic-db"]   # no models to list: only the database origin
        pytest.skip(why)
    assert names[-1] == "sonic-db" and "sonic-port" in names  # the models, then sonic-db (server.go)


def test_get_config_state_routes_counters(lab: dict[str, Any]) -> None:
    with client(lab, "leaf1") as gc:
        cfg = full_config(gc)
        assert cfg["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1"
        field = gc.get(path=["/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/mtu",
                             "/sonic-db:CONFIG_DB/localhost/PORT/Ethernet132/mtu"], encoding="json_ietf")
        assert [n["update"][0]["val"] for n in field["notification"]] == ["9100", "9100"]  # one per path
        neigh = gc.get(prefix="", target="STATE_DB", path=["NEIGH_STATE_TABLE"], encoding="json_ietf")
        states = neigh["notification"][0]["update"][0]["val"]
        assert {v["state"] for v in states.values()} == {"Established"} and len(states) == 2
        # fpmsyncd keys host routes without /32; keys holding / go in [key=...]
        route = gc.get(path=["/sonic-db:APPL_DB/localhost/ROUTE_TABLE/10.1.4.2"], encoding="json_ietf")
        hops = route["notification"][0]["update"][0]["val"]
        assert len(hops["nexthop"].split(",")) == 2 and len(hops["ifname"].split(",")) == 2
        table = gc.get(path=["/sonic-db:APPL_DB/localhost/ROUTE_TABLE"], encoding="json_ietf")
        key = next(k for k in table["notification"][0]["update"][0]["val"] if k.startswith("10.2."))
        subnet = gc.get(path=[f"/sonic-db:APPL_DB/localhost/ROUTE_TABLE[key={key}]"], encoding="json_ietf")
        assert subnet["notification"][0]["update"][0]["val"]["protocol"] == "bgp"
        ports = gc.get(prefix="", target="APPL_DB", path=["PORT_TABLE"], encoding="json_ietf")
        assert ports["notification"][0]["update"][0]["val"]["Ethernet128"]["oper_status"] == "up"
        counters = gc.get(prefix="", target="COUNTERS_DB", path=["COUNTERS/Ethernet128"], encoding="json_ietf")
        assert int(counters["notification"][0]["update"][0]["val"]["SAI_PORT_STAT_IF_IN_OCTETS"]) > 0
        bfd = gc.get(prefix="", target="STATE_DB", path=["BFD_SESSION_TABLE"], encoding="json_ietf")
        assert {v["state"] for v in bfd["notification"][0]["update"][0]["val"].values()} == {"Up"}
        with pytest.raises(Exception, match="Unknown encoding JSON"):  # pygnmi's default encoding
            gc.get(path=["/sonic-db:CONFIG_DB/localhost/PORT"], encoding="json")


def test_wrong_password_is_unauthenticated(lab: dict[str, Any]) -> None:
    with pytest.raises(Exception, match="Unauthenticated"), \
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
        gc.set(update=[("/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR/default|10.0.0.64/name",
                        json.dumps("spine1-via-gnmi"))], encoding="json_ietf")
        got = gc.get(path=["/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR/default|10.0.0.64/name"],
                     encoding="json_ietf")
    patch = json.loads(Path(f"/run/twin/{lab['lab']}/nodes/leaf1/gcu.patch").read_text())
    assert patch == [{"op": "add", "path": "/BGP_NEIGHBOR/default|10.0.0.64/name", "value": "spine1-via-gnmi"}]
    assert got["notification"][0]["update"][0]["val"] == "spine1-via-gnmi"
    run = subprocess.run(["vtysh", "--vty_socket", f"/run/twin/{lab['lab']}/nodes/leaf1", "-c",
                          "show running-config"], capture_output=True, text=True).stdout
    assert "neighbor 10.0.0.64 description spine1-via-gnmi" in run
    assert _uptime(lab["lab"], "leaf1") == before  # no session re-established
    persisted = json.loads(Path(f"/run/twin/{lab['lab']}/nodes/leaf1/config_db.json").read_text())
    assert persisted["BGP_NEIGHBOR"]["default|10.0.0.64"]["name"] == "spine1-via-gnmi"


def test_a_local_addr_on_no_interface_is_accepted_as_sonic_accepts_it(lab: dict[str, Any]) -> None:
    """SONiC's YANG takes any address there; frrcfgd gives FRR the update-source as it is (twin validate
    reports it: twin.stages.validate.local_addr)."""
    path = "/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR/default|10.9.9.9"
    with client(lab, "leaf2") as gc:
        gc.set(update=[(path, {"asn": "65100", "local_addr": "10.9.9.8"})], encoding="json_ietf")
        try:
            run = subprocess.run(["vtysh", "--vty_socket", f"/run/twin/{lab['lab']}/nodes/leaf2", "-c",
                                  "show running-config"], capture_output=True, text=True).stdout
            assert " neighbor 10.9.9.9 update-source 10.9.9.8" in run
        finally:
            gc.set(delete=[path], encoding="json_ietf")


INVALID_SETS = [
    ("wrong type", dict(update=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/mtu", '"jumbo"')]),
     "Given patch will produce invalid config"),
    # a key-level update is JSON Patch `add`, which replaces the entry: YANG wants its lanes
    ("key-level update replaces the entry", dict(update=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128",
                                                          {"admin_status": "down"})]),
     'Mandatory node "lanes"'),
    ("[key=] names a table in a Set", dict(update=[(
        "/sonic-db:CONFIG_DB/localhost/BGP_NEIGHBOR[key=default|10.0.0.64]", {"name": "x"})]),
     "tables without YANG models"),
    ("interface on a missing port", dict(update=[
        ("/sonic-db:CONFIG_DB/localhost/INTERFACE/Ethernet400|10.5.5.0~131", {})]),
     "Given patch will produce invalid config"),
    ("too deep", dict(update=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet128/mtu/extra/more", '"1500"')]),
     "Invalid db table Path"),
    ("read-only database", dict(update=[("/sonic-db:STATE_DB/localhost/PORT_TABLE/Ethernet128", {"a": "b"})]),
     "Set RPC does not support STATE_DB"),
    ("replace of a missing key", dict(replace=[("/sonic-db:CONFIG_DB/localhost/PORT/Ethernet999", {"mtu": "9100"})]),
     "Invalid entry"),
]


# the cases whose message is libyang's (a type, a mandatory leaf, a leafref)
YANG_VERDICTS = {"wrong type", "key-level update replaces the entry", "interface on a missing port"}


@pytest.mark.parametrize(("case", "kwargs", "reason"), INVALID_SETS, ids=[c[0] for c in INVALID_SETS])
def test_invalid_set_is_rejected_and_changes_nothing(lab: dict[str, Any], case: str, kwargs: dict[str, Any],
                                                     reason: str) -> None:
    with client(lab, "leaf2") as gc:
        before = full_config(gc)
        with pytest.raises(Exception) as err:
            gc.set(encoding="json_ietf", **kwargs)
        assert full_config(gc) == before
    if case in YANG_VERDICTS and (why := without_yang()) is not None:
        pytest.skip(why)
    assert reason in str(err.value)


def test_delete_of_a_missing_path_is_skipped(lab: dict[str, Any]) -> None:
    """sonic-gnmi's checkpoint: a delete whose path is not there is left out of the patch."""
    with client(lab, "leaf2") as gc:
        before = full_config(gc)
        gc.set(delete=["/sonic-db:CONFIG_DB/localhost/PORT/Ethernet999"], encoding="json_ietf")
        assert full_config(gc) == before


def test_values_must_be_json_ietf(lab: dict[str, Any]) -> None:
    from pygnmi.spec.v080 import gnmi_pb2

    with client(lab, "leaf2") as gc:
        req = gnmi_pb2.SetRequest(update=[gnmi_pb2.Update(
            path=gnmi_pb2.Path(origin="sonic-db", elem=[gnmi_pb2.PathElem(name=n) for n in
                                                         ("CONFIG_DB", "localhost", "PORT", "Ethernet128", "mtu")]),
            val=gnmi_pb2.TypedValue(string_val="9100"))])
        meta = [("username", "admin"), ("password", "YourPaSsWoRd")]
        with pytest.raises(Exception, match="Fail to parse"):
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
                    val = upd.get("val", {})  # sonic-gnmi's shape: {peer: {fields}} for a table
                    states = [v.get("state") for v in val.values() if isinstance(v, dict)] \
                        if isinstance(val, dict) else []
                    if any(x and x != "Established" for x in states) and "down" not in seen:
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
                gc.set(update=[(f"/sonic-db:CONFIG_DB/localhost/BGP_GLOBALS_AF_NETWORK/{key.replace('/', '~1')}", {})
                               for key in new_networks], encoding="json_ietf")
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
    """SAMPLE at sonic-gnmi's minimum, 1 s; below it the stream ends with "invalid interval"."""
    got: list[float] = []
    with client(lab, "spine2") as gc:
        from pygnmi.create_gnmi_path import gnmi_path_generator
        from pygnmi.spec.v080 import gnmi_pb2

        # pygnmi's stream iterator swallows a stream's error: send this one through the stub
        too_fast = gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(mode=gnmi_pb2.SubscriptionList.STREAM,
            subscription=[gnmi_pb2.Subscription(
                path=gnmi_path_generator("/sonic-db:STATE_DB/localhost/PORT_TABLE/Ethernet0/netdev_oper_status"),
                mode=gnmi_pb2.SubscriptionMode.SAMPLE, sample_interval=200_000_000)]))
        meta = [("username", "admin"), ("password", "YourPaSsWoRd")]
        with pytest.raises(Exception, match="invalid interval: 200ms"):
            for _ in gc._gNMIclient__stub.Subscribe(iter([too_fast]), metadata=meta, timeout=10):
                pass
        stream = gc.subscribe_stream(subscribe={
            "subscription": [{"path": "/sonic-db:STATE_DB/localhost/PORT_TABLE/Ethernet0/netdev_oper_status",
                              "mode": "sample", "sample_interval": 1_000_000_000}],
            "mode": "stream", "encoding": "json_ietf"})
        start = time.monotonic()
        for msg in stream:
            if msg.get("update", {}).get("update"):
                got.append(time.monotonic() - start)
            if len(got) >= 3 or time.monotonic() - start > 6:
                break
        stream.close()
    assert len(got) >= 3
    assert 1.5 < got[-1] - got[0] < 3.5  # a sample a second


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
