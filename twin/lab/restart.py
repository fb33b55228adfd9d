"""`twin frr restart SWITCH`: restart one switch of a running lab's FRR (twin.switch.restart.frr_restart),
its daemons launched the way the lab's runtime launches them."""

from __future__ import annotations

from twin.host.rundir import node_dir
from twin.host.shell import run
from twin.kinds.sonic_vs import is_sonic_image
from twin.lab.running import RunningLab
from twin.model.errors import TwinError
from twin.model.state import LabState
from twin.runtime.registry import runtime_of
from twin.switch.frr.frr_daemons import daemon_env, node_daemons
from twin.switch.restart.frr_restart import FrrRestart, restart_frr
from twin.switch.restart.reboot import Launch

MEMORY_ENV = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_ARENA_MAX")  # what daemon_env sets for FRR


def node_launcher(state: LabState, node: str) -> Launch:
    """Start a daemon inside `node` as the lab's runtime does: in its namespace, or in its container
    (`docker exec`), with FRR's memory settings."""
    runtime = runtime_of(state)
    env = daemon_env()
    prefix = ["env", *(f"{k}={env[k]}" for k in MEMORY_ENV)]

    def launch(argv: list[str]) -> None:
        run(runtime.exec_argv(state, node, [*prefix, *argv]))
    return launch


def restart_switch_frr(lab: str, switch: str) -> FrrRestart:
    running = RunningLab.load(lab)
    state, plan = running.state, running.plan
    node = state.node(switch)
    if node.kind != "switch":
        raise TwinError(f"{switch} is a {node.kind}, not one of twin's switches; 'twin frr restart' restarts a "
                        "switch's FRR from its CONFIG_DB")
    if is_sonic_image(state.image or ""):
        raise TwinError(f"{switch} runs docker-sonic-vs, whose own supervisord runs FRR: "
                        f"'twin exec --name {lab} {switch} -- supervisorctl restart bgpd' (or 'docker restart')")
    if state.runtime == "clab":
        raise TwinError(f"on the clab runtime {switch}'s FRR runs under the image's watchfrr (frrinit.sh), "
                        "which starts a daemon that died again by itself")
    daemons = node_daemons(plan.node(switch), plan.fabric.bfd.enabled)
    return restart_frr(switch, node.netns, node_dir(lab, switch), daemons, node_launcher(state, switch),
                       running.sonic_templates)
