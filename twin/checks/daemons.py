"""The processes a lab runs on: the gNMI agent, and on every switch its FRR daemons and redis-server.

A switch whose bgpd died shows it only indirectly elsewhere (sessions down, routes gone), and a
dead agent not at all to checks that read the kernel and FRR directly. These checks name them:
"leaf1: bgpd not running (pid 1234 gone)", "lab1: gNMI agent not running (pid 4321 gone)".

What a node should run comes from the plan, as the runtime started it (twin.switch.frr.frr_daemons:
node_daemons, without daemons this machine cannot run), plus the switch's redis-server on the
runtimes where twin starts it. What runs comes from the node's pid files (FRR's `<daemon>.pid`,
`redis.pid`) and the processes in its namespace (twin.checks.collect_processes): a pid file holds
the pid inside the node's own pid namespace (a container's), which is what `ns_pid` is matched
against. A process without a pid file (docker-sonic-vs keeps them elsewhere) counts by its name.
"""

from __future__ import annotations

from typing import Any

from twin.checks.base import Check, CheckInput, Outputs
from twin.kinds.sonic_vs import is_sonic_image
from twin.lab.running import RunningLab
from twin.model.plan import NodePlan, Plan
from twin.model.results import ItemResult
from twin.model.state import LabState
from twin.switch.frr.frr_daemons import node_daemons, split_supported

REDIS = "redis-server"
PIDFILE = {REDIS: "redis"}            # process name -> pid file stem, where they differ
SONIC_VS = ("zebra", "bgpd", REDIS)   # what a docker-sonic-vs switch runs for certain, under supervisord


class DaemonsInput(CheckInput):
    lab: str
    daemons: dict[str, list[str]]  # node -> process names it runs (FRR daemons, redis-server)


class AgentInput(CheckInput):
    lab: str
    switches: list[str]  # the switches the agent serves gNMI and SSH for


def _pid_of(facts: dict[str, Any], name: str) -> int | None:
    pid = (facts.get("pidfiles") or {}).get(PIDFILE.get(name, name))
    return pid if isinstance(pid, int) else None


def _live(facts: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [p for p in facts.get("processes") or [] if p.get("name") == name and p.get("state") not in ("Z", "X")]


def daemon_status(facts: dict[str, Any], name: str) -> tuple[bool, int | None, str]:
    """(running, pid, why) of one process of a node, judged from its daemon facts."""
    pid = _pid_of(facts, name)
    live = [p.get("ns_pid") for p in _live(facts, name)]
    if pid is not None and pid in live:
        return True, pid, f"{name} running (pid {pid})"
    if live:  # no pid file (docker-sonic-vs), or one a restart (watchfrr, by hand) did not rewrite
        return True, live[0], f"{name} running (pid {live[0]}" + (f"; its pid file says {pid})" if pid else ")")
    if pid is None:
        return False, None, f"{name} not running (no pid file, no such process)"
    zombie = any(p.get("ns_pid") == pid and p.get("name") == name for p in facts.get("processes") or [])
    return False, pid, f"{name} not running (pid {pid} {'exited, not reaped' if zombie else 'gone'})"


class SwitchDaemonsRunning(Check[DaemonsInput]):
    name = "switch-daemons"
    description = "every switch runs its FRR daemons and redis-server"
    needs = ("daemons",)
    per_node = "daemons"

    def nodes(self) -> list[str]:
        return sorted(self.inputs.daemons)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = []
        for node, names in sorted(self.inputs.daemons.items()):
            facts = outputs.get(node, {}).get("daemons")
            if facts is None:
                items.append(ItemResult(subject=node, status="error", message="its processes could not be read"))
                continue
            for name in names:
                running, _, why = daemon_status(facts, name)
                if not running and name != REDIS:
                    why += f"; 'twin frr restart {node} --name {self.inputs.lab}' starts its FRR again"
                items.append(ItemResult(subject=node, status="success" if running else "failure", message=why))
        return items

    def summary(self, outputs: Outputs) -> dict[str, dict[str, dict[str, Any]]]:
        """node -> process -> {pid, running}: what `twin status --json` lists as `daemons`."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for node, names in sorted(self.inputs.daemons.items()):
            facts = outputs.get(node, {}).get("daemons") or {}
            for name in names:
                running, pid, _ = daemon_status(facts, name)
                out.setdefault(node, {})[name] = {"pid": pid, "running": running}
        return out


def agent_status(facts: dict[str, Any]) -> tuple[bool, str]:
    """(serving, why) of the lab's agent, judged from one switch's agent facts."""
    pid = facts.get("pid")
    if pid is None:
        return False, "gNMI agent not running (no agent.pid: it was never started)"
    process = facts.get("process")
    if process is None or not process.get("ours") or process.get("state") in ("Z", "X"):
        return False, f"gNMI agent not running (pid {pid} gone)"
    if facts.get("ready") != pid:
        return False, f"gNMI agent (pid {pid}) not serving yet (no agent.ready of its own)"
    return True, f"gNMI agent running (pid {pid})"


class AgentServing(Check[AgentInput]):
    name = "agent"
    description = "the lab's gNMI agent runs and every switch's gNMI port answers"
    needs = ("agent",)
    per_node = "switches"

    def nodes(self) -> list[str]:
        return sorted(self.inputs.switches)

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        seen = [f for s in self.nodes() if (f := outputs.get(s, {}).get("agent")) is not None]
        if not seen:
            return [ItemResult(subject=self.inputs.lab, status="error", message="the agent's state could not be read")]
        serving, why = agent_status(seen[0])
        if not serving:
            return [ItemResult(subject=self.inputs.lab, status="failure",
                               message=f"{why}; 'twin agent restart --name {self.inputs.lab}' starts it again")]
        items = [ItemResult(subject=self.inputs.lab, status="success", message=why)]
        for switch in self.nodes():
            facts = outputs.get(switch, {}).get("agent") or {}
            if facts.get("gnmi") is None:
                continue
            ok = bool(facts.get("listening"))
            items.append(ItemResult(subject=switch, status="success" if ok else "failure",
                                    message=f"gNMI at {facts['gnmi']} " + ("answers" if ok else "refuses connections")))
        return items

    def summary(self, outputs: Outputs) -> dict[str, Any]:
        """What `twin status --json` lists as `agent`: {pid, running, serving}."""
        seen = [f for s in self.nodes() if (f := outputs.get(s, {}).get("agent")) is not None]
        facts = seen[0] if seen else {}
        process = facts.get("process") or {}
        running = bool(process.get("ours")) and process.get("state") not in ("Z", "X")
        serving = agent_status(facts)[0] and all(f.get("listening") is not False for f in seen)
        return {"pid": facts.get("pid"), "running": running, "serving": serving}


def expected_processes(state: LabState, plan: Plan) -> dict[str, list[str]]:
    """Per switch and router: the FRR daemons it was started with (those this machine can run) and,
    for a switch on the netns and docker runtimes, its redis-server."""
    sonic = is_sonic_image(state.image or "")
    out: dict[str, list[str]] = {}
    for node in plan.nodes:
        if node.kind == "host":
            continue
        if node.kind == "switch" and sonic:
            out[node.name] = list(SONIC_VS)
            continue
        frr, _ = split_supported(_frr_daemons(node, plan.fabric.bfd.enabled))
        redis = [REDIS] if node.kind == "switch" and state.runtime != "clab" else []
        out[node.name] = [*frr, *redis]
    return out


def _frr_daemons(node: NodePlan, fabric_bfd: bool) -> list[str]:
    try:
        return node_daemons(node, fabric_bfd)
    except OSError:  # an imported router's daemons file moved away since `twin up`: zebra runs for certain
        return ["zebra"]


def process_checks(lab: RunningLab) -> list[Check[Any]]:
    """The agent (when the lab has one) and every switch's and router's daemons."""
    checks: list[Check[Any]] = []
    state = lab.state
    if lab.agent is not None:
        served = [n.name for n in state.nodes if n.kind == "switch" and lab.gnmi_target(n.name) is not None]
        if served:
            checks.append(AgentServing(AgentInput(lab=state.lab, switches=served)))
    daemons = expected_processes(state, lab.plan)
    if daemons:
        checks.append(SwitchDaemonsRunning(DaemonsInput(lab=state.lab, daemons=daemons)))
    return checks
