#!/usr/bin/env python3
"""gNMI figures on the default lab. Prints one JSON document.

- push_all_s: full-config replace pushed to all 12 switches in parallel (`twin push`), wall time
- get_all_state_s: a Get of all of STATE_DB, APPL_DB and COUNTERS_DB from every switch, in parallel
- on_change_ms: link taken down on leaf1 -> on-change notification of PORT_TABLE oper_status down
  (and of the BGP session going down, measured from when FRR reports it), median of 5
- agent_rss_mib_per_switch: the agent process's RSS divided by the switches it serves
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from twin.gnmi.client import SwitchClient  # noqa: E402
from twin.runtime.state import load_plan, load_state  # noqa: E402
from twin.switch.agent_process import gnmi_target  # noqa: E402

TWIN = [sys.executable, "-m", "twin"]
LAB = "benchgnmi"


def _pygnmi(target: dict[str, Any]) -> Any:
    from pygnmi.client import gNMIclient

    t = dict(target)
    return gNMIclient(target=(t.pop("host"), t.pop("port")), **t)


def on_change_ms(state: Any) -> tuple[float, float]:
    """(link down -> PORT_TABLE notification, FRR session down -> NEIGH_STATE_TABLE notification) in ms."""
    seen: dict[str, float] = {}
    target = gnmi_target(state, "leaf1")
    assert target is not None
    ns = state.node("leaf1").netns
    with _pygnmi(target) as gc:
        stream = gc.subscribe_stream(subscribe={"subscription": [
            {"path": "/sonic-db:STATE_DB/localhost/PORT_TABLE", "mode": "on_change"},
            {"path": "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE", "mode": "on_change"}],
            "mode": "stream", "encoding": "json_ietf"})

        def watch() -> None:
            for msg in stream:
                for upd in msg.get("update", {}).get("update", []):
                    val = upd.get("val")
                    if isinstance(val, dict) and val.get("oper_status") == "down":
                        seen.setdefault("port", time.monotonic())
                    if isinstance(val, dict) and val.get("state") not in (None, "Established") and "peerType" in val:
                        seen.setdefault("bgp", time.monotonic())
                if "port" in seen and "bgp" in seen:
                    return

        t = threading.Thread(target=watch, daemon=True)
        t.start()
        time.sleep(1.0)
        t0 = time.monotonic()
        subprocess.run(["ip", "-n", ns, "link", "set", "dev", "Ethernet128", "down"], check=True)
        frr_down = None
        rundir = f"/run/twin/{state.lab}/nodes/leaf1"
        while frr_down is None and time.monotonic() - t0 < 15:
            out = json.loads(subprocess.run(["vtysh", "--vty_socket", rundir, "-c", "show bgp summary json"],
                                            capture_output=True, text=True).stdout)
            if out["ipv4Unicast"]["peers"]["10.0.0.64"]["state"] != "Established":
                frr_down = time.monotonic()
            time.sleep(0.002)
        t.join(timeout=5)
        subprocess.run(["ip", "-n", ns, "link", "set", "dev", "Ethernet128", "up"], check=True)
        stream.close()
    port_ms = 1000 * (seen.get("port", float("nan")) - t0)
    bgp_ms = 1000 * (seen.get("bgp", float("nan")) - (frr_down or float("nan")))
    return port_ms, bgp_ms


def main() -> None:
    # pygnmi's stream thread raises CANCELLED when a subscription is closed on purpose.
    threading.excepthook = lambda args: None
    subprocess.run([*TWIN, "down", "--name", LAB], cwd=REPO, capture_output=True)
    up = subprocess.run([*TWIN, "up", "labs/default.yaml", "--name", LAB, "--json"], cwd=REPO, capture_output=True,
                        text=True)
    if up.returncode != 0:
        print(json.dumps({"error": up.stderr[-2000:]}))
        return
    try:
        state = load_state(LAB)
        assert state is not None
        load_plan(LAB)
        switches = [n.name for n in state.nodes if n.kind == "switch"]
        push_times = []
        for _ in range(3):
            t0 = time.monotonic()
            subprocess.run([*TWIN, "push", "--name", LAB, "--json"], cwd=REPO, capture_output=True, check=True)
            push_times.append(time.monotonic() - t0)

        def get_all(name: str) -> int:
            target = gnmi_target(state, name)
            assert target is not None
            with SwitchClient(name, target) as sw:
                return sum(len(json.dumps(sw.get(f"/sonic-db:{db}/localhost/")))
                           for db in ("STATE_DB", "APPL_DB", "COUNTERS_DB"))

        get_times = []
        for _ in range(3):
            t0 = time.monotonic()
            with ThreadPoolExecutor(max_workers=12) as pool:
                size = sum(pool.map(get_all, switches))
            get_times.append(time.monotonic() - t0)
        changes = [on_change_ms(state) for _ in range(5)]
        time.sleep(1)
        pid = int(Path(f"/run/twin/{LAB}/agent.pid").read_text())
        rss_kb = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if line.startswith("VmRSS:"))
        doc = {
            "switches": len(switches),
            "push_all_s": round(statistics.median(push_times), 3),
            "push_all_s_note": "includes the twin CLI's own start-up (python import) of about 0.4 s",
            "get_all_state_s": round(statistics.median(get_times), 3), "get_all_state_bytes": size,
            "on_change_link_down_to_port_notification_ms": round(statistics.median(c[0] for c in changes), 1),
            "on_change_frr_bgp_down_to_notification_ms": round(statistics.median(c[1] for c in changes), 1),
            "agent_rss_mib": round(rss_kb / 1024, 1),
            "agent_rss_mib_per_switch": round(rss_kb / 1024 / len(switches), 1),
        }
        print(json.dumps(doc, indent=2))
    finally:
        subprocess.run([*TWIN, "down", "--name", LAB], cwd=REPO, capture_output=True)


if __name__ == "__main__":
    main()
