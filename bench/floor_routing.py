#!/usr/bin/env python3
"""What the routing config SONiC renders costs on its own: the bare floor (floor_clos.py) as it is,
against the same floor whose switches' FRR configs carry what twin renders from config_db as SONiC
does, in alternating rounds of one run. Prints one JSON document.

    python bench/floor_routing.py --floor ../shared/bench/floor_clos.py --spines 64 --leaves 128 --rounds 1

What the second floor adds to each switch's frr.conf (twin's rendering of the same fabric,
`twin plan topologies/fabric-64x128.yaml`):
- every spine's loopback announced (`network`), as every leaf's is: 192 prefixes instead of 128;
- `FROM_BGP_PEER_V4` in and `TO_BGP_PEER_V4` out on the PEER_V4 peer group, which every neighbour
  joins, with its description, `update-source`, `timers 3 9` and `timers connect 10`;
- `RM_SET_SRC` on the routes zebra installs (`ip protocol bgp route-map RM_SET_SRC`);
- `frr defaults traditional`, `bgp log-neighbor-changes`, `timers bgp 3 9`, syslog and microsecond
  timestamps, and routes with their next hops inline (`no zebra nexthop kernel enable`).
Everything else (namespaces, veths, addresses, the daemons, the convergence test, memory) is the
floor's own code, run unchanged: this script loads floor_clos.py and runs its main block with only
its `conf` wrapped. So twin's time against this floor is what twin's pipeline costs beyond the
routing work its configs ask for.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import runpy
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab_up import FLOOR_SCRIPT_ENV as FLOOR_ENV  # the floor a child run loads (this script is the child)
from lab_up import find_floor, floor

Link = tuple[int, int, str, str, str, str]  # the floor's links: spine, leaf, ifaces, spine ip, leaf ip


def sonic_routing(text: str, node: str, links: list[Link], loopback: str) -> str:
    """The floor's frr.conf of `node` with what twin's rendering adds (see the module's doc)."""
    spine = node.startswith("s")
    local = {(ipb if spine else ipa): (ipa if spine else ipb)                  # peer ip -> own ip
             for i, j, _, _, ipa, ipb in links if node in (f"s{i}", f"l{j}")}
    out: list[str] = []
    for line in text.splitlines():
        if line == "frr defaults datacenter":
            out += ["frr defaults traditional"]
            continue
        if line.startswith("router bgp"):
            out += ["log syslog informational", "log timestamp precision 6", "no zebra nexthop kernel enable",
                    "route-map FROM_BGP_PEER_V4 permit 100", "exit", "route-map TO_BGP_PEER_V4 permit 100", "exit",
                    "route-map RM_SET_SRC permit 10", f" set src {loopback}", "exit",
                    "ip protocol bgp route-map RM_SET_SRC", line,
                    " bgp log-neighbor-changes", " timers bgp 3 9", " neighbor PEER_V4 peer-group"]
            continue
        out.append(line)
        words = line.split()
        if line.startswith(" neighbor ") and words[2] == "remote-as":
            peer = words[1]
            out += [f" neighbor {peer} peer-group PEER_V4", f" neighbor {peer} description AS{words[3]}",
                    f" neighbor {peer} update-source {local[peer]}", f" neighbor {peer} timers 3 9",
                    f" neighbor {peer} timers connect 10"]
        if line == " address-family ipv4 unicast":
            out += ["  neighbor PEER_V4 activate", "  neighbor PEER_V4 route-map FROM_BGP_PEER_V4 in",
                    "  neighbor PEER_V4 route-map TO_BGP_PEER_V4 out"]
            if spine:
                out.append(f"  network {loopback}/32")
    return "\n".join(out) + "\n"


def _main_block(script: Path) -> ast.Module:
    """The floor's `if __name__=="__main__":` body, to run in its own module's namespace."""
    tree = ast.parse(script.read_text(), str(script))
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test):
            return ast.Module(body=stmt.body, type_ignores=[])
    raise SystemExit(f"{script}: no `if __name__ == '__main__'` block to run")


def child(mode: str) -> None:
    """Run the floor named by $TWIN_FLOOR_SCRIPT (`run` or `clean`) with its `conf` wrapped."""
    script = Path(os.environ[FLOOR_ENV])
    g = runpy.run_path(str(script), run_name="floor_clos")
    conf: Callable[[str, list[Link]], str] = g["conf"]
    ns: Callable[..., Any] = g["ns"]

    def wrapped(n: str, links: list[Link]) -> str:
        d = conf(n, links)
        index = int(n[1:])
        if n.startswith("s"):  # the floor's spines have no loopback address; SONiC's have Loopback0
            loopback = f"1.1.{index // 256}.{index % 256}"
            ns(n, f"ip addr add {loopback}/32 dev lo")
        else:
            loopback = f"172.16.{index // 256}.{index % 256}"
        path = Path(d) / "frr.conf"
        path.write_text(sonic_routing(path.read_text(), n, links, loopback))
        return d

    g["conf"] = wrapped
    sys.argv = [str(script), mode]
    g["__name__"] = "__main__"
    exec(compile(_main_block(script), str(script), "exec"), g)


def main() -> None:
    if len(sys.argv) == 2 and sys.argv[1] in ("run", "clean") and FLOOR_ENV in os.environ:
        child(sys.argv[1])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floor", help="floor_clos.py (default: $TWIN_FLOOR)")
    parser.add_argument("--spines", type=int, default=4)
    parser.add_argument("--leaves", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the two floors")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds each floor run may take")
    args = parser.parse_args()
    script, why = find_floor(args.floor)
    if script is None:
        print(json.dumps({"error": why}))
        sys.exit(2)
    os.environ[FLOOR_ENV] = str(script.resolve())
    runs: dict[str, list[dict[str, Any]]] = {"floor": [], "floor_sonic_routing": []}
    for _ in range(args.rounds):
        runs["floor"].append(floor(script, args.spines, args.leaves, None, args.timeout))
        runs["floor_sonic_routing"].append(floor(Path(__file__).resolve(), args.spines, args.leaves, None,
                                                 args.timeout))
    doc: dict[str, Any] = {"spines": args.spines, "leaves": args.leaves, "bfd": False, "runs": runs}
    totals = {k: [r["seconds_total"] for r in v if r["ok"]] for k, v in runs.items()}
    for key, values in totals.items():
        if values:
            doc[f"{key}_seconds_total_median"] = round(statistics.median(values), 2)
    if all(totals.values()):
        doc["ratio_sonic_routing_to_floor"] = round(statistics.median(totals["floor_sonic_routing"])
                                                    / statistics.median(totals["floor"]), 2)
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
