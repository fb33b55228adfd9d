"""gNMI Set semantics over CONFIG_DB (update merges, replace replaces, delete removes) and value coding."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2

from twin.gnmi.paths import DbPath, parse
from twin.switch import configdb
from twin.switch.agent import _decode, _delete, _replace, _stringify, _typed, _update
from twin.switch.configdb import ConfigDb
from twin.switch.endpoint import SetRejected

NB = "default|10.0.0.64"
SLASH_KEY = "Ethernet0|10.2.0.0/31"


def _p(table: str | None = None, key: str | None = None, field: str | None = None) -> DbPath:
    return DbPath("CONFIG_DB", table, key, field)


# -- update ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "value"), [
    pytest.param(_p("PORT", "Ethernet0"), {"mtu": 1500}, id="key-level"),
    pytest.param(_p("PORT", "Ethernet0", "mtu"), 1500, id="field-level"),
    pytest.param(_p("PORT"), {"Ethernet0": {"mtu": "1500"}}, id="table-level"),
    pytest.param(_p(), {"PORT": {"Ethernet0": {"mtu": "1500"}}}, id="whole-db"),
])
def test_update_merges_one_field(leaf1: ConfigDb, path: DbPath, value: Any) -> None:
    expected = copy.deepcopy(leaf1)
    expected["PORT"]["Ethernet0"]["mtu"] = "1500"
    assert _update(leaf1, path, value) == expected


def test_update_leaves_its_input_alone(leaf1: ConfigDb, leaf1_original: ConfigDb) -> None:
    _update(leaf1, _p("PORT", "Ethernet0"), {"mtu": "1500", "admin_status": "down"})
    assert leaf1 == leaf1_original


@pytest.mark.parametrize(("path", "value", "where", "expected"), [
    pytest.param(_p("PORT", "Ethernet8"), {"mtu": 9000}, ("PORT", "Ethernet8"), {"mtu": "9000"}, id="missing-key"),
    pytest.param(_p("PORT", "Ethernet8", "mtu"), 9000, ("PORT", "Ethernet8"), {"mtu": "9000"},
                 id="field-of-missing-key"),
    pytest.param(_p("VLAN", "Vlan100"), {"vlanid": 100, "mtu": "9100"},
                 ("VLAN", "Vlan100"), {"vlanid": "100", "mtu": "9100"}, id="missing-table"),
    pytest.param(_p("VLAN", "Vlan100", "vlanid"), "100",
                 ("VLAN", "Vlan100"), {"vlanid": "100"}, id="field-in-missing-table"),
    pytest.param(_p("VLAN"), {"Vlan100": {"vlanid": "100"}},
                 ("VLAN", "Vlan100"), {"vlanid": "100"}, id="missing-table-at-table-level"),
    pytest.param(_p(), {"VLAN": {"Vlan100": {"vlanid": "100"}}},
                 ("VLAN", "Vlan100"), {"vlanid": "100"}, id="missing-table-at-db-level"),
    pytest.param(_p("INTERFACE", "Ethernet0|10.2.0.4/31"), {}, ("INTERFACE", "Ethernet0|10.2.0.4/31"), {},
                 id="slash-key"),
    pytest.param(_p("BGP_NEIGHBOR", "default|10.0.0.72"), {"asn": 65100, "name": "spine5", "bfd": True},
                 ("BGP_NEIGHBOR", "default|10.0.0.72"), {"asn": "65100", "name": "spine5", "bfd": "true"},
                 id="new-neighbor-stringified"),
])
def test_update_creates_what_is_missing(leaf1: ConfigDb, path: DbPath, value: Any, where: tuple[str, str],
                                        expected: dict[str, str]) -> None:
    table, key = where
    result = _update(leaf1, path, value)
    assert result[table][key] == expected
    assert {t: rows for t, rows in result.items() if t != table} == {t: rows for t, rows in leaf1.items()
                                                                     if t != table}


def test_update_keeps_sibling_keys_of_a_new_key(leaf1: ConfigDb) -> None:
    result = _update(leaf1, _p("PORT", "Ethernet8"), {"mtu": "9000"})
    assert {k: v for k, v in result["PORT"].items() if k != "Ethernet8"} == leaf1["PORT"]


def test_update_an_object_into_a_leaf_is_rejected(leaf1: ConfigDb) -> None:
    with pytest.raises(SetRejected) as err:
        _update(leaf1, _p("PORT", "Ethernet0", "mtu"), {"value": "1500"})
    assert str(err.value) == "cannot merge an object into the leaf /sonic-db:CONFIG_DB/localhost/PORT/Ethernet0/mtu"


def test_update_with_nothing_new_is_a_copy(leaf1: ConfigDb) -> None:
    result = _update(leaf1, _p("PORT", "Ethernet0"), {})
    assert result == leaf1
    assert result is not leaf1


def test_update_through_unbracketed_slash_key_is_rejected(leaf1: ConfigDb) -> None:
    path = parse(None, gnmi_path_generator("/sonic-db:CONFIG_DB/localhost/INTERFACE/Ethernet0|10.2.0.4/31"))
    assert configdb.validate(_update(leaf1, path, {})) != []


# -- replace -----------------------------------------------------------------------------------

def test_replace_of_a_key_replaces_it_whole(leaf1: ConfigDb) -> None:
    result = _replace(leaf1, _p("PORT", "Ethernet0"), {"mtu": 1500, "admin_status": "down"})
    assert result["PORT"]["Ethernet0"] == {"mtu": "1500", "admin_status": "down"}
    assert {k: v for k, v in result["PORT"].items() if k != "Ethernet0"} == {
        k: v for k, v in leaf1["PORT"].items() if k != "Ethernet0"}


@pytest.mark.parametrize(("path", "value", "where", "expected"), [
    pytest.param(_p("PORT", "Ethernet0", "mtu"), 1500, ("PORT", "Ethernet0", "mtu"), "1500", id="field"),
    pytest.param(_p("BGP_PEER_GROUP"), {"default|PEER_V4": {"name": "PEER_V4"}}, ("BGP_PEER_GROUP",),
                 {"default|PEER_V4": {"name": "PEER_V4"}}, id="table"),
    pytest.param(_p("PORT", "Ethernet8"), {"mtu": "9000"}, ("PORT", "Ethernet8"), {"mtu": "9000"}, id="missing-key"),
    pytest.param(_p("BUFFER_POOL", "pool", "size"), 1000, ("BUFFER_POOL", "pool"), {"size": "1000"},
                 id="field-in-missing-table"),
    pytest.param(_p("INTERFACE", SLASH_KEY), {"x": "1"}, ("INTERFACE", SLASH_KEY), {"x": "1"}, id="slash-key"),
])
def test_replace(leaf1: ConfigDb, path: DbPath, value: Any, where: tuple[str, ...], expected: Any) -> None:
    node: Any = _replace(leaf1, path, value)
    for part in where:
        node = node[part]
    assert node == expected


def test_replace_of_the_whole_db_returns_the_new_config(leaf1: ConfigDb) -> None:
    new = {"DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "bgp_asn": "65101"}}}
    result = _replace(leaf1, _p(), new)
    assert result == new
    assert result is not new


def test_replace_of_the_whole_db_stores_sonic_strings(leaf1: ConfigDb) -> None:
    new = copy.deepcopy(leaf1)
    new["BGP_NEIGHBOR"][NB]["bfd"] = True
    new["PORT"]["Ethernet0"]["mtu"] = 9100
    assert _replace(leaf1, _p(), new) == leaf1


def test_replace_of_the_whole_db_needs_an_object(leaf1: ConfigDb) -> None:
    with pytest.raises(SetRejected) as err:
        _replace(leaf1, _p(), ["PORT"])
    assert str(err.value) == "a replace of the whole CONFIG_DB needs a JSON object of tables"


# -- delete ------------------------------------------------------------------------------------

def _without(*path: str) -> Callable[[ConfigDb], ConfigDb]:
    def expected(db: ConfigDb) -> ConfigDb:
        out = copy.deepcopy(db)
        node: Any = out
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]
        return out
    return expected


@pytest.mark.parametrize(("path", "expected"), [
    pytest.param(_p("PORT", "Ethernet0", "mtu"), _without("PORT", "Ethernet0", "mtu"), id="field"),
    pytest.param(_p("BGP_NEIGHBOR", NB), _without("BGP_NEIGHBOR", NB), id="key"),
    pytest.param(_p("INTERFACE", SLASH_KEY), _without("INTERFACE", SLASH_KEY), id="slash-key"),
    pytest.param(_p("WRED_PROFILE"), _without("WRED_PROFILE"), id="table"),
    pytest.param(_p(), lambda db: {}, id="whole-db"),
])
def test_delete(leaf1: ConfigDb, path: DbPath, expected: Callable[[ConfigDb], ConfigDb]) -> None:
    assert _delete(leaf1, path) == expected(leaf1)


def test_delete_leaves_its_input_alone(leaf1: ConfigDb, leaf1_original: ConfigDb) -> None:
    _delete(leaf1, _p("PORT", "Ethernet0"))
    assert leaf1 == leaf1_original


@pytest.mark.parametrize(("path", "message"), [
    pytest.param(_p("PORT", "Ethernet99"),
                 "cannot apply remove at /PORT/Ethernet99: can't remove a non-existent object 'Ethernet99'",
                 id="key"),
    pytest.param(_p("PORT", "Ethernet0", "autoneg"),
                 "cannot apply remove at /PORT/Ethernet0/autoneg: can't remove a non-existent object 'autoneg'",
                 id="field"),
    pytest.param(_p("VLAN"),
                 "cannot apply remove at /VLAN: can't remove a non-existent object 'VLAN'", id="table"),
    pytest.param(_p("INTERFACE", "Ethernet0|10.9.9.9/31"),
                 "cannot apply remove at /INTERFACE/Ethernet0|10.9.9.9~131: "
                 "can't remove a non-existent object 'Ethernet0|10.9.9.9/31'", id="slash-key-as-json-pointer"),
])
def test_delete_of_something_missing_is_rejected(leaf1: ConfigDb, path: DbPath, message: str) -> None:
    with pytest.raises(SetRejected) as err:
        _delete(leaf1, path)
    assert str(err.value) == message


def test_delete_under_a_missing_key_names_the_path(leaf1: ConfigDb) -> None:
    with pytest.raises(SetRejected, match=re.escape("cannot apply remove at /PORT/Ethernet99/mtu: ")):
        _delete(leaf1, _p("PORT", "Ethernet99", "mtu"))


# -- other databases ---------------------------------------------------------------------------

SetOp = Callable[[ConfigDb, DbPath], ConfigDb]


@pytest.mark.parametrize("op", [
    pytest.param(_delete, id="delete"),
    pytest.param(lambda db, p: _replace(db, p, {"state": "Idle"}), id="replace"),
    pytest.param(lambda db, p: _update(db, p, {"state": "Idle"}), id="update"),
])
@pytest.mark.parametrize("db_name", ["STATE_DB", "APPL_DB", "COUNTERS_DB"])
def test_set_outside_config_db_is_rejected(leaf1: ConfigDb, op: SetOp, db_name: str) -> None:
    with pytest.raises(SetRejected) as err:
        op(leaf1, DbPath(db_name, "NEIGH_STATE_TABLE", "10.0.0.64"))
    assert str(err.value) == f"{db_name} is read-only; Set writes CONFIG_DB"


# -- value coding ------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "stored"), [
    pytest.param(9100, "9100", id="int"),
    pytest.param(True, "true", id="true"),
    pytest.param(False, "false", id="false"),
    pytest.param(0.5, "0.5", id="float"),
    pytest.param("up", "up", id="string"),
    pytest.param([3, 4], ["3", "4"], id="list-kept-as-a-leaf-list"),
    pytest.param({}, {}, id="empty-object"),
    pytest.param({"mtu": 9100, "fec": "rs", "bfd": True}, {"mtu": "9100", "fec": "rs", "bfd": "true"}, id="object"),
    pytest.param({"Ethernet0": {"lanes": "0,1", "mtu": 9100}}, {"Ethernet0": {"lanes": "0,1", "mtu": "9100"}},
                 id="nested"),
])
def test_stringify(value: Any, stored: Any) -> None:
    assert _stringify(value) == stored


@pytest.mark.parametrize(("typed", "value"), [
    pytest.param(gnmi_pb2.TypedValue(json_ietf_val=b'{"mtu": "9100"}'), {"mtu": "9100"}, id="json-ietf"),
    pytest.param(gnmi_pb2.TypedValue(json_val=b'{"mtu": 9100}'), {"mtu": 9100}, id="json"),
    pytest.param(gnmi_pb2.TypedValue(string_val="down"), "down", id="string"),
    pytest.param(gnmi_pb2.TypedValue(ascii_val="down"), "down", id="ascii"),
    pytest.param(gnmi_pb2.TypedValue(int_val=-5), "-5", id="int"),
    pytest.param(gnmi_pb2.TypedValue(uint_val=9100), "9100", id="uint"),
    pytest.param(gnmi_pb2.TypedValue(bool_val=True), "true", id="bool-true"),
    pytest.param(gnmi_pb2.TypedValue(bool_val=False), "false", id="bool-false"),
])
def test_decode(typed: gnmi_pb2.TypedValue, value: Any) -> None:
    assert _decode(typed) == value


@pytest.mark.parametrize("typed", [
    pytest.param(gnmi_pb2.TypedValue(), id="no-value"),
    pytest.param(gnmi_pb2.TypedValue(bytes_val=b"9100"), id="bytes"),
    pytest.param(gnmi_pb2.TypedValue(float_val=1.5), id="float"),
])
def test_decode_needs_an_encoding(typed: gnmi_pb2.TypedValue) -> None:
    with pytest.raises(SetRejected) as err:
        _decode(typed)
    assert str(err.value) == "a Set value needs an encoding: send json_ietf_val (pygnmi: encoding='json_ietf')"


def test_decode_rejects_bad_json() -> None:
    with pytest.raises(SetRejected, match=r"^value is not JSON: "):
        _decode(gnmi_pb2.TypedValue(json_ietf_val=b"{mtu: 9100"))


@pytest.mark.parametrize(("encoding", "field"), [
    pytest.param(gnmi_pb2.Encoding.JSON_IETF, "json_ietf_val", id="json-ietf"),
    pytest.param(gnmi_pb2.Encoding.ASCII, "json_ietf_val", id="ascii-falls-back"),
    pytest.param(gnmi_pb2.Encoding.BYTES, "json_ietf_val", id="bytes-falls-back"),
    pytest.param(gnmi_pb2.Encoding.JSON, "json_val", id="json"),
])
def test_typed_json_encodings(encoding: int, field: str) -> None:
    value = {"Ethernet0": {"mtu": "9100"}}
    typed = _typed(value, encoding)
    assert typed.WhichOneof("value") == field
    assert json.loads(getattr(typed, field)) == value


@pytest.mark.parametrize(("value", "typed"), [
    pytest.param("Established", gnmi_pb2.TypedValue(string_val="Established"), id="string-leaf"),
    pytest.param(9100, gnmi_pb2.TypedValue(string_val="9100"), id="int-leaf"),
    pytest.param({"state": "Idle"}, gnmi_pb2.TypedValue(json_ietf_val=b'{"state": "Idle"}'), id="object"),
])
def test_typed_proto(value: Any, typed: gnmi_pb2.TypedValue) -> None:
    assert _typed(value, gnmi_pb2.Encoding.PROTO) == typed


@pytest.mark.parametrize("value", [
    pytest.param({"PORT": {"Ethernet0": {"mtu": "9100"}}}, id="object"),
    pytest.param("9100", id="string"),
])
def test_typed_then_decoded_is_the_value(value: Any) -> None:
    assert _decode(_typed(value, gnmi_pb2.Encoding.JSON_IETF)) == value
