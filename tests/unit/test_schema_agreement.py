"""The built-in schema and SONiC's YANG (libyang) judge every config of this table the same way.

Each case is the default lab's leaf1 with one change, and the verdict SONiC's YANG models give it:
validation never refuses what SONiC accepts (VLAN, ACL, MGMT tables) and never accepts what SONiC
refuses (a table without a model, a PORT without lanes, an unknown field, a value not of its type).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from configdb_edits import Mutation
from configdb_edits import both as _both
from configdb_edits import drop_at as _drop
from configdb_edits import set_at as _set

from twin.model.findings import SwitchConfig
from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.stages.validate.yang import builtin_schema, find_models, yang_findings

MODELS = find_models()
needs_models = pytest.mark.skipif(MODELS is None, reason="SONiC YANG models not found: set TWIN_SONIC_YANG")
NB = "default|10.0.0.64"

VLAN = _both(_set("VLAN", value={"Vlan100": {"vlanid": "100"}}),
             _both(_set("VLAN_MEMBER", value={"Vlan100|Ethernet8": {"tagging_mode": "untagged"}}),
                   _set("VLAN_INTERFACE", value={"Vlan100": {}, "Vlan100|10.5.0.1/24": {}})))
PORT8 = _set("PORT", "Ethernet8", value={"lanes": "25,26,27,28", "alias": "etp3a", "index": "3", "speed": "400000",
                                         "admin_status": "up", "mtu": "9100"})
ACL = _both(_set("ACL_TABLE", value={"DATAACL": {"type": "L3", "stage": "ingress", "ports": ["Ethernet0"],
                                                 "policy_desc": "data plane"}}),
            _set("ACL_RULE", value={"DATAACL|RULE_1": {"PRIORITY": "9999", "PACKET_ACTION": "DROP",
                                                       "SRC_IP": "10.9.0.1/32"}}))

CASES = [
    # accepted by SONiC's YANG
    pytest.param(lambda db: None, True, id="leaf1-as-generated"),
    pytest.param(_both(PORT8, VLAN), True, id="vlan-member-and-svi"),
    pytest.param(ACL, True, id="acl-table-and-rule"),
    pytest.param(_set("MGMT_INTERFACE", value={"eth0|10.3.0.5/24": {"gwaddr": "10.3.0.1"}}), True,
                 id="mgmt-interface"),
    pytest.param(_set("PORT", "Ethernet0", "mtu", value=1500), True, id="mtu-as-json-number"),
    pytest.param(_set("BGP_NEIGHBOR_AF", value={f"{NB}|ipv4_unicast": {"admin_status": "up"}}), True,
                 id="neighbor-af-activation"),
    # refused by SONiC's YANG
    pytest.param(_set("BFD_PROFILE", value={"twin": {"detect_multiplier": "3"}}), False, id="table-without-model"),
    pytest.param(_drop("PORT", "Ethernet0", "lanes"), False, id="port-without-lanes"),
    pytest.param(_set("PORT", "Ethernet0", "color", value="blue"), False, id="port-unknown-field"),
    pytest.param(_set("PORT", "Ethernet0", "admin_status", value="shutdown"), False, id="port-admin-status"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "asn", value="65_100"), False, id="asn-with-underscore"),
    pytest.param(_drop("BUFFER_PROFILE", "egress_lossless_profile", "pool"), False, id="buffer-profile-no-pool"),
    pytest.param(_set("DEVICE_METADATA", "localhost", "type", value="Leaf"), False, id="device-type-not-sonic"),
    pytest.param(_set("BGP_PEER_GROUP_AF", "default|PEER_V4|ipv4_unicast", "admin_status", value="yes"), False,
                 id="af-admin-status"),
    pytest.param(_set("INTERFACE", "Ethernet0|10.2.0.0/31|x", value={}), False, id="interface-key-of-3-parts"),
    pytest.param(_set("VLAN", value={"Vlan100": {"vlanid": "100", "mtu": "huge"}}), False, id="vlan-mtu-not-a-number"),
]


def _db(leaf1: ConfigDb, mutate: Mutation) -> ConfigDb:
    db = copy.deepcopy(leaf1)
    mutate(db)
    return db


@pytest.mark.parametrize(("mutate", "accepted"), CASES)
def test_builtin_schema_judges_as_yang(leaf1: ConfigDb, mutate: Mutation, accepted: bool) -> None:
    errors = configdb.validate(_db(leaf1, mutate))
    assert (errors == []) is accepted, errors


@needs_models
@pytest.mark.parametrize(("mutate", "accepted"), CASES)
def test_yang_verdict(leaf1: ConfigDb, mutate: Mutation, accepted: bool, tmp_path: Path) -> None:
    assert MODELS is not None
    findings = yang_findings([SwitchConfig("leaf1", tmp_path / "config_db.json", _db(leaf1, mutate))], MODELS)
    assert (findings == []) is accepted, [str(f) for f in findings]


@needs_models
def test_builtin_schema_is_the_digest_of_the_models() -> None:
    """twin/stages/schema.json is what `make schema` makes of SONiC's models: it cannot drift from them."""
    assert MODELS is not None
    assert json.loads(json.dumps(builtin_schema(MODELS))) == configdb.SCHEMA
