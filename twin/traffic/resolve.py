"""Each flow's path through the running switches' real forwarding, hop by hop.

At every switch the kernel is asked the question its forwarding answers for the flow's packets:
`ip route get DST from SRC iif IN ipproto udp sport S dport 4791` builds the packet's headers (ports
included) and runs the input route lookup, so the multipath hash is the switch's own (its
fib_multipath_hash_policy, fields and seed). The answer's device leads, through the plan's cabling,
to the next switch and the interface the packet arrives on there. All questions of one round go to a
switch in one `ip -batch`, so a round costs one process per switch whatever the number of flows.
"""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from twin.model.plan import Plan
from twin.model.traffic import Flow, Gpu

MAX_HOPS = 8
# argv that runs a command inside a node of the lab (the runtime's exec_argv)
NodeArgv = Callable[[str, Sequence[str]], list[str]]


@dataclass(frozen=True)
class Hop:
    """One link a flow crosses: from `a` out of its kernel interface `a_if`, into `b` on `b_if`."""

    a: str
    a_if: str
    b: str
    b_if: str


@dataclass
class Path:
    """The links a flow crosses, from the source server's NIC to the destination server's."""

    hops: list[Hop]
    complete: bool = False
    reason: str = ""

    @property
    def nodes(self) -> list[str]:
        return [self.hops[0].a, *(h.b for h in self.hops)] if self.hops else []


@dataclass(frozen=True)
class _Query:
    flow: int
    node: str
    iif: str


@dataclass
class Cabling:
    """(node, kernel interface) -> (peer node, peer's kernel interface), from the plan."""

    peer: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, plan: Plan) -> Cabling:
        out = cls()
        for node in plan.nodes:
            for iface in node.interfaces:
                try:
                    far = plan.node(iface.peer_node).iface(iface.peer_iface).kernel
                except KeyError:
                    continue
                out.peer[(node.name, iface.kernel)] = (iface.peer_node, far)
        return out


def route_line(flow: Flow, iif: str) -> str:
    return (f"route get {flow.dst_ip} from {flow.src_ip} iif {iif} ipproto udp "
            f"sport {flow.sport} dport {flow.dport}")


def ask(argv: NodeArgv, node: str, lines: list[str]) -> list[dict[str, object] | None]:
    """The kernel's answers for `lines`, in order (None where the lookup failed: no route)."""
    proc = subprocess.run(argv(node, ["ip", "-force", "-j", "-batch", "-"]), input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=120)
    answers = [json.loads(line)[0] for line in proc.stdout.splitlines() if line.startswith("[")]
    if len(answers) == len(lines):
        return answers
    out: list[dict[str, object] | None] = []   # some failed: ask one by one to keep them apart
    for line in lines:
        one = subprocess.run(argv(node, ["ip", "-j", *line.split()]), capture_output=True, text=True, timeout=30)
        out.append(json.loads(one.stdout)[0] if one.returncode == 0 and one.stdout.startswith("[") else None)
    return out


def resolve(plan: Plan, flows: list[Flow], gpus: dict[str, Gpu], argv: NodeArgv) -> list[Path]:
    """Every flow's path, following each switch's forwarding from the source GPU's leaf."""
    cabling = Cabling.of(plan)
    paths = [Path(hops=[Hop(gpus[f.src].server, gpus[f.src].nic, gpus[f.src].leaf, gpus[f.src].leaf_port)])
             for f in flows]
    pending = [_Query(k, gpus[f.src].leaf, gpus[f.src].leaf_port) for k, f in enumerate(flows)]
    for _ in range(MAX_HOPS):
        if not pending:
            break
        by_node: dict[str, list[_Query]] = defaultdict(list)
        for q in pending:
            by_node[q.node].append(q)
        pending = []
        for node, queries in sorted(by_node.items()):
            answers = ask(argv, node, [route_line(flows[q.flow], q.iif) for q in queries])
            for q, answer in zip(queries, answers, strict=True):
                path, flow = paths[q.flow], flows[q.flow]
                dev = str(answer.get("dev", "")) if answer else ""
                if not dev or dev == "lo":
                    path.reason = f"{node} has no route to {flow.dst_ip}"
                    continue
                far = cabling.peer.get((node, dev))
                if far is None:
                    path.reason = f"{node} sends {flow.dst_ip} out of {dev}, which is not cabled in the plan"
                    continue
                peer, peer_iface = far
                path.hops.append(Hop(node, dev, peer, peer_iface))
                dst = gpus[flow.dst]
                if peer == dst.server:
                    path.complete = True
                elif plan.node(peer).kind == "host":
                    path.reason = f"{node} delivers {flow.dst_ip} to {peer}, not to {dst.server}"
                else:
                    pending.append(_Query(q.flow, peer, peer_iface))
    for q in pending:
        paths[q.flow].reason = f"no destination after {MAX_HOPS} hops (a loop?)"
    return paths
