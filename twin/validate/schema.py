"""Per-switch checks: what the twin's own switches would refuse to apply (the gNMI Set validation)."""

from __future__ import annotations

from twin.switch import configdb
from twin.validate.findings import Finding, SwitchConfig


def schema_findings(cfg: SwitchConfig) -> list[Finding]:
    out = []
    for error in configdb.validate(cfg.db):
        if error.startswith("unknown table"):  # SONiC has many more; its YANG models judge those
            continue
        where, _, message = error.partition(": ")
        if not message:
            where, message = "(config)", error
        out.append(Finding("schema", cfg.file, where, message, "correct the value or key"))
    return out
