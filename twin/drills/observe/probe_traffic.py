"""Probe traffic around a drill: which servers talk, the probe process, and where each flow goes.

Flows run between one server NIC per leaf and the NIC on the next leaf (a ring), so every leaf
sends and receives and every spine carries traffic. Each flow is a distinct UDP 5-tuple; the
switches' 5-tuple multipath hash (policy 3, see runtime/hostnet.py) spreads them over the spines.
`ip route get ... ipproto udp sport S dport D` on the source leaf asks the kernel which next
hop a flow takes, with the same hash as real packets.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from twin.drills.observations import FlowPaths, ProbePair, ProbeResult, ProbeSpec
from twin.host.processes import dies_with_parent
from twin.host.shell import run
from twin.model.errors import DrillError
from twin.model.plan import Plan
from twin.model.state import LabState
from twin.runtime.registry import Runtime

SPORT_BASE, DPORT_BASE = 40000, 50000


@dataclass(frozen=True)
class ProbeHost:
    server: str
    netns: str
    ip: str
    leaf: str
    leaf_port: str        # the leaf's kernel interface facing this NIC


def probe_hosts(plan: Plan, state: LabState, exclude: set[str]) -> list[ProbeHost]:
    """The first addressed NIC of the first server on each leaf, leaves in plan order."""
    out: dict[str, ProbeHost] = {}
    for host in plan.hosts:
        for iface in host.interfaces:
            if iface.address is None or iface.peer_node in exclude or iface.peer_node in out:
                continue
            leaf = plan.node(iface.peer_node)
            if leaf.role != "leaf":
                continue
            port = leaf.iface(iface.peer_iface)
            out[leaf.name] = ProbeHost(host.name, state.node(host.name).netns, str(iface.address.ip),
                                      leaf.name, port.kernel)
    order = [n.name for n in plan.by_role("leaf")]
    return [out[name] for name in order if name in out]


def probe_spec(hosts: list[ProbeHost], flows: int, rate_hz: float) -> ProbeSpec:
    """A ring of server pairs sharing `flows` flows between them."""
    if len(hosts) < 2:
        raise DrillError("a drill needs servers on at least two leaves to send probe traffic")
    if len(hosts) > 2:
        pairs = [(hosts[i], hosts[(i + 1) % len(hosts)]) for i in range(len(hosts))]
    else:
        pairs = [(hosts[0], hosts[1]), (hosts[1], hosts[0])]
    per_pair = -(-flows // len(pairs))
    spec_pairs = []
    for k, (src, dst) in enumerate(pairs):
        spec_pairs.append(ProbePair(
            src=src.server, src_ns=src.netns, src_ip=src.ip, src_leaf=src.leaf, src_port=src.leaf_port,
            dst=dst.server, dst_ns=dst.netns, dst_ip=dst.ip, dst_leaf=dst.leaf, dport=DPORT_BASE + k,
            sports=[SPORT_BASE + k * per_pair + j for j in range(per_pair)]))
    return ProbeSpec(rate_hz=rate_hz, pairs=spec_pairs)


class ProbeProcess:
    """Starts the probe (a separate process, so pacing does not share the GIL with the watchers)."""

    def __init__(self, spec: ProbeSpec, workdir: Path) -> None:
        self.spec = spec
        self.spec_path = workdir / "probe-spec.json"
        self.out_path = workdir / "probe-result.json"
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> ProbeProcess:
        self.spec_path.write_text(json.dumps(self.spec.model_dump(mode="json")))
        self.out_path.unlink(missing_ok=True)
        # it dies with the drill, however the drill ends (SIGKILL included): never a probe left sending
        self.proc = subprocess.Popen([sys.executable, "-m", "twin.drills.observe.probe", str(self.spec_path),
                                      str(self.out_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=dies_with_parent())
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            err = self.proc.stderr.read() if self.proc.stderr else ""
            self.proc.kill()
            raise DrillError(f"the probe traffic did not start: {err.strip()[-600:]}")
        return self

    def stop(self) -> ProbeResult:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise DrillError("the probe did not stop within 20 s") from None
        if not self.out_path.exists():
            raise DrillError(f"the probe ended without results: {err.strip()[-600:]}")
        return ProbeResult.model_validate_json(self.out_path.read_text())

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def flow_paths(plan: Plan, runtime: Runtime, state: LabState, spec: ProbeSpec) -> FlowPaths:
    """For each flow, the spine its source leaf hashes it to now (None: no route)."""
    by_leaf: dict[str, list[tuple[int, str]]] = {}
    for fid, pair, sport in spec.flows():
        line = (f"route get {pair.dst_ip} from {pair.src_ip} iif {pair.src_port} "
                f"ipproto udp sport {sport} dport {pair.dport}")
        by_leaf.setdefault(pair.src_leaf, []).append((fid, line))
    out: FlowPaths = {}
    for leaf, queries in by_leaf.items():
        hop_names = {str(nb.ip): nb.name for nb in plan.node(leaf).neighbors}
        argv = runtime.exec_argv(state, leaf, ["ip", "-j", "-force", "-b", "-"])
        proc = run(argv, input="\n".join(q for _, q in queries) + "\n", check=False)
        answers = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("[")]
        gateways = [a[0].get("gateway") if a else None for a in answers]
        if len(gateways) != len(queries):  # a failed lookup prints no JSON: ask one by one
            gateways = []
            for _, q in queries:
                p = run(runtime.exec_argv(state, leaf, ["ip", "-j", *q.split()]), check=False)
                gateways.append(json.loads(p.stdout)[0].get("gateway") if p.returncode == 0 and p.stdout else None)
        for (flow, _), gw in zip(queries, gateways, strict=False):
            out[flow] = hop_names.get(gw) if gw else None
    return out
