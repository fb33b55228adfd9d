"""What a config holds that SONiC's routing stack acts on and twin does not emulate
(twin.model.routing_surface): one finding per entry and field, so nothing the twin ignores passes in
silence. Tables the lab accepts by name are left out."""

from __future__ import annotations

from collections.abc import Iterable

from twin.model.findings import Finding, SwitchConfig
from twin.model.routing_surface import not_emulated

FIX = ("the twin's verdict cannot cover it: remove it, or accept the table by name (the lab file's "
       "`accept_not_emulated:`, `twin validate --accept TABLE`) to go on without that")


def surface_findings(cfgs: Iterable[SwitchConfig], accepted: Iterable[str] = ()) -> list[Finding]:
    accepted = list(accepted)
    return [Finding(check="surface", file=str(cfg.path), where=f"{item.table}|{item.key}"
                    + ("" if item.field == "*" else f" {item.field}"),
                    message=f"SONiC's routing stack acts on it, twin does not emulate it ({item.reason})", fix=FIX)
            for cfg in cfgs for item in not_emulated(cfg.db, accepted)]
