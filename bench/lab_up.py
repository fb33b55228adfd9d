#!/usr/bin/env python3
"""Seconds from `twin up` to healthy, and memory per switch, as ratios to the bare floor measured in
the same run. Prints one JSON document.

    python bench/lab_up.py            # the default lab (4 x 8 Clos, 16 servers) against the floor's 4 x 8
    python bench/lab_up.py --scale    # also the 64 x 128 control plane against the floor's 64 x 128 (minutes)
    python bench/lab_up.py --sonic-routing   # each round also runs the floor with SONiC's routing config
    python bench/lab_up.py --against main~3  # each round also runs twin as it was at that git revision
    python bench/lab_up.py --scale --scale-size 32x64   # the scale lab and its floors at another size

--scale-size runs labs/scale.yaml's lab and topology with only the numbers of spines and leaves
changed (a copy in a temporary folder), against floors of the same size: for a machine that cannot
carry 64 x 128, floor included, a figure at the largest size it can. Its figures are `scale_SxL`.

With --against REV each round also brings the lab up with twin as it was at REV (a git worktree of the
repository, run with the same Python and packages): `ratio_time_to_against` is this twin's median over
that one's, so a change's cost to bring-up is measured in the same run, on the same load.

With --sonic-routing each round also runs the floor whose FRR configs carry the routing config twin
renders as SONiC does (bench/floor_routing.py: spine loopbacks announced, route-maps on every
session, RM_SET_SRC, next hops inline): twin's time over that floor's is what twin's own pipeline
costs (databases, agent, checks), apart from the routing work SONiC's config asks of FRR.

At 64 x 128 both run without BFD (labs/scale.yaml's fabric has it off): at SONiC's 300 ms x 3 the
fabric's 16,384 session ends need more CPU in bfdd alone than a 2-CPU machine has, for the floor as
for twin (bench/bfd_capacity.py measures it).

The floor is a bare FRR-in-namespaces Clos with BFD and no management plane (floor_clos.py, found with
--floor or $TWIN_FLOOR; without it twin is measured alone and the document says why there are no ratios).
Rounds alternate floor, twin, floor, twin, ... so both see the same load; medians are reported with
the spread (min, max). Time ratio: twin's seconds from the command to healthy over the floor's total
(nothing to full ECMP FIB, as it reports it). Memory ratio: twin's PSS per switch, its databases and its
share of the lab's agent included, over the floor's PSS per switch (zebra, bgpd, bfdd).

Memory is read from /proc/<pid>/smaps_rollup of every process inside each switch namespace:
RSS counts shared libraries once per process, PSS shares them out fairly.

Every run starts once the kernel is done destroying the namespaces of the run before (it does so
after `ip netns delete` returns, under the rtnl lock the next run's `ip` commands need), and records what was
still there when it started (processes in other namespaces, named namespaces) and whether a
neighbour table was full during it (bench/kernel_state.py); `runs_started_clean` and
`runs_with_neighbour_table_full` sum them up.

Every run records the CPU the machine spent while it ran, split by whose it was (`cpu_seconds`,
bench/process_cpu.py), and, read after it before the lab is taken down, what FRR's event loops spent
theirs on (`frr_threads`, bench/frr_threads.py); `frr_vty_cpu_seconds` is the part bgpd and zebra
spent answering on their vty, twin's runs against the floor's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from frr_threads import frr_threads, vty_dirs
from kernel_state import clean_start, is_clean, neighbour_table_fulls
from process_cpu import ProcessCpu

REPO = Path(__file__).resolve().parents[1]
TWIN = [sys.executable, "-m", "twin"]


def compile_bytecode(repo: Path) -> str:
    """twin's bytecode in `repo`, compiled before any run as scripts/install-deps.sh compiles it for a
    user: where PYTHONDONTWRITEBYTECODE is set, each `twin up` would otherwise compile its imports again,
    a cost no installed twin pays (the floors are one script each)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "twin")], check=True,
                   capture_output=True)
    return f"compiled before the runs (python -m compileall {repo.name}/twin)"


FLOOR_SCRIPT_ENV = "TWIN_FLOOR_SCRIPT"  # the floor floor_routing.py loads when run as a floor itself
SONIC_ROUTING_FLOOR = Path(__file__).resolve().parent / "floor_routing.py"


def _kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def switch_memory(lab: str) -> dict[str, Any]:
    state = json.loads(Path(f"/run/twin/{lab}/state.json").read_text())
    rss, pss, redis = [], [], []
    for node in state["nodes"]:
        if node["kind"] != "switch":
            continue
        out = subprocess.run(["ip", "netns", "pids", node["netns"]], capture_output=True, text=True).stdout
        pids = [int(p) for p in out.split()]
        rss.append(sum(_kb(p, "Rss") for p in pids) / 1024)
        pss.append(sum(_kb(p, "Pss") for p in pids) / 1024)
        redis.append(sum(_kb(p, "Pss") for p in pids if _comm(p) == "redis-server") / 1024)
    agent = _agent_pid(lab)
    agent_pss = _kb(agent, "Pss") / 1024 if agent else 0.0
    return {
        "switches": len(rss),
        "rss_mib_per_switch_mean": round(sum(rss) / len(rss), 1), "rss_mib_per_switch_max": round(max(rss), 1),
        "pss_mib_per_switch_mean": round(sum(pss) / len(pss), 1), "pss_mib_per_switch_max": round(max(pss), 1),
        "pss_mib_total": round(sum(pss), 1),
        # SONiC's databases (one redis-server per switch, counted in the figures above) and the lab's
        # agent (gNMI, SSH and every switch's config daemons and state producers: one process).
        "redis_pss_mib_per_switch_mean": round(sum(redis) / len(redis), 2),
        "agent_pss_mib": round(agent_pss, 1),
        "agent_pss_mib_per_switch": round(agent_pss / len(rss), 2),
    }


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _agent_pid(lab: str) -> int | None:
    try:
        return int(Path(f"/run/twin/{lab}/agent.pid").read_text())
    except (OSError, ValueError):
        return None


def bench(lab_file: str, name: str, timeout: float, *up_args: str,
          measure: Any = None, repo: Path = REPO) -> dict[str, Any]:
    """Bring the lab up and down once; `measure(name)` adds figures while it is up. `repo`: the
    checkout whose twin runs (another revision's worktree, for --against)."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    subprocess.run([*TWIN, "down", "--name", name], cwd=repo, env=env, capture_output=True)
    start = time.monotonic()
    with ProcessCpu() as cpu:
        try:
            proc = subprocess.run([*TWIN, "up", lab_file, "--name", name, "--json", *up_args], cwd=repo,
                                  env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:  # `twin up` was killed: its lab is left to `twin down` below
            proc = subprocess.CompletedProcess([], -9, "", f"twin up did not finish in {timeout:.0f} s")
    wall = time.monotonic() - start
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        result = {"healthy": False, "error": proc.stderr[-2000:]}
    doc: dict[str, Any] = {"lab": lab_file, "healthy": result.get("healthy", False),
                           "seconds_up_to_healthy": round(wall, 2),
                           "seconds_waiting_for_convergence": result.get("seconds"),
                           "bgp": result.get("bgp"), "phases": result.get("phases"),
                           "cpu_seconds": cpu.seconds()}
    if proc.returncode not in (0, 1) or "error" in result:
        doc["error"] = result.get("error") or proc.stderr[-2000:]
    if proc.returncode in (0, 1):
        doc["memory"] = switch_memory(name)
        doc["frr_threads"] = frr_threads(vty_dirs(Path(f"/run/twin/{name}")))
        if measure is not None:
            doc.update(measure(name))
    t0 = time.monotonic()
    subprocess.run([*TWIN, "down", "--name", name], cwd=repo, env=env, capture_output=True)
    doc["seconds_down"] = round(time.monotonic() - t0, 2)
    return doc


FLOOR_LINE = re.compile(r"setup (?P<setup>[\d.]+)s; daemon launch (?P<launch>[\d.]+)s; "
                        r"launch->full ECMP FIB (?P<converge>[\d.]+)s; total (?P<total>[\d.]+)s")
FLOOR_MEMORY = re.compile(r"total PSS (?P<pss>[\d.]+) MiB")


def find_floor(option: str | None) -> tuple[Path | None, str]:
    """The floor script, or None and why not."""
    given = option or os.environ.get("TWIN_FLOOR")
    if not given:
        return None, "no floor: pass --floor PATH or set TWIN_FLOOR to floor_clos.py (../shared/bench/floor_clos.py)"
    path = Path(given)
    if not path.is_file():
        return None, f"no floor: {path} (from {'--floor' if option else 'TWIN_FLOOR'}) is not a file"
    return path, ""


@contextlib.contextmanager
def neighbour_tables(spines: int, leaves: int) -> Iterator[None]:
    """The kernel's neighbour tables sized for the floor as twin sizes them for a lab of the same size
    (twin.runtime.neighbours: 4 entries per link and per switch; thresh2 and thresh3 twice and four
    times that), and put back afterwards. They are global across namespaces: at 64 x 128 the host's
    default (gc_thresh3 = 1024) overflows and the floor never converges."""
    need = 4 * spines * leaves + 4 * (spines + leaves)
    want = {"gc_thresh1": need, "gc_thresh2": 2 * need, "gc_thresh3": 4 * need}
    paths = {Path(f"/proc/sys/net/{family}/neigh/default/{key}"): value
             for family in ("ipv4", "ipv6") for key, value in want.items()}
    before = {path: int(path.read_text()) for path in paths}
    try:
        for path, value in paths.items():
            if before[path] < value:
                path.write_text(str(value))
        yield
    finally:
        for path, value in before.items():
            path.write_text(str(value))


def floor(script: Path, spines: int, leaves: int, bfd_ms: int | None, timeout: float) -> dict[str, Any]:
    """One run of the bare floor from nothing to full ECMP, then its clean-up (`bfd_ms` None: no BFD)."""
    env = {**os.environ, "S": str(spines), "L": str(leaves), "BFD": "0" if bfd_ms is None else "1",
           "BFD_MS": str(bfd_ms or 300)}
    with tempfile.TemporaryDirectory(prefix="twin-floor-") as run_dir, neighbour_tables(spines, leaves):
        env["LAB_RUN"] = run_dir
        start = time.monotonic()
        try:
            with ProcessCpu() as cpu:
                proc = subprocess.run([sys.executable, str(script), "run"], env=env, capture_output=True,
                                      text=True, timeout=timeout)
            wall = time.monotonic() - start
            threads = frr_threads(vty_dirs(Path(run_dir)))   # its daemons run until `clean`
        finally:
            subprocess.run([sys.executable, str(script), "clean"], env=env, capture_output=True, timeout=300)
    times, memory = FLOOR_LINE.search(proc.stdout), FLOOR_MEMORY.search(proc.stdout)
    if proc.returncode != 0 or times is None or memory is None or "TIMEOUT" in proc.stdout:
        return {"ok": False, "error": (proc.stdout + proc.stderr)[-2000:]}
    switches = spines + leaves
    return {"ok": True, "seconds_total": float(times["total"]), "seconds_wall": round(wall, 2),
            "seconds_setup": float(times["setup"]), "seconds_launch": float(times["launch"]),
            "seconds_launch_to_full_fib": float(times["converge"]),
            "pss_mib_per_switch": round(float(memory["pss"]) / switches, 2), "cpu_seconds": cpu.seconds(),
            "frr_threads": threads}


def spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2),
            "max": round(max(values), 2)}


def twin_pss_per_switch(doc: dict[str, Any]) -> float:
    """PSS per switch with the switch's databases and its share of the lab's agent."""
    memory = doc["memory"]
    return float(memory["pss_mib_per_switch_mean"]) + float(memory["agent_pss_mib_per_switch"])


def compare(twins: list[dict[str, Any]], floors: list[dict[str, Any]],
            routing_floors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Medians and spreads of both, and twin's ratios to the floor (median over median); with
    `routing_floors` (the floor with SONiC's routing config), those and twin's time over theirs."""
    doc = _compare_floor(twins, floors)
    if routing_floors is None:
        return doc
    good = [f["seconds_total"] for f in routing_floors if f["ok"]]
    doc["floor_sonic_routing_runs_ok"] = f"{len(good)}/{len(routing_floors)}"
    doc["cpu_against_sonic_routing_floor"] = cpu_comparison(healthy_runs(twins),
                                                            [f for f in routing_floors if f["ok"]])
    doc["frr_vty_cpu_seconds_against_sonic_routing_floor"] = vty_comparison(
        healthy_runs(twins), [f for f in routing_floors if f["ok"]])
    if good:
        doc["floor_sonic_routing_seconds_total"] = spread(good)
        median = doc["floor_sonic_routing_seconds_total"]["median"]
        if "floor_seconds_total" in doc:
            doc["ratio_time_sonic_routing_floor_to_floor"] = round(median / doc["floor_seconds_total"]["median"], 2)
        if "twin_seconds_up_to_healthy" in doc:
            doc["ratio_time_to_sonic_routing_floor"] = round(doc["twin_seconds_up_to_healthy"]["median"] / median, 2)
    return doc


def healthy_runs(twins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [t for t in twins if t["healthy"] and "memory" in t]


def cpu_comparison(twins: list[dict[str, Any]], floors: list[dict[str, Any]]) -> dict[str, Any]:
    """Twin's CPU against a floor's (medians of their runs' `cpu_seconds`), split in two: FRR's daemons,
    given the same routing config by the SONiC-routing floor, so their work differs only by how the
    bring-up went (sessions reset and updates sent again), and everything besides FRR (for twin its
    databases, its agent, `twin up` and what it runs; for the floor its script and `ip`), which is
    what twin adds. {} without runs of both that measured it."""
    ours = [t["cpu_seconds"] for t in twins if "cpu_seconds" in t]
    theirs = [f["cpu_seconds"] for f in floors if "cpu_seconds" in f]
    if not ours or not theirs:
        return {}

    def medians(runs: list[dict[str, float]]) -> dict[str, float]:
        return {key: round(statistics.median(r[key] for r in runs), 1) for key in runs[0]}

    def besides_frr(runs: list[dict[str, float]]) -> float:
        return statistics.median(r["busy"] - r["frr"] for r in runs)

    twin, floor_ = medians(ours), medians(theirs)
    return {"twin_cpu_seconds": twin, "floor_cpu_seconds": floor_,
            "ratio_cpu": round(twin["busy"] / floor_["busy"], 2) if floor_["busy"] else None,
            "ratio_frr_cpu": round(twin["frr"] / floor_["frr"], 2) if floor_["frr"] else None,
            "cpu_seconds_besides_frr": {"twin": round(besides_frr(ours), 1), "floor": round(besides_frr(theirs), 1),
                                        "added_by_twin": round(besides_frr(ours) - besides_frr(theirs), 1)}}


def _compare_floor(twins: list[dict[str, Any]], floors: list[dict[str, Any]]) -> dict[str, Any]:
    healthy = healthy_runs(twins)
    good = [f for f in floors if f["ok"]]
    doc: dict[str, Any] = {"twin_runs_healthy": f"{len(healthy)}/{len(twins)}",
                           "floor_runs_ok": f"{len(good)}/{len(floors)}"}
    if healthy:
        doc["twin_seconds_up_to_healthy"] = spread([t["seconds_up_to_healthy"] for t in healthy])
        doc["twin_pss_mib_per_switch"] = spread([twin_pss_per_switch(t) for t in healthy])
        phases = [t["phases"] for t in healthy if t.get("phases")]
        if phases:
            doc["twin_phases_median"] = {k: round(statistics.median(p.get(k, 0.0) for p in phases), 3)
                                         for k in phases[0]}
    if good:
        doc["floor_seconds_total"] = spread([f["seconds_total"] for f in good])
        doc["floor_seconds_wall"] = spread([f["seconds_wall"] for f in good])
        doc["floor_pss_mib_per_switch"] = spread([f["pss_mib_per_switch"] for f in good])
    if healthy and good:
        doc["ratio_time"] = round(doc["twin_seconds_up_to_healthy"]["median"] / doc["floor_seconds_total"]["median"], 2)
        doc["ratio_time_wall"] = round(doc["twin_seconds_up_to_healthy"]["median"]
                                       / doc["floor_seconds_wall"]["median"], 2)
        doc["ratio_memory"] = round(doc["twin_pss_mib_per_switch"]["median"]
                                    / doc["floor_pss_mib_per_switch"]["median"], 2)
    doc["cpu_against_floor"] = cpu_comparison(healthy, good)
    doc["frr_vty_cpu_seconds"] = vty_comparison(healthy, good)
    return doc


def vty_comparison(twins: list[dict[str, Any]], floors: list[dict[str, Any]]) -> dict[str, Any]:
    """The CPU bgpd and zebra spent answering on their vty (frr_threads), summed over the switches:
    the median of twin's runs and of the floor's ({} for a side without the figure)."""
    def median(runs: list[dict[str, Any]]) -> float | None:
        seconds = [sum(r["frr_threads"][d]["vty_cpu_seconds"] for d in ("bgpd", "zebra"))
                   for r in runs if r.get("frr_threads", {}).get("switches")]
        return round(statistics.median(seconds), 3) if seconds else None

    return {k: v for k, v in (("twin", median(twins)), ("floor", median(floors))) if v is not None}


def checked(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One run, started only once the kernel has destroyed an earlier run's namespaces, with what was
    still there when it started (kernel_state.clean_start) and whether a neighbour table was full
    during it (the kernel's table_fulls counters, before and after)."""
    start = clean_start()
    fulls = neighbour_table_fulls()
    doc = run()
    after = neighbour_table_fulls()
    doc["clean_start"] = start
    doc["started_clean"] = is_clean(start)
    doc["neighbour_table_full_events"] = {family: after[family] - fulls[family] for family in after}
    return doc


def hygiene(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """How many runs started clean, and which hit a full neighbour table (their figures do not count as
    measured right)."""
    return {"runs_started_clean": f"{sum(bool(r.get('started_clean')) for r in runs)}/{len(runs)}",
            "runs_with_neighbour_table_full": sum(any(r.get("neighbour_table_full_events", {}).values())
                                                  for r in runs)}


def rounds(floor_script: Path | None, runs: int, lab_file: str, name: str, spines: int, leaves: int,
           bfd_ms: int | None, timeout: float, sonic_routing: bool = False,
           against: tuple[str, Path] | None = None) -> dict[str, Any]:
    """`runs` alternating rounds of the floor, the floor with SONiC's routing config (if
    `sonic_routing`), twin as it was at another revision (`against`: the revision and its worktree)
    and twin at the same size."""
    twins: list[dict[str, Any]] = []
    floors: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    routing: list[dict[str, Any]] | None = [] if floor_script is not None and sonic_routing else None
    for i in range(runs):
        if floor_script is not None:
            floors.append(checked(partial(floor, floor_script, spines, leaves, bfd_ms, timeout)))
        if routing is not None:
            routing.append(checked(partial(floor, SONIC_ROUTING_FLOOR, spines, leaves, bfd_ms, timeout)))
        if against is not None:
            before.append(checked(partial(bench, lab_file, f"{name}b{i}", timeout, repo=against[1])))
        twins.append(checked(partial(bench, lab_file, f"{name}{i}", timeout)))
    bfd = "BFD=0" if bfd_ms is None else f"BFD=1 BFD_MS={bfd_ms}"
    every = [*twins, *floors, *(routing or []), *before]
    doc: dict[str, Any] = {"lab": lab_file, "floor_size": f"S={spines} L={leaves} {bfd}",
                           **compare(twins, floors, routing), **hygiene(every), "twin_runs": twins}
    if against is not None:
        doc["against"] = {"revision": against[0], **_compare_floor(before, floors), "twin_runs": before}
        ours, theirs = doc.get("twin_seconds_up_to_healthy"), doc["against"].get("twin_seconds_up_to_healthy")
        if ours and theirs:
            doc["ratio_time_to_against"] = round(ours["median"] / theirs["median"], 2)
    if floor_script is not None:
        doc["floor_runs"] = floors
    if routing is not None:
        doc["floor_sonic_routing_runs"] = routing
    return doc


SCALE_LAB = "labs/scale.yaml"
SCALE_SIZE = (64, 128)   # labs/scale.yaml's topology


def scale_size(text: str) -> tuple[int, int]:
    """'SPINESxLEAVES', e.g. 32x64 (argparse type)."""
    match = re.fullmatch(r"(\d+)x(\d+)", text.strip())
    if match is None or int(match[1]) < 1 or int(match[2]) < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: give SPINESxLEAVES, at least 1 spine and 2 leaves (e.g. 32x64)")
    return int(match[1]), int(match[2])


@contextlib.contextmanager
def scale_lab(spines: int, leaves: int) -> Iterator[str]:
    """The scale lab at `spines` x `leaves`: labs/scale.yaml itself at its own size, else a copy of it and
    of its topology, with only the topology's spines and leaves (and the names) changed, in a temporary
    folder removed afterwards."""
    if (spines, leaves) == SCALE_SIZE:
        yield SCALE_LAB
        return
    lab_path = REPO / SCALE_LAB
    lab = yaml.safe_load(lab_path.read_text())
    topology = yaml.safe_load((lab_path.parent / lab["topology"]).read_text())
    topology["clos"].update(spines=spines, leaves=leaves)
    topology["name"] = f"fabric-{spines}x{leaves}"
    topology["description"] = f"{topology['name']}: {SCALE_LAB}'s topology at {spines} spines x {leaves} leaves"
    with tempfile.TemporaryDirectory(prefix="twin-scale-") as tmp:
        topology_path = Path(tmp) / f"fabric-{spines}x{leaves}.yaml"
        topology_path.write_text(yaml.safe_dump(topology, sort_keys=False))
        lab.update(name=f"scale-{spines}x{leaves}", topology=str(topology_path),
                   description=f"{SCALE_LAB} at {spines} x {leaves} ({spines + leaves} switches)")
        copy = Path(tmp) / f"scale-{spines}x{leaves}.yaml"
        copy.write_text(yaml.safe_dump(lab, sort_keys=False))
        yield str(copy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", action="store_true", help="also bring up the 64 x 128 control plane "
                        "(and the floor at 64 x 128)")
    parser.add_argument("--runs", type=int, default=3, help="alternating rounds of the default lab (default 3)")
    parser.add_argument("--scale-runs", type=int, default=1, help="alternating rounds of the scale lab (default 1)")
    parser.add_argument("--scale-size", type=scale_size, default=SCALE_SIZE, metavar="SxL",
                        help="with --scale: the scale lab and its floors at S spines x L leaves instead of 64x128")
    parser.add_argument("--floor", help="floor_clos.py, the bare floor (default: $TWIN_FLOOR)")
    parser.add_argument("--name", default="bench", help="lab name prefix (labs NAME0, NAME1, ...; NAMEscale0)")
    parser.add_argument("--sonic-routing", action="store_true",
                        help="each round also runs the floor with the routing config twin renders as SONiC does "
                             "(bench/floor_routing.py), and twin's time is given as a ratio to it too")
    parser.add_argument("--against", metavar="REV", help="each round also runs twin as it was at this git "
                        "revision (a worktree of this repository), for the change's cost in the same run")
    args = parser.parse_args()
    if args.runs < 1 or args.scale_runs < 1:
        parser.error("--runs and --scale-runs must be at least 1")
    if args.scale_size != SCALE_SIZE and not args.scale:
        parser.error("--scale-size sizes the scale lab: add --scale")
    script, why = find_floor(args.floor)
    if args.floor and script is None:
        parser.error(why)   # asked for by name: a wrong path is a mistake, not a skip
    if args.sonic_routing and script is None:
        parser.error(f"--sonic-routing needs the floor it changes: {why}")
    if script is not None:
        os.environ[FLOOR_SCRIPT_ENV] = str(script.resolve())  # read by floor_routing.py run as a floor
    doc: dict[str, Any] = {} if script else {"floor_skipped": why}
    with worktree(args.against) as against:
        doc["bytecode"] = compile_bytecode(REPO)
        if against is not None:
            compile_bytecode(against[1])
        doc["default"] = rounds(script, args.runs, "labs/default.yaml", args.name, 4, 8, 300, 300,
                                args.sonic_routing, against)
        if args.scale:
            # labs/scale.yaml runs without BFD, and so does the floor it is compared with: at 300 ms x 3 the
            # 16,384 session ends need more CPU in bfdd alone than this machine has (bench/bfd_capacity.py)
            spines, leaves = args.scale_size
            with scale_lab(spines, leaves) as lab_file:
                doc[f"scale_{spines}x{leaves}"] = rounds(script, args.scale_runs, lab_file, f"{args.name}scale",
                                                         spines, leaves, None, 1800, args.sonic_routing, against)
    print(json.dumps(doc, indent=2))


@contextlib.contextmanager
def worktree(revision: str | None) -> Iterator[tuple[str, Path] | None]:
    """A detached git worktree of this repository at `revision` (removed afterwards), or None."""
    if revision is None:
        yield None
        return
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{revision}^{{commit}}"], cwd=REPO,
                            capture_output=True, text=True)
    if commit.returncode != 0:
        sys.exit(f"--against: {revision} is not a revision of {REPO}: {commit.stderr.strip()}")
    with tempfile.TemporaryDirectory(prefix="twin-against-") as tmp:
        path = Path(tmp) / "twin"
        subprocess.run(["git", "worktree", "add", "--detach", str(path), commit.stdout.strip()], cwd=REPO,
                       check=True, capture_output=True)
        try:
            yield f"{revision} ({commit.stdout.strip()[:10]})", path
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO, capture_output=True)


if __name__ == "__main__":
    main()
