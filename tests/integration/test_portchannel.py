"""PortChannels on a running lab: leaf1's two parallel links to spine1 bundled into PortChannel1 on both
ends (pushed over gNMI), with a BGP session over the PortChannel's address. The session comes up,
stays Established through one member's loss (traffic carried on by the other), the last member's loss
takes the PortChannel and the session down, min_links is honoured, and STATE_DB's LAG tables follow.
A 1 x 2 lab with two links per leaf-spine pair."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import clos_lab_file, netns_exec, running_lab, twin, twin_json, until

pytestmark = pytest.mark.needs_root
HOLD_S = 9   # the lab's BGP hold time
# switch -> (its ends of the two leaf1-spine1 links, the PortChannel's address, the peer's)
BUNDLE = {"leaf1": (("Ethernet128", "Ethernet132"), "10.0.0.251/31", "10.0.0.250"),
          "spine1": (("Ethernet0", "Ethernet4"), "10.0.0.250/31", "10.0.0.251")}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("pc")
    lab_file = clos_lab_file(folder, "spines: 1, leaves: 2, servers_per_leaf: 1, links_per_spine: 2")
    with running_lab(lab_file, "pc", check_clean=True) as name:
        yield name


def _bundled(lab: str, out: Path, min_links: int) -> Path:
    """The lab's configs with leaf1-spine1's links bundled: their addresses and sessions replaced by
    PortChannel1's."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(f"/run/twin/{lab}/nodes", out, ignore=shutil.ignore_patterns(
        "*.pid", "*.vty", "*.api", "*.sock", "*.log", "frr.conf"))
    for switch, (members, address, peer) in BUNDLE.items():
        path = out / switch / "config_db.json"
        db = json.loads(path.read_text())
        if "PORTCHANNEL" in db:   # bundled already (the configs the lab runs): min_links alone changes
            db["PORTCHANNEL"]["PortChannel1"]["min_links"] = str(min_links)
            path.write_text(json.dumps(db))
            continue
        olds = [k for k in db["INTERFACE"] if k.split("|")[0] in members]
        old_locals = {k.split("|")[1].split("/")[0] for k in olds if "|" in k}
        for key in olds:
            del db["INTERFACE"][key]
        sessions = [k for k, row in db["BGP_NEIGHBOR"].items() if row.get("local_addr") in old_locals]
        template = db["BGP_NEIGHBOR"][sessions[0]]
        for key in sessions:
            del db["BGP_NEIGHBOR"][key]
        db["BGP_NEIGHBOR"][f"default|{peer}"] = {**template, "local_addr": address.split("/")[0]}
        db["PORTCHANNEL"] = {"PortChannel1": {"admin_status": "up", "min_links": str(min_links)}}
        db["PORTCHANNEL_MEMBER"] = {f"PortChannel1|{m}": {} for m in members}
        db["PORTCHANNEL_INTERFACE"] = {"PortChannel1": {}, f"PortChannel1|{address}": {}}
        path.write_text(json.dumps(db))
    return out


def _neighbor(lab: str) -> dict[str, Any]:
    out = twin("exec", "--name", lab, "leaf1", "--", "vtysh", "-c", "show bgp neighbors 10.0.0.250 json").stdout
    return dict(json.loads(out or "{}").get("10.0.0.250", {}))


def _established(lab: str) -> bool:
    return _neighbor(lab).get("bgpState") == "Established"


def _row(lab: str, switch: str, key: str, db: int = 6) -> dict[str, str]:
    out = twin("exec", "--name", lab, switch, "--", "redis-cli", "-n", str(db), "hgetall", key).stdout.split()
    return dict(zip(out[::2], out[1::2], strict=False))


def _lag(lab: str) -> dict[str, str]:
    """PortChannel1's oper_status and each member's status, on both ends, as STATE_DB holds them."""
    out = {}
    for switch, (members, _, _) in BUNDLE.items():
        out[switch] = _row(lab, switch, "LAG_TABLE|PortChannel1").get("oper_status", "")
        for m in members:
            out[f"{switch}:{m}"] = _row(lab, switch, f"LAG_MEMBER_TABLE|PortChannel1|{m}").get("status", "")
    return out


def _set(lab: str, port: str, up: bool) -> None:
    """A link-down drill's fault on one of leaf1's members (the spine's end loses its carrier)."""
    netns_exec(lab, "leaf1", "ip", "link", "set", "dev", port, "up" if up else "down").check_returncode()


def _longest_gap_ms(lab: str, act: Any, seconds: int = 4) -> float:
    """The longest run of lost pings (every 10 ms, leaf1 to spine1's PortChannel address) while `act` runs."""
    ping = subprocess.Popen(["ip", "netns", "exec", f"tw.{lab}.leaf1", "ping", "-D", "-O", "-i", "0.01", "-W", "0.05",
                             "-w", str(int(seconds)), "10.0.0.250"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    act()
    out, _ = ping.communicate(timeout=seconds + 10)
    answered = [int(s) for s in re.findall(r"icmp_seq=(\d+) ttl", out)]
    assert answered, out
    gaps = [b - a - 1 for a, b in itertools.pairwise(answered)]
    return max(gaps, default=0) * 10.0


def test_bgp_over_a_portchannel_survives_a_member_and_falls_with_the_last(lab: str, tmp_path: Path) -> None:
    pushed = twin_json("push", "--name", lab, "--configs", str(_bundled(lab, tmp_path / "c1", min_links=1)))
    assert pushed["ok"], pushed
    assert until(lambda: _established(lab), timeout=30), _neighbor(lab)
    every_up = {"leaf1": "up", "spine1": "up",
                **{f"{s}:{m}": "enabled" for s, (ms, _, _) in BUNDLE.items() for m in ms}}
    assert until(lambda: _lag(lab) == every_up, timeout=10), _lag(lab)
    assert _row(lab, "spine1", "LAG_TABLE:PortChannel1", db=0) == {"admin_status": "up", "oper_status": "up",
                                                                  "mtu": "9100"}
    sessions = _neighbor(lab)["connectionsEstablished"]

    # one member lost, whichever carries the traffic: the session stays, traffic goes on over the other
    for lost in ("Ethernet128", "Ethernet132"):
        gap = _longest_gap_ms(lab, lambda lost=lost: _set(lab, lost, up=False))
        spine_lost = "Ethernet0" if lost == "Ethernet128" else "Ethernet4"
        assert until(lambda lost=lost, s=spine_lost: (lag := _lag(lab))[f"leaf1:{lost}"] == lag[f"spine1:{s}"]
                     == "disabled" and lag["leaf1"] == lag["spine1"] == "up", timeout=10), _lag(lab)
        print(f"{lost} lost: longest gap {gap:.0f} ms")
        assert gap < 1000, gap
        assert _established(lab) and _neighbor(lab)["connectionsEstablished"] == sessions
        _set(lab, lost, up=True)
        assert until(lambda: _lag(lab) == every_up, timeout=10), _lag(lab)
    # the last member lost: the PortChannel goes down on both ends, and so does the session
    _set(lab, "Ethernet128", up=False)
    started = time.monotonic()
    _set(lab, "Ethernet132", up=False)
    assert until(lambda: _lag(lab)["leaf1"] == _lag(lab)["spine1"] == "down", timeout=10), _lag(lab)
    assert until(lambda: not _established(lab), timeout=HOLD_S + 3), _neighbor(lab)
    print(f"last member lost: session down after {time.monotonic() - started:.1f} s")
    for port in ("Ethernet128", "Ethernet132"):
        _set(lab, port, up=True)
    assert until(lambda: _established(lab), timeout=30), _neighbor(lab)

    # min_links 2: one member lost takes the PortChannel down, its return brings it back
    assert twin_json("push", "--name", lab, "--configs", str(_bundled(lab, tmp_path / "c2", min_links=2)))["ok"]
    assert until(lambda: _row(lab, "leaf1", "LAG_TABLE|PortChannel1").get("min_links") == "2", timeout=10)
    assert until(lambda: _lag(lab) == every_up, timeout=10), _lag(lab)
    _set(lab, "Ethernet132", up=False)
    assert until(lambda: _lag(lab) == {"leaf1": "down", "spine1": "down",
                                       **{k: "disabled" for k in every_up if ":" in k}}, timeout=10), _lag(lab)
    assert until(lambda: not _established(lab), timeout=HOLD_S + 3), _neighbor(lab)
    _set(lab, "Ethernet132", up=True)
    assert until(lambda: _lag(lab) == every_up, timeout=10), _lag(lab)
    assert until(lambda: _established(lab), timeout=30), _neighbor(lab)
