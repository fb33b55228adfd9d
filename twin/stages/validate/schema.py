"""Per-switch checks: what the twin's own switches would refuse to apply (the gNMI Set validation), and
twin's rules stricter than SONiC's, as findings that refuse nothing (twin.stages.validate.local_addr)."""

from __future__ import annotations

from twin.model.findings import Finding, SwitchConfig
from twin.stages import configdb
from twin.stages.validate.local_addr import local_addr_findings


def schema_findings(cfg: SwitchConfig, yang_ran: bool = False) -> list[Finding]:
    """configdb.validate's refusals. Where libyang judged the config with SONiC's models, the built-in
    schema's digest of those models would only repeat it: then only twin's own rules are reported."""
    digest = set(configdb.schema_errors(cfg.db)) if yang_ran and isinstance(cfg.db, dict) else set()
    out = []
    for error in configdb.validate(cfg.db):
        if error in digest:
            continue
        where, _, message = error.partition(": ")
        if not message:
            where, message = "(config)", error
        out.append(Finding("schema", cfg.file, where, message, "correct the value or key"))
    return out + local_addr_findings(cfg)
