"""A router imported from a .clab.yml (kind linux, /etc/frr bound): it runs the user's own frr.conf
and daemons files (NodePlan.frr_conf, NodePlan.daemons). Facts in frr_router.yaml."""

from __future__ import annotations

from twin.kinds.facts import load_facts
from twin.kinds.plain import PlainKind

FACTS = load_facts("frr_router")


KIND = PlainKind(FACTS)
