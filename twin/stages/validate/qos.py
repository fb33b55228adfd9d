"""RoCE QoS consistency: the failures that break lossless RDMA in real fabrics.

- every hop must classify the same way (the same DSCP->TC and TC->queue maps);
- PFC must pause the same priorities everywhere;
- every lossless queue needs ECN marking (a WRED profile with ECN, Kmin < Kmax, thresholds set);
- storage and compute traffic on separate priorities when the lab says so;
- RoCE (the lab's `roce.compute_dscp`) goes to a lossless queue on every port given QoS: the queue its
  DSCP_TO_TC_MAP and TC_TO_QUEUE_MAP send it to is one PFC makes lossless (PORT_QOS_MAP `pfc_enable`,
  through `pfc_to_queue_map`), as twin.stages.port_qos resolves them. `twin verify` judges the
  switches' running CONFIG_DB the same way (twin.checks.roce_queue).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from twin.model.findings import Finding, SwitchConfig
from twin.model.lab import RoceSettings
from twin.stages.port_qos import LossyRoce, lossy_roce

MAPS = (("dscp_to_tc_map", "DSCP_TO_TC_MAP"), ("tc_to_queue_map", "TC_TO_QUEUE_MAP"))




def _majority(values: list[Any]) -> Any:
    return Counter(values).most_common(1)[0][0] if values else None


def _port_maps(cfg: SwitchConfig) -> dict[str, dict[str, Any]]:
    return {port: row for port, row in cfg.table("PORT_QOS_MAP").items() if isinstance(row, dict)}


def _frozen(row: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), str(v)) for k, v in row.items()))


def _pfc(value: Any) -> tuple[int, ...]:
    return tuple(sorted(int(p) for p in str(value).split(",") if p.strip().isdigit()))


def qos_findings(cfgs: list[SwitchConfig], roce: RoceSettings | None = None) -> list[Finding]:
    roce = roce or RoceSettings()
    out: list[Finding] = []
    used = [c for c in cfgs if _port_maps(c)]
    if not used:
        return out
    for field, table in MAPS:  # the same map contents on every switch
        contents = {}
        for cfg in used:
            names = {str(row[field]) for row in _port_maps(cfg).values() if row.get(field)}
            for name in sorted(names):
                row = cfg.table(table).get(name)
                if row is None:
                    port = next(p for p, r in _port_maps(cfg).items() if str(r.get(field)) == name)
                    out.append(Finding("qos", cfg.file, f"PORT_QOS_MAP|{port} {field}",
                                       f"refers to {table}|{name}, which does not exist", f"add {table}|{name}"))
                else:
                    contents[(cfg.name, name)] = (cfg, _frozen(row))
        common = _majority([v for _, v in contents.values()])
        for (_, mapname), (cfg, value) in sorted(contents.items()):
            if value != common:
                diff = sorted(k for k, v in value if dict(common).get(k) != v)[:6]
                out.append(Finding("qos", cfg.file, f"{table}|{mapname}",
                                   f"differs from the map the other switches use (entries {', '.join(diff)})",
                                   "use the same map on every hop, or traffic changes class mid-path"))
    pfc_all = [(cfg, port, _pfc(row.get("pfc_enable", ""))) for cfg in used for port, row in _port_maps(cfg).items()]
    want = tuple(sorted(roce.lossless)) if roce.lossless is not None else _majority([p for _, _, p in pfc_all])
    for cfg, port, pfc in pfc_all:
        if pfc != want:
            out.append(Finding("qos", cfg.file, f"PORT_QOS_MAP|{port} pfc_enable",
                               f"PFC on priorities {','.join(map(str, pfc)) or 'none'}, the fabric uses "
                               f"{','.join(map(str, want)) or 'none'}",
                               f"set pfc_enable to \"{','.join(map(str, want))}\" on every port"))
    for cfg in used:
        out += _lossless_queues(cfg, want)
    out += _separation(used, roce)
    if roce.compute_dscp is not None:
        out += [f for cfg in used for f in roce_queue_findings(cfg, roce.compute_dscp)]
    return out


def lossy_roce_text(dscp: int, found: list[LossyRoce]) -> str:
    """One sentence for the ports of `found` that share a traffic class, queue and lossless queues."""
    first = found[0]
    lossless = ", ".join(map(str, sorted(first.lossless))) or "none"
    ports = ", ".join(f.port for f in found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    return (f"RoCE (DSCP {dscp}) goes to traffic class {first.tc}, queue {first.queue}, a lossy queue, on "
            f"{ports} (PFC makes queues {lossless} lossless there)")


def lossy_roce_groups(found: list[LossyRoce]) -> list[list[LossyRoce]]:
    groups: dict[tuple[int, int, frozenset[int]], list[LossyRoce]] = {}
    for f in found:
        groups.setdefault((f.tc, f.queue, f.lossless), []).append(f)
    return list(groups.values())


def roce_queue_findings(cfg: SwitchConfig, dscp: int) -> list[Finding]:
    """RoCE's DSCP in a lossy queue on a port of `cfg`: one finding per traffic class and queue it lands in."""
    out = []
    for group in lossy_roce_groups(lossy_roce(cfg.db, dscp)):
        name = cfg.table("PORT_QOS_MAP").get(group[0].port, {}).get("dscp_to_tc_map") or \
            cfg.table("PORT_QOS_MAP").get("global", {}).get("dscp_to_tc_map")
        where = f"DSCP_TO_TC_MAP|{name} {dscp}" if name else f"PORT_QOS_MAP|{group[0].port} dscp_to_tc_map"
        lossless = sorted(group[0].lossless)
        fix = (f"map DSCP {dscp} to a traffic class whose queue PFC makes lossless ({', '.join(map(str, lossless))})"
               if lossless else "enable PFC (pfc_enable) on the priority RoCE uses")
        out.append(Finding("qos", cfg.file, where, lossy_roce_text(dscp, group), fix))
    return out


def _lossless_queues(cfg: SwitchConfig, lossless: tuple[int, ...]) -> list[Finding]:
    out = []
    profiles = cfg.table("WRED_PROFILE")
    for port in sorted(_port_maps(cfg)):
        for prio in lossless:
            key = f"{port}|{prio}"
            queue = cfg.table("QUEUE").get(key)
            profile_name = (queue or {}).get("wred_profile")
            if not profile_name:
                out.append(Finding("qos", cfg.file, f"QUEUE|{key} wred_profile",
                                   f"lossless queue {prio} of {port} has no WRED/ECN profile",
                                   "attach an ECN-marking WRED_PROFILE so DCQCN gets congestion signals"))
                continue
            profile = profiles.get(str(profile_name))
            if profile is None:
                out.append(Finding("qos", cfg.file, f"QUEUE|{key} wred_profile",
                                   f"refers to WRED_PROFILE|{profile_name}, which does not exist",
                                   f"add WRED_PROFILE|{profile_name}"))
    for name, profile in sorted(profiles.items()):
        where = f"WRED_PROFILE|{name}"
        if profile.get("ecn", "ecn_none") == "ecn_none":
            out.append(Finding("qos", cfg.file, f"{where} ecn", "ECN marking is off on a lossless profile",
                               "set ecn to ecn_all"))
        for color in ("green", "yellow", "red"):
            lo, hi = profile.get(f"{color}_min_threshold"), profile.get(f"{color}_max_threshold")
            if color == "green" and (lo is None or hi is None):
                out.append(Finding("qos", cfg.file, f"{where} green_min_threshold",
                                   "ECN thresholds (Kmin, Kmax) are not set", "set green_min_threshold and "
                                   "green_max_threshold in bytes"))
                continue
            if lo is not None and hi is not None and str(lo).isdigit() and str(hi).isdigit() and int(lo) >= int(hi):
                out.append(Finding("qos", cfg.file, f"{where} {color}_min_threshold",
                                   f"Kmin {lo} is not below Kmax {hi}", "set the minimum threshold below the maximum"))
    return out


def _separation(cfgs: list[SwitchConfig], roce: RoceSettings) -> list[Finding]:
    if roce.compute_dscp is None or roce.storage_dscp is None:
        return []
    out = []
    for cfg in cfgs:
        names = {row.get("dscp_to_tc_map") for row in _port_maps(cfg).values()}
        for name in sorted(n for n in names if n):
            row = cfg.table("DSCP_TO_TC_MAP").get(name, {})
            a, b = row.get(str(roce.compute_dscp)), row.get(str(roce.storage_dscp))
            if a is not None and a == b:
                out.append(Finding("qos", cfg.file, f"DSCP_TO_TC_MAP|{name} {roce.storage_dscp}",
                                   f"storage (DSCP {roce.storage_dscp}) and compute (DSCP {roce.compute_dscp}) "
                                   f"share traffic class {a}", "map storage to its own traffic class"))
    return out
