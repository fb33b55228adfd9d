"""twin's own switch: SONiC's redis databases and config daemons run by twin, FRR configured from
config_db.json as bgpcfgd/frrcfgd would (twin.switch). Facts in frr_switch.yaml; the runtimes start
it (twin.runtime.bringup), the containerlab topology runs it with `exec:` lines (twin.runtime.clab)."""

from __future__ import annotations

from twin.kinds.facts import load_facts
from twin.kinds.plain import PlainKind

FACTS = load_facts("frr_switch")
SWITCH_SYSCTLS = FACTS.sysctls


KIND = PlainKind(FACTS)
