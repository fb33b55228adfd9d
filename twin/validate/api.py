"""`twin validate`: every static check over a folder of switch configs, no root, seconds."""

from __future__ import annotations

from pathlib import Path

from twin.validate.fabric import address_findings, ecmp_findings, mtu_findings, session_findings
from twin.validate.findings import Finding
from twin.validate.load import load_configs
from twin.validate.qos import RoceSettings, qos_findings
from twin.validate.schema import schema_findings


def validate_folder(directory: Path, roce: RoceSettings | None = None) -> tuple[int, list[Finding]]:
    """(switches read, findings); unreadable input raises PlanError."""
    cfgs = load_configs(directory)
    findings: list[Finding] = []
    for cfg in cfgs:
        findings += schema_findings(cfg)
    findings += address_findings(cfgs)
    findings += session_findings(cfgs)
    findings += ecmp_findings(cfgs)
    findings += mtu_findings(cfgs, roce.mtu if roce else None)
    findings += qos_findings(cfgs, roce)
    return len(cfgs), findings
