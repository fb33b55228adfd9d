"""SONiC's own bgpcfgd test vectors, reproduced by twin's bgpcfgd emulation and by sonic_templates.

sonic-bgpcfgd-test-vectors in the reference folder (reference.py) holds what bgpcfgd passes each general peer template
(general/<template>.conf/param_<case>.json) with what SONiC renders (result_<case>.conf), and the
sonic-cfggen inputs of bgpd.main.conf.j2 and frr.conf.j2 with their outputs. For each case twin
supports, twin's emulation (twin.stages.render.bgpcfgd) must render the same lines (blank and comment lines
aside) and mean the same to FRR (tests/fidelity/frr_semantics), modulo the allow-list
(twin.stages.render.frr_differences.adapt on both sides). The cases twin does not emulate are skipped
with the reason, one by one. SONiC's templates rendered through twin.stages.render.sonic_templates'
environments must reproduce every vector, emulated or not.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from frr_semantics import parse, semantics
from reference import REFERENCE, TEMPLATES, needs_reference

from twin.stages.render import bgpcfgd
from twin.stages.render import bgpcfgd_internal as internal
from twin.stages.render import bgpcfgd_peer_types as types
from twin.stages.render.frr_differences import adapt_lines
from twin.stages.render.sonic_templates import TEMPLATES as TEMPLATES_DIR
from twin.stages.render.sonic_templates import bgpcfgd_environment, cfggen_data, cfggen_environment

pytestmark = needs_reference
VECTORS = REFERENCE / "sonic-bgpcfgd-test-vectors" if REFERENCE is not None else Path("/nonexistent")

# The general vectors twin does not emulate, and why.
NOT_EMULATED = {
    ("instance.conf", "l2vpn"): "SpineChassisFrontendRouter (VXLAN EVPN chassis front end): a type twin does not "
                                "emulate",
    ("peer-group.conf", "UpperSpineRouter"): "UpperSpineRouter (disaggregated T2): table-map for selective route "
                                             "download, a type twin does not emulate",
    ("peer-group.conf", "upstream_lc"): "SpineRouter subtype UpstreamLC (chassis linecard): table-map, not emulated",
    ("policies.conf", "all_UpperSpineRouter"): "UpperSpineRouter on a voq chassis: anchor-route policies, not emulated",
    ("policies.conf", "all_chassis_pkt"): "packet chassis UpstreamLC: fallback-to-default policies, not emulated",
    ("policies.conf", "all_chassis_pkt_down"): "packet chassis linecard (switch_type chassis-packet): not emulated",
    ("policies.conf", "all_voq"): "voq chassis UpstreamLC: fallback-to-default policies, not emulated",
    ("policies.conf", "all_voq_down"): "voq chassis linecard (switch_type voq): not emulated",
}
# The bgpd.main vectors twin emulates as they are; the others are chassis, multi-ASIC (sub_role FrontEnd)
# or disaggregated-T2/regional-hub cases, which twin tests as their single-ASIC variant below.
MAIN_EMULATED = ("base", "ipv6_lo")
# Vectors whose .conf was not rendered from their .json, which SONiC's own tests never render
# (test_bgpd_lo_ipv6_conf_base renders base.json): twin is held to SONiC's template over their input
# instead (test_bgpd_main_single_asic_variant).
STALE = {"ipv6_lo": "its .conf holds Loopback0 55.55.55.55 and no exit-address-family, its .json has only "
                    "Loopback0 fc00::1/128: SONiC's tests never render it"}
# The peer types bgpcfgd has besides "general" that twin does not emulate.
OTHER_PEER_TYPES = {"voq_chassis": "BGP_VOQ_CHASSIS_NEIGHBOR"}
# The peer types twin emulates besides general, with their templates (twin.stages.render.bgpcfgd_peer_types,
# bgpcfgd_internal).
PEER_TYPES = ("monitors", "dynamic", "internal", "sentinels")


def _canonical(text: str | list[str]) -> list[str]:
    """bgpcfgd's ConfigMgr.to_canonical reads no blank or comment lines: neither does this comparison."""
    lines = text.splitlines() if isinstance(text, str) else text
    return [line.rstrip() for line in lines if line.strip() and not line.strip().startswith("!")]


def _meaning(lines: list[str], inside_router: bool) -> dict[str, object]:
    """What FRR makes of the lines (a peer template's lines are pushed inside `router bgp`)."""
    body = adapt_lines(lines)
    return semantics(parse("\n".join(["router bgp 65100", *body] if inside_router else body)))


def _general_cases(emulated_only: bool) -> list[Any]:
    cases = []
    for template in ("instance.conf", "peer-group.conf", "policies.conf"):
        for param in sorted((VECTORS / "general" / template).glob("param_*.json")):
            case = param.stem.removeprefix("param_")
            skip = emulated_only and (template, case) in NOT_EMULATED
            marks = [pytest.mark.skip(reason=NOT_EMULATED[(template, case)])] if skip else []
            cases.append(pytest.param(template, case, marks=marks, id=f"{template}-{case}"))
    return cases


def _twin_general(template: str, params: dict[str, Any]) -> list[str]:
    meta = params.get("CONFIG_DB__DEVICE_METADATA")
    if template == "instance.conf":
        return bgpcfgd.instance_lines(params["neighbor_addr"], params["bgp_session"], meta)
    if template == "peer-group.conf":
        return bgpcfgd.peer_group_lines(meta, params.get("CONFIG_DB__BGP_BBR"))
    return bgpcfgd.policies_lines(params.get("constants", {}), params.get("allow_list_default_action"))


@pytest.mark.parametrize(("template", "case"), _general_cases(emulated_only=True))
def test_general_template_vector(template: str, case: str) -> None:
    folder = VECTORS / "general" / template
    params = json.loads((folder / f"param_{case}.json").read_text())
    want = _canonical((folder / f"result_{case}.conf").read_text())
    got = _twin_general(template, params)
    assert got == want
    inside = template != "policies.conf"
    assert _meaning(got, inside) == _meaning(want, inside)


def _tuple_keys(table: dict[str, Any]) -> dict[Any, Any]:
    """As SONiC's test harness (and bgpcfgd's Directory) gives the templates a CONFIG_DB__ table."""
    return {tuple(k.split("|")) if "|" in k else k: v for k, v in table.items()}


@pytest.mark.parametrize(("template", "case"), _general_cases(emulated_only=False))
def test_sonic_general_templates_render_the_vector(template: str, case: str) -> None:
    """sonic_templates' bgpcfgd environment renders SONiC's general templates as bgpcfgd's does."""
    assert TEMPLATES is not None
    folder = VECTORS / "general" / template
    params = json.loads((folder / f"param_{case}.json").read_text())
    params = {k: (_tuple_keys(v) if k.startswith("CONFIG_DB__") else v) for k, v in params.items()}
    rendered = bgpcfgd_environment(TEMPLATES).get_template(f"bgpd/templates/general/{template}.j2").render(**params)
    assert _canonical(rendered) == _canonical((folder / f"result_{case}.conf").read_text())


@pytest.mark.parametrize("peer_type", sorted(OTHER_PEER_TYPES))
def test_other_peer_types(peer_type: str) -> None:
    assert (VECTORS / peer_type).is_dir(), f"SONiC's vectors have no {peer_type} folder any more"
    pytest.skip(f"peer type {peer_type} ({OTHER_PEER_TYPES[peer_type]}): twin does not emulate it")


def _peer_type_cases() -> list[Any]:
    cases = []
    for peer_type in PEER_TYPES:
        for param in sorted((VECTORS / peer_type).glob("*/param_*.json")):
            case = param.stem.removeprefix("param_")
            template = param.parent.name
            cases.append(pytest.param(peer_type, template, case, id=f"{peer_type}-{template}-{case}"))
    return cases


def _twin_peer_type(peer_type: str, template: str, params: dict[str, Any]) -> list[str]:
    meta = params.get("CONFIG_DB__DEVICE_METADATA")
    session = params.get("bgp_session", {})
    if peer_type == "monitors":
        if template == "instance.conf":
            return types.monitor_instance_lines(params["neighbor_addr"], session, params["bgp_asn"])
        if template == "peer-group.conf":
            return types.monitor_peer_group_lines(meta, params.get("loopback0_ipv4"))
        return types.monitor_policies_lines()
    if peer_type == "internal":
        if template == "instance.conf":
            return internal.instance_lines(params["neighbor_addr"], session, meta)
        if template == "peer-group.conf":
            return internal.peer_group_lines(meta)
        return internal.policies_lines(meta, params.get("CONFIG_DB__LOOPBACK_INTERFACE"), params.get("constants", {}))
    if peer_type == "sentinels":
        if template == "instance.conf":
            return types.sentinel_instance_lines(session, params["bgp_asn"])
        if template == "peer-group.conf":
            return types.sentinel_peer_group_lines()
        return types.sentinel_policies_lines(params.get("constants", {}))
    if template == "instance.conf":
        return types.dynamic_instance_lines(session, meta, params.get("CONFIG_DB__LOOPBACK_INTERFACE"),
                                            params.get("constants", {}))
    if template == "peer-group.conf":
        return types.dynamic_peer_group_lines()
    return types.dynamic_policies_lines()


def test_every_emulated_peer_type_has_vectors() -> None:
    assert {c.values[0] for c in _peer_type_cases()} == set(PEER_TYPES)
    assert len(_peer_type_cases()) >= 20


@pytest.mark.parametrize(("peer_type", "template", "case"), _peer_type_cases())
def test_peer_type_template_vector(peer_type: str, template: str, case: str) -> None:
    """BGP_MONITORS and BGP_PEER_RANGE: twin renders each of SONiC's vectors line for line, meaning the same."""
    folder = VECTORS / peer_type / template
    params = json.loads((folder / f"param_{case}.json").read_text())
    want = _canonical((folder / f"result_{case}.conf").read_text())
    got = _twin_peer_type(peer_type, template, params)
    assert got == want
    inside = template != "policies.conf"
    assert _meaning(got, inside) == _meaning(want, inside)


@pytest.mark.parametrize(("peer_type", "template", "case"), _peer_type_cases())
def test_sonic_peer_type_templates_render_the_vector(peer_type: str, template: str, case: str) -> None:
    """sonic_templates' bgpcfgd environment renders SONiC's monitors and dynamic templates as bgpcfgd's does."""
    assert TEMPLATES is not None
    folder = VECTORS / peer_type / template
    params = json.loads((folder / f"param_{case}.json").read_text())
    params = {k: (_tuple_keys(v) if k.startswith("CONFIG_DB__") else v) for k, v in params.items()}
    env = bgpcfgd_environment(TEMPLATES)
    rendered = env.get_template(f"bgpd/templates/{peer_type}/{template}.j2").render(**params)
    assert _canonical(rendered) == _canonical((folder / f"result_{case}.conf").read_text())


def _main_vector(case: str) -> tuple[dict[str, Any], dict[str, Any]]:
    data = json.loads((VECTORS / "sonic-cfggen/bgpd.main.conf.j2" / f"{case}.json").read_text())
    consts = data.pop("constants")
    return data, consts


MAIN_CASES = sorted(p.stem for p in (VECTORS / "sonic-cfggen/bgpd.main.conf.j2").glob("*.json"))


@pytest.mark.parametrize("case", MAIN_CASES)
def test_bgpd_main_vector(case: str) -> None:
    if case not in MAIN_EMULATED:
        meta = _main_vector(case)[0]["DEVICE_METADATA"]["localhost"]
        what = {k: meta[k] for k in ("type", "sub_role", "switch_type") if meta.get(k)}
        pytest.skip(f"{case}: {what}: a chassis, multi-ASIC (sub_role FrontEnd) or disaggregated-T2/regional-hub "
                    "switch, which twin does not emulate; its single-ASIC variant is tested")
    if case in STALE:
        pytest.skip(STALE[case])
    db, consts = _main_vector(case)
    want = _canonical((VECTORS / "sonic-cfggen/bgpd.main.conf.j2" / f"{case}.conf").read_text())
    got = bgpcfgd.main_lines(db, consts)
    assert got == want
    assert _meaning(got, False) == _meaning(want, False)


def _single_asic(db: dict[str, Any]) -> dict[str, Any]:
    """The same inputs on a single-ASIC, non-chassis switch of a type twin emulates."""
    out = copy.deepcopy(db)
    meta = out["DEVICE_METADATA"]["localhost"]
    for field in ("sub_role", "switch_type", "chassisdb_conf_present"):
        meta.pop(field, None)
    if meta.get("type") in bgpcfgd.UNSUPPORTED_TYPES:
        meta["type"] = "SpineRouter"
    out.pop("BGP_DEVICE_GLOBAL", None)
    return out


@pytest.mark.parametrize("case", MAIN_CASES)
def test_bgpd_main_single_asic_variant(case: str) -> None:
    """SONiC's bgpd.main.conf.j2 over each vector's inputs made single-ASIC: twin renders the same."""
    assert TEMPLATES is not None
    db, consts = _main_vector(case)
    db = _single_asic(db)
    sonic = cfggen_environment(TEMPLATES).get_template("bgpd/bgpd.main.conf.j2").render(
        **cfggen_data(db), constants=consts)
    got = bgpcfgd.main_lines(db, consts)
    assert got == _canonical(sonic)
    assert _meaning(got, False) == _meaning(_canonical(sonic), False)


# vector folder -> the template sonic-cfggen renders (-t adds the template's own folder to the search path)
CFGGEN_TEMPLATES = {"bgpd.main.conf.j2": "bgpd/bgpd.main.conf.j2", "frr.conf.j2": "frr.conf.j2",
                    "bgpd.conf.j2": "bgpd/bgpd.conf.j2"}


def _cfggen_cases() -> list[Any]:
    cases = []
    for folder, template in CFGGEN_TEMPLATES.items():
        for data in sorted((VECTORS / "sonic-cfggen" / folder).glob("*.json")):
            marks = [pytest.mark.skip(reason=STALE[data.stem])] if data.stem in STALE else []
            cases.append(pytest.param(template, data, marks=marks, id=f"{folder}-{data.stem}"))
    return cases


@pytest.mark.parametrize(("template", "data"), _cfggen_cases())
def test_sonic_templates_render_cfggen_vectors(template: str, data: Path) -> None:
    """sonic_templates' sonic-cfggen environment (filters, search path, data) reproduces SONiC's vectors."""
    assert TEMPLATES is not None
    values = json.loads(data.read_text())
    consts = values.pop("constants", {})
    folder = str(Path(TEMPLATES_DIR) / Path(template).parent)
    env = cfggen_environment(TEMPLATES, folder)
    rendered = env.get_template(template).render(**cfggen_data(values), constants=consts)
    assert _canonical(rendered) == _canonical(data.with_suffix(".conf").read_text())
