"""What the switches' running configs ask for, next to what the lab's intent (the plan) requires.

After configs are pushed (`twin push --configs`, `twin ci --configs`, `twin rehearse`), the checks
must judge those configs as SONiC would run them, not twin's own: BFD is expected only with the
neighbors a config marks `bfd: "true"` (bgpcfgd's classic dialect has no BFD at all), the prefixes
whose ECMP is checked are the ones each config announces (bgpcfgd: Loopback0 and VLAN subnets;
frrcfgd: BGP_GLOBALS_AF_NETWORK), and every neighbor a config sets up must come up. The plan
still says what the fabric needs: its sessions and the ECMP width its spines give. A check built
from the configs is named `configured-...`, one built from the plan keeps its own name, so a
report says which of the two failed.
"""

from __future__ import annotations

from collections.abc import Mapping

from twin.checks.bgp import BgpSessionsEstablished
from twin.model.config_db import ConfigDb
from twin.model.plan import Plan
from twin.stages.load.bound_config import config_facts


class ConfiguredSessionsEstablished(BgpSessionsEstablished):
    name = "configured-bgp-sessions"
    description = "every BGP neighbor the switches' configs set up is Established (what the configs ask for)"


def configured_sessions(configs: Mapping[str, ConfigDb]) -> dict[str, dict[str, str]]:
    """switch -> peer address -> name, for every neighbor a config sets up and does not shut down."""
    out: dict[str, dict[str, str]] = {}
    for switch, db in sorted(configs.items()):
        sessions = {str(s.ip): s.name or str(s.ip) for s in config_facts(db).sessions}
        if sessions:
            out[switch] = sessions
    return out


def configured_bfd(configs: Mapping[str, ConfigDb]) -> dict[str, list[str]]:
    """switch -> peers its config runs BFD with (`bfd: "true"` on the neighbor)."""
    out: dict[str, list[str]] = {}
    for switch, db in sorted(configs.items()):
        peers = [str(s.ip) for s in config_facts(db).sessions if s.bfd]
        if peers:
            out[switch] = peers
    return out


def configured_networks(configs: Mapping[str, ConfigDb]) -> dict[str, list[str]]:
    """switch -> the IPv4 prefixes its config announces, by its config daemon's rules."""
    return {switch: [str(n) for n in config_facts(db).networks] for switch, db in sorted(configs.items())}


def configured_ecmp(plan: Plan, configs: Mapping[str, ConfigDb]) -> dict[str, dict[str, int]]:
    """Per leaf: every prefix another leaf's config announces, at the width the fabric gives."""
    leaves = [n for n in plan.nodes if n.role == "leaf" and n.kind == "switch"]
    networks = configured_networks(configs)
    out: dict[str, dict[str, int]] = {}
    for leaf in leaves:
        width = min(len(leaf.neighbors), leaf.max_paths or plan.max_paths)
        wanted = {net: width for other in leaves if other.name != leaf.name for net in networks.get(other.name, [])}
        if wanted:
            out[leaf.name] = wanted
    return out
