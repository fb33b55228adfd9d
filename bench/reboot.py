#!/usr/bin/env python3
"""What a gNOI reboot of a leaf costs, COLD and WARM, as an operator sees it. Prints one JSON document.

    python bench/reboot.py                     # the lab file's default phases (shutdown 5 s, boot 30 s)
    python bench/reboot.py --shutdown-s 2 --boot-s 6

On a 2 x 2 Clos (one server per leaf, no BFD), leaf1 is rebooted over gNOI System.Reboot, first COLD,
then WARM with BGP graceful restart turned on in its running CONFIG_DB (BGP_GLOBALS graceful_restart_enable,
gr_preserve_fw_state) and its sessions reset so that the capability is exchanged. Meanwhile server1
(behind leaf1) pings server2 (behind leaf2) once every 50 ms. For each method:
- management_silent_s: from the first RebootStatus the switch did not answer to the first it answered
  again (the lab file's boot_s, a model, plus what the boot itself takes);
- bgp_all_established_s: from the request until every BGP session of leaf1 is Established;
- data_plane_outage_s: from the first failed probe to the last (0: none failed).
The shutdown and boot phases are the lab file's `reboot:` (twin.model.lab.RebootSettings): a model of
what a namespace does not go through; the routing and forwarding figures are FRR's and the kernel's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from twin.gnmi.gnoi import SystemClient, await_reboot  # noqa: E402  (bench/ is a folder of scripts)
from twin.host.poll import wait_until  # noqa: E402
from twin.lab.running import RunningLab  # noqa: E402

TWIN = [sys.executable, "-m", "twin"]
LAB = "rbbench"


def twin(*args: str) -> str:
    return subprocess.run([*TWIN, *args], check=True, capture_output=True, text=True, cwd=REPO).stdout


def netns(node: str, *cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", f"tw.{LAB}.{node}", *cmd], capture_output=True, text=True)


def established() -> bool:
    try:
        summary = json.loads(twin("exec", "--name", LAB, "leaf1", "--", "vtysh", "-c", "show bgp summary json"))
    except (subprocess.CalledProcessError, ValueError):
        return False
    peers = [p for family in summary.values() if isinstance(family, dict)
             for p in (family.get("peers") or {}).values()]
    return bool(peers) and all(p.get("state") == "Established" for p in peers)


def helpers_know() -> bool:
    """Every spine has leaf1's session Established with leaf1's graceful restart learnt, and the servers
    reach each other again."""
    for spine in ("spine1", "spine2"):
        peers = json.loads(twin("exec", "--name", LAB, spine, "--", "vtysh", "-c", "show bgp neighbors json"))
        mine = [p for p in peers.values() if isinstance(p, dict) and p.get("nbrDesc") == "leaf1"]
        if not mine or any(p.get("bgpState") != "Established" or
                           p.get("gracefulRestartInfo", {}).get("remoteGrMode") != "Restart" for p in mine):
            return False
    dst = json.loads(netns("server2", "ip", "-4", "-j", "addr", "show", "eth1").stdout)[0]["addr_info"][0]["local"]
    return netns("server1", "ping", "-c1", "-W0.3", dst).returncode == 0


def wait(cond: Callable[[], bool], timeout: float) -> None:
    wait_until(cond, timeout, 0.1,
               lambda: SystemExit(f"bench/reboot.py: {cond.__name__} never held in {timeout:.0f} s"))


def measure(method: str) -> dict[str, Any]:
    target = RunningLab.load(LAB).gnmi_target("leaf1")
    assert target is not None
    dst = json.loads(netns("server2", "ip", "-4", "-j", "addr", "show", "eth1").stdout)[0]["addr_info"][0]["local"]
    probes: list[tuple[float, bool]] = []
    stop = threading.Event()

    def ping() -> None:
        while not stop.is_set():
            probes.append((time.time(), netns("server1", "ping", "-c1", "-W0.1", dst).returncode == 0))
            stop.wait(0.05)

    prober = threading.Thread(target=ping, daemon=True)
    prober.start()
    time.sleep(1)
    began = time.time()
    SystemClient("leaf1", target).reboot(method, "bench/reboot.py")
    watch = await_reboot(SystemClient("leaf1", target), 600, 0.1)
    wait(established, 300)
    bgp = time.time() - began
    time.sleep(3)
    stop.set()
    prober.join()
    failed = [t for t, ok in probes if not ok]
    return {"method": method, "management_silent_s": round(watch.silent_s or 0.0, 2),
            "bgp_all_established_s": round(bgp, 2),
            "data_plane_outage_s": round(max(failed) - min(failed), 2) if failed else 0.0,
            "probes": len(probes), "probes_failed": len(failed),
            "failed_at_s": [round(t - began, 2) for t in failed][:20]}  # from the request


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shutdown-s", type=float, default=5.0)
    parser.add_argument("--boot-s", type=float, default=30.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "fabric.yaml").write_text("name: fab\nkind: clos\n"
                                            "clos: {spines: 2, leaves: 2, servers_per_leaf: 1}\n")
        (folder / "lab.yaml").write_text(f"name: fab\ntopology: {folder / 'fabric.yaml'}\n"
                                         f"reboot: {{shutdown_s: {args.shutdown_s:g}, boot_s: {args.boot_s:g}}}\n")
        twin("up", str(folder / "lab.yaml"), "--name", LAB, "--json")
        try:
            cold = measure("COLD")
            twin("exec", "--name", LAB, "leaf1", "--", "sonic-db-cli", "CONFIG_DB", "hset", "BGP_GLOBALS|default",
                 "graceful_restart_enable", "true", "gr_preserve_fw_state", "true", "gr_restart_time", "240")
            time.sleep(3)
            twin("exec", "--name", LAB, "leaf1", "--", "vtysh", "-c", "clear bgp *")
            wait(helpers_know, 120)
            warm = measure("WARM")
        finally:
            subprocess.run([*TWIN, "down", "--name", LAB], capture_output=True, cwd=REPO)
    print(json.dumps({"lab": "clos 2x2, 1 server per leaf", "reboot": {"shutdown_s": args.shutdown_s,
                                                                      "boot_s": args.boot_s},
                      "cold": cold, "warm": warm}, indent=1))


if __name__ == "__main__":
    main()
