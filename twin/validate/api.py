"""`twin validate`: every static check over a folder of switch configs, no root, seconds."""

from __future__ import annotations

from pathlib import Path

from twin.errors import TwinError
from twin.validate.fabric import address_findings, ecmp_findings, mtu_findings, session_findings
from twin.validate.findings import Finding
from twin.validate.load import load_configs
from twin.validate.qos import RoceSettings, qos_findings
from twin.validate.schema import schema_findings
from twin.validate.yang import MODELS_ENV, find_models, yang_findings


def validate_folder(directory: Path, roce: RoceSettings | None = None, models: Path | None = None,
                    yang: bool = True) -> tuple[int, list[Finding]]:
    """(switches read, findings); unreadable input or missing YANG models raise TwinError."""
    cfgs = load_configs(directory)
    findings: list[Finding] = []
    if yang:
        found = find_models(models)
        if found is None:
            raise TwinError(f"SONiC's YANG models were not found{f' in {models}' if models else ''}: point "
                            f"--models or {MODELS_ENV} at a sonic-yang-models folder (it holds yang-models/), "
                            "or skip this check with --no-yang")
        findings += yang_findings(cfgs, found)
    for cfg in cfgs:
        findings += schema_findings(cfg)
    findings += address_findings(cfgs)
    findings += session_findings(cfgs)
    findings += ecmp_findings(cfgs)
    findings += mtu_findings(cfgs, roce.mtu if roce else None)
    findings += qos_findings(cfgs, roce)
    return len(cfgs), findings
