"""`twin validate`: every static check over a folder of switch configs, no root, seconds."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from twin.model.errors import TwinError
from twin.model.findings import Finding
from twin.model.lab import RoceSettings
from twin.stages.validate.ecn import ecn_findings
from twin.stages.validate.fabric import address_findings, ecmp_findings, mtu_findings, session_findings
from twin.stages.validate.headroom import headroom_findings
from twin.stages.validate.load import load_configs
from twin.stages.validate.lossless import lossless_findings
from twin.stages.validate.qos import qos_findings
from twin.stages.validate.schema import schema_findings
from twin.stages.validate.surface import surface_findings
from twin.stages.validate.yang import MODELS_ENV, find_models, models_not_found, yang_findings


def validate_folder(directory: Path, roce: RoceSettings | None = None, models: Path | None = None,
                    yang: bool = True, notes: list[str] | None = None,
                    accepted: Iterable[str] = ()) -> tuple[int, list[Finding]]:
    """(switches read, findings); unreadable input raises PlanError. `accepted`: tables SONiC's routing
    stack reads that twin does not emulate which may pass (twin.stages.validate.surface).

    Models named by `models` or TWIN_SONIC_YANG must exist (TwinError otherwise). When none is
    named and the reference folder has none (twin.host.reference), the YANG check is skipped and `notes` says so,
    naming the folders looked in.
    """
    cfgs = load_configs(directory)
    findings: list[Finding] = []
    yang_ran = False
    if yang:
        found = find_models(models)
        named = models is not None or bool(os.environ.get(MODELS_ENV))
        hint = (f"point --models or {MODELS_ENV} at a sonic-yang-models folder (it holds yang-models/), "
                "or skip this check with --no-yang")
        if found is None and named:
            raise TwinError(f"{models_not_found(models)}: {hint}")
        if found is None:
            if notes is not None:
                notes.append(f"{models_not_found()}: the YANG check was skipped; twin's built-in schema (a "
                             f"digest of SONiC's models) judged tables, keys, fields and types instead; {hint}")
        else:
            findings += yang_findings(cfgs, found)
            yang_ran = True
    for cfg in cfgs:
        findings += schema_findings(cfg, yang_ran)
    findings += address_findings(cfgs)
    findings += session_findings(cfgs)
    findings += ecmp_findings(cfgs)
    findings += mtu_findings(cfgs, roce.mtu if roce else None)
    findings += qos_findings(cfgs, roce)
    for cfg in cfgs:   # RoCE's buffers: PFC headroom against the cable, ECN against the queue, the class end to end
        findings += headroom_findings(cfg) + ecn_findings(cfg)
        if roce is not None and roce.compute_dscp is not None:
            findings += lossless_findings(cfg, roce.compute_dscp)
    findings += surface_findings(cfgs, accepted)
    return len(cfgs), findings
