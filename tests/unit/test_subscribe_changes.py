"""ON_CHANGE Subscribe: what one re-read of the subscribed state sends, given the previous read."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2

from twin.gnmi.paths import DbPath, parse, to_proto
from twin.switch.subscribe import _changes, _Sub

UP = {"state": "Established", "peerType": "e-BGP"}
DOWN = {"state": "Idle", "peerType": "e-BGP"}
NEIGH = {"10.0.0.64": UP, "10.0.0.66": UP, "10.0.0.68": UP}


def _sub(path: str, last: Any, prefix: gnmi_pb2.Path | None = None) -> _Sub:
    proto = gnmi_path_generator(path)
    return _Sub(path=proto, db_path=parse(prefix, proto), on_change=True, interval=0.05, last=last)


def _sent(updates: list[gnmi_pb2.Update]) -> dict[str, Any]:
    """Updates as {key: decoded value}, checking each path names a key of the subscribed table."""
    out: dict[str, Any] = {}
    for u in updates:
        assert u.val.WhichOneof("value") == "json_ietf_val"
        p = parse(None, u.path)
        assert p.key is not None and p.field is None
        out[p.key] = json.loads(u.val.json_ietf_val)
    return out


TABLE = "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE"


@pytest.mark.parametrize(("before", "after", "updated", "deleted"), [
    pytest.param(NEIGH, NEIGH, {}, [], id="nothing-changed"),
    pytest.param(NEIGH, {**NEIGH, "10.0.0.64": DOWN}, {"10.0.0.64": DOWN}, [], id="one-session-down"),
    pytest.param(NEIGH, {**NEIGH, "10.0.0.64": DOWN, "10.0.0.68": DOWN}, {"10.0.0.64": DOWN, "10.0.0.68": DOWN}, [],
                 id="two-sessions-down"),
    pytest.param(NEIGH, {"10.0.0.64": UP, "10.0.0.66": UP}, {}, ["10.0.0.68"], id="peer-vanished"),
    pytest.param(NEIGH, {**NEIGH, "10.0.0.70": DOWN}, {"10.0.0.70": DOWN}, [], id="peer-appeared"),
    pytest.param(NEIGH, {"10.0.0.64": DOWN, "10.0.0.70": UP}, {"10.0.0.64": DOWN, "10.0.0.70": UP},
                 ["10.0.0.66", "10.0.0.68"], id="changed-appeared-and-vanished"),
    pytest.param(NEIGH, {}, {}, ["10.0.0.64", "10.0.0.66", "10.0.0.68"], id="table-emptied"),
    pytest.param({}, NEIGH, NEIGH, [], id="table-filled"),
])
def test_table_subscription_sends_only_changed_keys(before: dict[str, Any], after: dict[str, Any],
                                                    updated: dict[str, Any], deleted: list[str]) -> None:
    updates, deletes = _changes(_sub(TABLE, before), after)
    assert _sent(updates) == updated
    assert deletes == [to_proto(DbPath("STATE_DB", "NEIGH_STATE_TABLE", key)) for key in deleted]


def test_table_subscription_update_paths_bracket_slash_keys() -> None:
    before = {"10.1.4.2/32": {"nexthop": "10.0.0.64,10.0.0.66", "ifname": "Ethernet128,Ethernet132"}}
    after = {"10.1.4.2/32": {"nexthop": "10.0.0.64", "ifname": "Ethernet128"}}
    updates, deletes = _changes(_sub("/sonic-db:APPL_DB/localhost/ROUTE_TABLE", before), after)
    assert deletes == []
    assert [u.path for u in updates] == [to_proto(DbPath("APPL_DB", "ROUTE_TABLE", "10.1.4.2/32"))]
    assert updates[0].path.elem[2] == gnmi_pb2.PathElem(name="ROUTE_TABLE", key={"key": "10.1.4.2/32"})


def test_whole_db_subscription_sends_changed_tables() -> None:
    before = {"NEIGH_STATE_TABLE": NEIGH, "PORT_TABLE": {"Ethernet0": {"oper_status": "up"}}}
    after = {"NEIGH_STATE_TABLE": NEIGH, "PORT_TABLE": {"Ethernet0": {"oper_status": "down"}}}
    updates, deletes = _changes(_sub("/sonic-db:STATE_DB/localhost/", before), after)
    assert deletes == []
    assert [u.path for u in updates] == [to_proto(DbPath("STATE_DB", "PORT_TABLE"))]
    assert json.loads(updates[0].val.json_ietf_val) == after["PORT_TABLE"]


def test_table_subscription_without_a_previous_read_sends_the_table_once() -> None:
    sub = _sub(TABLE, None)
    updates, deletes = _changes(sub, NEIGH)
    assert deletes == []
    assert [u.path for u in updates] == [sub.path]
    assert json.loads(updates[0].val.json_ietf_val) == NEIGH


LEAF = "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE/10.0.0.64/state"
ROW = "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE/10.0.0.64"


@pytest.mark.parametrize(("path", "before", "after"), [
    pytest.param(LEAF, "Established", "Idle", id="leaf"),
    pytest.param(ROW, UP, DOWN, id="row"),
    pytest.param(LEAF, "Established", None, id="leaf-to-null"),
])
def test_leaf_subscription_sends_one_update_when_changed(path: str, before: Any, after: Any) -> None:
    sub = _sub(path, before)
    updates, deletes = _changes(sub, after)
    assert deletes == []
    assert [u.path for u in updates] == [sub.path]
    assert updates[0].val.WhichOneof("value") == "json_ietf_val"
    assert json.loads(updates[0].val.json_ietf_val) == after


@pytest.mark.parametrize(("path", "value"), [
    pytest.param(LEAF, "Established", id="leaf"),
    pytest.param(ROW, UP, id="row"),
])
def test_leaf_subscription_sends_nothing_when_unchanged(path: str, value: Any) -> None:
    assert _changes(_sub(path, value), value) == ([], [])


@pytest.mark.parametrize("prefix", [
    pytest.param(gnmi_path_generator("", target="STATE_DB"), id="legacy-target"),
    pytest.param(gnmi_path_generator("/sonic-db:STATE_DB/localhost"), id="native-prefix"),
])
def test_table_subscription_paths_are_relative_to_the_prefix(prefix: gnmi_pb2.Path) -> None:
    sub = _sub("NEIGH_STATE_TABLE", NEIGH, prefix=prefix)
    updates, deletes = _changes(sub, {"10.0.0.64": DOWN, "10.0.0.66": UP})
    assert [parse(prefix, u.path) for u in updates] == [DbPath("STATE_DB", "NEIGH_STATE_TABLE", "10.0.0.64")]
    assert [parse(prefix, d) for d in deletes] == [DbPath("STATE_DB", "NEIGH_STATE_TABLE", "10.0.0.68")]
