"""A Set as sonic-gnmi turns it into GCU's input (twin.switch.sonic_gnmi.patch, .paths): pure.

Each case names the mixed_db_client.go / json_client.go behaviour it mirrors (sonic-gnmi 5ec1c20b).
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.sonic_gnmi.gcu import _first_token, _supplemental_errors
from twin.switch.sonic_gnmi.golang import go_json
from twin.switch.sonic_gnmi.native import typed_fields, typed_value
from twin.switch.sonic_gnmi.patch import Checkpoint, set_plan
from twin.switch.sonic_gnmi.paths import json_pointer, not_found, parse_database, path_origin, table_path
from twin.switch.sonic_gnmi.status import GnmiStatus

RUNNING: dict[str, Any] = {
    "PORT": {"Ethernet0": {"lanes": "1,2,3,4", "mtu": "9100", "admin_status": "up"}},
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}},
    "ACL_TABLE": {"DATA": {"ports": ["Ethernet0", "Ethernet4"], "type": "L3"}},
}


def p(text: str) -> gnmi_pb2.Path:
    return gnmi_path_generator(text)


def upd(path: str, value: Any) -> gnmi_pb2.Update:
    return gnmi_pb2.Update(path=p(path), val=gnmi_pb2.TypedValue(json_ietf_val=json.dumps(value).encode()))


C = "/sonic-db:CONFIG_DB/localhost"


@pytest.mark.parametrize(("path", "pointer"), [
    (f"{C}/PORT/Ethernet0", "/PORT/Ethernet0"),
    (f"{C}/PORT/Ethernet0/mtu", "/PORT/Ethernet0/mtu"),
    (f"{C}/", ""),  # the whole config (ConvertToJsonPatch trims the trailing /)
    # keys are written [k=v], not resolved: GCU then sees a table named BGP_NEIGHBOR[key=...]
    (f"{C}/BGP_NEIGHBOR[key=default|10.0.0.1]", "/BGP_NEIGHBOR[key=default|10.0.0.1]"),
    (f"{C}/INTERFACE/Ethernet0|10.0.0.0~131", "/INTERFACE/Ethernet0|10.0.0.0~131"),  # ~1 is JSON Pointer's /
])
def test_json_pointer_as_convert_to_json_patch_forms_it(path: str, pointer: str) -> None:
    assert json_pointer(None, p(path)) == pointer


def test_update_of_a_key_is_an_add_that_replaces_the_entry() -> None:
    """test_gnmi_configdb.py test_data_update_normal[2]: a key-level update is `add` of the object."""
    plan = set_plan(None, [], [], [upd(f"{C}/PORT/Ethernet0", {"admin_status": "down"})], RUNNING)
    assert plan.kind == "patch"
    assert plan.patch == [{"op": "add", "path": "/PORT/Ethernet0", "value": {"admin_status": "down"}}]


def test_delete_of_a_missing_path_is_skipped() -> None:
    """SetIncrementalConfig: `c.jClient.Remove` failed -> `continue` (no patch operation)."""
    plan = set_plan(None, [p(f"{C}/PORT/Ethernet8"), p(f"{C}/PORT/Ethernet0/mtu")], [], [], RUNNING)
    assert plan.patch == [{"op": "remove", "path": "/PORT/Ethernet0/mtu"}]


def test_replace_needs_the_path_to_exist() -> None:
    """SetIncrementalConfig: jClient.Replace = Remove then Add; a failed Remove fails the Set."""
    with pytest.raises(GnmiStatus) as err:
        set_plan(None, [], [upd(f"{C}/PORT/Ethernet8", {"mtu": "9100"})], [], RUNNING)
    assert err.value.code == grpc.StatusCode.UNKNOWN
    plan = set_plan(None, [], [upd(f"{C}/PORT/Ethernet0/mtu", "9000")], [], RUNNING)
    assert plan.patch == [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}]


def test_a_key_with_a_slash_is_found_in_the_checkpoint_by_its_tilde_one_form() -> None:
    """json_client.go FixPath: `~1` in the key element reads as `/`."""
    plan = set_plan(None, [p(f"{C}/INTERFACE/Ethernet0|10.0.0.0~131")], [], [], RUNNING)
    assert plan.patch == [{"op": "remove", "path": "/INTERFACE/Ethernet0|10.0.0.0~131"}]


@pytest.mark.parametrize(("delete", "replace", "update", "kind"), [
    ([f"{C}/"], [], [(f"{C}/", {"PORT": {}})], "full-validate"),  # SetFullConfig
    ([], [(f"{C}/", {"PORT": {}})], [], "replace"),  # ReplaceFullConfig
    ([f"{C}/"], [], [], "patch"),  # a root delete alone: jClient.Remove fails, skipped
    ([], [(f"{C}/PORT", {"Ethernet0": {"lanes": "1"}})], [(f"{C}/", {})], "patch"),
])
def test_set_shapes_as_set_config_db_picks_them(delete: list[str], replace: list[tuple[str, Any]],
                                                  update: list[tuple[str, Any]], kind: str) -> None:
    try:
        plan = set_plan(None, [p(x) for x in delete], [upd(*x) for x in replace], [upd(*x) for x in update], RUNNING)
    except GnmiStatus:
        assert kind == "patch"  # the mixed one fails in the checkpoint (root update is no table path)
        return
    assert plan.kind == kind
    if kind == "patch" and delete:
        assert plan.patch == []


def test_values_must_be_json_ietf() -> None:
    """ConvertToJsonPatch: "Value encoding is not IETF JSON" (pygnmi's default encoding is json)."""
    bad = gnmi_pb2.Update(path=p(f"{C}/PORT/Ethernet0/mtu"), val=gnmi_pb2.TypedValue(json_val=b'"9000"'))
    with pytest.raises(GnmiStatus, match=r"Fail to parse|IETF JSON"):
        set_plan(None, [], [], [bad], RUNNING)


def test_a_bare_string_is_not_json() -> None:
    """pygnmi sends a str value as it is: `uplink` is not JSON, `"uplink"` is."""
    bare = gnmi_pb2.Update(path=p(f"{C}/PORT/Ethernet0/description"),
                           val=gnmi_pb2.TypedValue(json_ietf_val=b"uplink"))
    with pytest.raises(GnmiStatus, match="Fail to parse uplink"):
        set_plan(None, [], [], [bare], RUNNING)


def test_checkpoint_list_items_by_index() -> None:
    """json_client.go Add/Remove with a fourth element: a leaf-list item."""
    cp = Checkpoint(RUNNING)
    cp.add(["ACL_TABLE", "DATA", "ports", "1"], b'"Ethernet8"')
    assert cp.data["ACL_TABLE"]["DATA"]["ports"] == ["Ethernet0", "Ethernet8", "Ethernet4"]
    cp.remove(["ACL_TABLE", "DATA", "ports", "0"])
    assert cp.data["ACL_TABLE"]["DATA"]["ports"] == ["Ethernet8", "Ethernet4"]
    with pytest.raises(KeyError):
        cp.remove(["ACL_TABLE", "DATA", "ports", "7"])
    assert RUNNING["ACL_TABLE"]["DATA"]["ports"] == ["Ethernet0", "Ethernet4"]  # the running config untouched


# -- paths -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("paths", "message"), [
    ([], "No valid path"),
    (["/sonic-db:CONFIG_DB"], "Invalid elem length"),
    (["/sonic-db:CONFIG_DB/localhost/PORT", "/sonic-db:STATE_DB/localhost/PORT_TABLE"], "Target conflict in path"),
    (["/sonic-db:NO_SUCH_DB/localhost/PORT"], "Invalid target"),
])
def test_parse_database_refusals_are_unimplemented(paths: list[str], message: str) -> None:
    with pytest.raises(GnmiStatus) as err:
        parse_database(None, [p(x) for x in paths])
    assert err.value.code == grpc.StatusCode.UNIMPLEMENTED and message in err.value.message
    wrapped = not_found(err.value)  # server.go: status.Error(codes.NotFound, err.Error())
    assert wrapped.code == grpc.StatusCode.NOT_FOUND
    assert wrapped.message == f"rpc error: code = Unimplemented desc = {err.value.message}"


def test_origin_conflict() -> None:
    with pytest.raises(GnmiStatus, match="Origin conflict in path"):
        path_origin(None, [p("/sonic-db:CONFIG_DB/localhost/PORT"), p("/openconfig:interfaces")])


@pytest.mark.parametrize(("path", "table", "key", "field", "index"), [
    (f"{C}/PORT/Ethernet0/mtu", "PORT", "Ethernet0", "mtu", -1),
    (f"{C}/INTERFACE[key=Ethernet0|10.0.0.0/31]", "INTERFACE", "Ethernet0|10.0.0.0/31", "", -1),
    (f"{C}/ACL_TABLE/DATA/ports/1", "ACL_TABLE", "DATA", "ports", 1),
    # COUNTERS_DB flat hashes get an empty key: the next element is a field
    ("/sonic-db:COUNTERS_DB/localhost/COUNTERS_PORT_NAME_MAP/Ethernet0", "COUNTERS_PORT_NAME_MAP", "", "Ethernet0", -1),
    ("/sonic-db:COUNTERS_DB/localhost/COUNTERS/oid:0x1000000000001", "COUNTERS", "oid:0x1000000000001", "", -1),
])
def test_table_paths(path: str, table: str, key: str, field: str, index: int) -> None:
    gp = p(path)
    tp = table_path(gp.elem[0].name, None, gp)
    assert (tp.table, tp.key, tp.field, tp.index) == (table, key, field, index)


# -- values ----------------------------------------------------------------------------------

def test_go_json_sorts_and_escapes_as_encoding_json() -> None:
    assert go_json({"b": "x<y", "a": ["1"]}) == b'{"a":["1"],"b":"x\\u003cy"}'


def test_redis_hash_as_sonic_gnmi_renders_it() -> None:
    assert typed_fields({"NULL": "NULL", "ports@": "Ethernet0,Ethernet4", "type": "L3"}) == {
        "ports": ["Ethernet0", "Ethernet4"], "type": "L3"}


def test_json_encoding_is_unknown_to_the_native_handler() -> None:
    """msi2TypedValue: only JSON_IETF and PROTO."""
    with pytest.raises(GnmiStatus, match="Unknown encoding JSON"):
        typed_value({"mtu": "9100"}, gnmi_pb2.Encoding.JSON)


# -- GCU's own checks ------------------------------------------------------------------------

@pytest.mark.parametrize(("ports", "error"), [
    ({"Ethernet0": {"lanes": "1,2"}, "Ethernet4": {"lanes": "2,3"}}, "'2' lane is used multiple times"),
    ({"Ethernet0": {"lanes": "1,,2"}}, "has an empty lane"),
    ({"Ethernet0": {"lanes": "1,x"}}, "has an invalid lane 'x'"),
    ({"Ethernet0": {"lanes": "1,2"}, "Ethernet4": {"lanes": "3,4"}}, ""),
])
def test_lanes_as_validate_lanes_judges_them(ports: dict[str, Any], error: str) -> None:
    errors = _supplemental_errors({"PORT": ports})
    assert (error in errors[0]) if error else errors == []


def test_patch_tables_decode_json_pointer() -> None:
    assert _first_token("/BGP_NEIGHBOR[key=default|10.0.0.1]") == "BGP_NEIGHBOR[key=default|10.0.0.1]"
    assert _first_token("/PORT/Ethernet0") == "PORT"
    assert _first_token("") == ""
