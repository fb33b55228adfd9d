"""`twin validate`'s RoCE buffer checks: PFC headroom against the cable (twin.stages.headroom,
twin.stages.validate.headroom), ECN thresholds against the queue (twin.stages.validate.ecn) and RoCE's
lossless class on every port (twin.stages.validate.lossless), on the buffers twin renders."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from test_port_qos import twin_qos

from twin.model.findings import SwitchConfig
from twin.model.lab import RoceSettings
from twin.stages import port_buffers
from twin.stages.headroom import headroom, longest_cable, pause_quanta
from twin.stages.validate.ecn import ecn_findings
from twin.stages.validate.headroom import headroom_findings, port_headrooms
from twin.stages.validate.lossless import lossless_findings
from twin.stages.validate.qos import qos_findings

PORTS = ("Ethernet0", "Ethernet4")
PROFILE = "pg_lossless_400000_5m_profile"   # the Arista-7060X6-64PE-B-O128 row twin renders: xoff 445770


def _cfg(db: dict[str, Any], name: str = "leaf1") -> SwitchConfig:
    return SwitchConfig(name=name, path=Path(f"{name}/config_db.json"), db=db)


def _cables(db: dict[str, Any], metres: int) -> dict[str, Any]:
    db["CABLE_LENGTH"]["AZURE"] = dict.fromkeys(PORTS, f"{metres}m")
    return db


def test_headroom_by_hand() -> None:
    # 400G over 40 m of cable, MTU 9100:
    #   2 x MTU                       = 2 x 9100                         =  18200 bytes
    #   the cable's round trip        = 2 x 40 m x 5 ns/m x 400e9 b/s / 8 =  20000 bytes
    #   the sender's response         = 905 pause quanta x 512 bits / 8   =  57920 bytes
    #   xoff needed                                                       =  96120 bytes
    h = headroom(400000, 40, 9100)
    assert (h.frames, h.cable, h.response, h.needed) == (18200, 20000, 57920, 96120)
    # 100G over 300 m: 18200 + 2 x 300 x 5e-9 x 100e9 / 8 = 37500 + 394 x 64 = 25216 -> 80916
    assert headroom(100000, 300, 9100).needed == 80916
    # the shipped profile's 445770 bytes leave 445770 - (18200 + 57920) = 369650 for the cable: 500 bytes a
    # metre at 400G, 739.3 m
    assert longest_cable(445770, 400000, 9100) == 739
    assert longest_cable(70000, 400000, 9100) == -1          # less than the frames and the response alone
    assert [pause_quanta(s) for s in (400000, 800000, 1600000, 30000)] == [905, 905, 905, 118]


def test_shipped_cables_pass_and_a_long_one_is_flagged() -> None:
    db = twin_qos(*PORTS)
    assert db["CABLE_LENGTH"]["AZURE"] == dict.fromkeys(PORTS, "5m")
    assert [(r.port, r.xoff, r.need.needed) for r in port_headrooms(_cfg(db))] == [
        ("Ethernet0", 445770, 78620), ("Ethernet4", 445770, 78620)]
    assert headroom_findings(_cfg(db)) == []
    assert headroom_findings(_cfg(_cables(db, 40))) == []              # pg_profile_lookup's 40m row: the same xoff
    assert headroom_findings(_cfg(_cables(db, 739))) == []
    found = headroom_findings(_cfg(_cables(db, 740)))                   # 740 x 500 + 76120 = 446120 > 445770
    assert [(f.where, f.fix) for f in found] == [(f"BUFFER_PROFILE|{PROFILE} xoff",
                                                  "use at most 739 m of cable for this profile (CABLE_LENGTH|AZURE "
                                                  "Ethernet0), or raise xoff to at least 446120 bytes")]


def test_a_profile_sized_for_40m_is_short_on_300m_at_400g() -> None:
    db = _cables(twin_qos(*PORTS), 300)
    db["BUFFER_PROFILE"][PROFILE]["xoff"] = "96120"                    # exactly 40 m's worth, worked out above
    found = headroom_findings(_cfg(db))
    assert len(found) == 1
    assert (found[0].file, found[0].where) == ("leaf1/config_db.json", f"BUFFER_PROFILE|{PROFILE} xoff")
    assert found[0].message == ("PFC headroom short on Ethernet0, Ethernet4 (400000 Mb/s, 300 m of cable, MTU 9100): "
                                "226120 bytes arrive after PFC (2 x 9100 MTU + 150000 on the cable's round trip + "
                                "57920 while the sender reacts), xoff is 96120")
    assert found[0].fix == ("use at most 40 m of cable for this profile (CABLE_LENGTH|AZURE Ethernet0), or raise xoff "
                            "to at least 226120 bytes")
    assert headroom_findings(_cfg(_cables(db, 40))) == []


def test_buffers_resolve_as_bufferorch_binds_them() -> None:
    db = twin_qos(*PORTS)
    db["BUFFER_PG"]["Ethernet4|3-4"] = {"profile": f"[BUFFER_PROFILE|{PROFILE}]"}   # the older reference form
    db["BUFFER_PG"]["Ethernet4|0"] = {"profile": "NULL"}
    pgs = port_buffers.pg_profiles(db)
    assert pgs["Ethernet4"] == {3: ("Ethernet4|3-4", PROFILE), 4: ("Ethernet4|3-4", PROFILE)}
    profiles, pools = port_buffers.profiles(db), port_buffers.pools(db)
    lossless, queue = profiles[PROFILE], profiles["egress_lossless_profile"]
    # dynamic_th 0: alpha 1, so one priority group takes half the pool's shared bytes
    # (164505640 - 22010624 of shared headroom) / 2 = 71247508, plus its 18796 reserved
    assert port_buffers.limit(lossless, pools["ingress_lossless_pool"]) == 71266304
    assert port_buffers.limit(lossless, pools["ingress_lossless_pool"], sharing=2) == 18796 + 142495016 // 3
    assert port_buffers.limit(queue, pools["egress_lossless_pool"]) == 82434938     # static_th
    assert port_buffers.cable_lengths(db)["Ethernet0"] == ("AZURE", 5)


def _wred(db: dict[str, Any], **fields: str) -> SwitchConfig:
    db["WRED_PROFILE"]["ROCE_LOSSLESS"].update(fields)
    return _cfg(db)


def test_ecn_thresholds_against_the_queue() -> None:
    db = twin_qos(*PORTS)
    assert ecn_findings(_cfg(db)) == []            # Kmin 1 MiB, Kmax 2 MiB, 5 %, in queues of 82434938 bytes
    never = ecn_findings(_wred(copy.deepcopy(db), green_min_threshold="90000000", green_max_threshold="95000000"))
    assert [(f.where, f.message) for f in never] == [(
        "WRED_PROFILE|ROCE_LOSSLESS green_min_threshold",
        "Kmin 90000000 is at or beyond the 82434938 bytes the queue holds: it never marks (queues Ethernet0|3, "
        "Ethernet0|4, Ethernet4|3, Ethernet4|4)")]
    partly = ecn_findings(_wred(copy.deepcopy(db), green_max_threshold="90000000"))
    assert [(f.where, f.fix) for f in partly] == [("WRED_PROFILE|ROCE_LOSSLESS green_max_threshold",
                                                   "set green_max_threshold to at most 82434938")]
    assert "marking never reaches 5 percent" in partly[0].message
    always = ecn_findings(_wred(copy.deepcopy(db), green_min_threshold="0"))
    assert [(f.where, f.message.split(" (")[0]) for f in always] == [(
        "WRED_PROFILE|ROCE_LOSSLESS green_min_threshold", "Kmin 0 is below one 9100-byte frame: every frame that "
        "waits is marked")]
    zero = ecn_findings(_wred(copy.deepcopy(db), green_drop_probability="0"))
    assert [f.where for f in zero] == ["WRED_PROFILE|ROCE_LOSSLESS green_drop_probability"]
    off = copy.deepcopy(db)
    off["WRED_PROFILE"]["ROCE_LOSSLESS"].update(ecn="ecn_none", green_drop_probability="0")
    assert ecn_findings(_cfg(off)) == []           # not marking at all: twin.stages.validate.qos says so
    small = copy.deepcopy(db)
    small["BUFFER_PROFILE"]["egress_lossless_profile"]["static_th"] = "1500000"
    assert [f.where for f in ecn_findings(_cfg(small))] == ["WRED_PROFILE|ROCE_LOSSLESS green_max_threshold"]
    lossy = copy.deepcopy(db)    # a lossy queue's profile that never marks, as SONiC's templates give queue 1
    lossy["WRED_PROFILE"]["LOSSY_Q1"] = {"ecn": "ecn_green", "green_drop_probability": "0",
                                         "green_min_threshold": "0", "wred_green_enable": "false"}
    lossy["QUEUE"]["Ethernet0|1"]["wred_profile"] = "LOSSY_Q1"
    assert ecn_findings(_cfg(lossy)) == []


def test_a_dscp_map_sending_roce_to_a_lossy_queue_is_a_finding() -> None:
    db = twin_qos(*PORTS)
    db["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "1"
    found = qos_findings([_cfg(db)], RoceSettings(compute_dscp=26))
    assert [f.where for f in found] == ["DSCP_TO_TC_MAP|ROCE 26"]
    assert lossless_findings(_cfg(db), 26) == []    # the root cause is named once, by the queue check


def test_roce_s_priority_group_and_pfc_on_every_port() -> None:
    db = twin_qos(*PORTS)
    assert lossless_findings(_cfg(db), 26) == []
    lossy_pg = copy.deepcopy(db)
    lossy_pg["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]["3"] = "0"
    found = lossless_findings(_cfg(lossy_pg), 26)
    assert [(f.where, f.message) for f in found] == [(
        "TC_TO_PRIORITY_GROUP_MAP|ROCE 3",
        "RoCE (traffic class 3) fills priority group 0, a lossy one (its profile ingress_lossy_profile has no xoff), "
        "on Ethernet0, Ethernet4 (DSCP 26)")]
    assert found[0].fix == "map traffic class 3 to a lossless priority group (3, 4)"
    unbound = copy.deepcopy(db)
    del unbound["BUFFER_PG"]["Ethernet4|3-4"]
    assert [(f.where, f.message, f.fix) for f in lossless_findings(_cfg(unbound), 26)] == [(   # no lossless PG left
        "BUFFER_PG|Ethernet4|3 profile", "RoCE (traffic class 3) fills priority group 3, a lossy one (no BUFFER_PG "
        "profile binds it), on Ethernet4 (DSCP 26)", "bind a lossless profile (one with xoff) to priority group 3")]
    # queue 3 stays lossless through priority 4 (pfc_to_queue_map 4 -> 3), but priority 3 is not paused
    pfc = copy.deepcopy(db)
    pfc["MAP_PFC_PRIORITY_TO_QUEUE"]["ROCE"]["4"] = "3"
    pfc["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = "4"
    found = lossless_findings(_cfg(pfc), 26)
    assert [(f.where, f.message, f.fix) for f in found] == [(
        "PORT_QOS_MAP|Ethernet4 pfc_enable", "PFC is off for priority 3: nothing asks the sender to pause RoCE, "
        "on Ethernet4 (DSCP 26)", "add 3 to pfc_enable")]


@pytest.mark.parametrize("lab", ["default", "gate", "rail"])
def test_the_shipped_configs_pass_the_buffer_checks(lab: str) -> None:
    from twin.stages.validate.load import load_configs

    cfgs = load_configs(Path(__file__).resolve().parents[2] / "configs" / lab)
    assert [f for c in cfgs for f in headroom_findings(c) + ecn_findings(c) + lossless_findings(c, 26)] == []
    assert {r.need.needed for c in cfgs for r in port_headrooms(c)} == {78620}   # 400G, 5 m, MTU 9100 everywhere
