"""gNMI paths in SONiC's shape: what `parse` makes of paths built the way pygnmi builds them, and back."""

from __future__ import annotations

import pytest
from pygnmi.create_gnmi_path import gnmi_path_degenerator, gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2

from twin.gnmi.paths import DbPath, PathError, parse, to_proto

DBS = "CONFIG_DB, APPL_DB, STATE_DB, COUNTERS_DB"
TOO_DEEP_HINT = "expected DB/localhost/TABLE/KEY/FIELD (write keys containing '/' as TABLE[key=...])"


def _path(text: str, target: str | None = None) -> gnmi_pb2.Path:
    return gnmi_path_generator(text, target=target)


@pytest.mark.parametrize(("prefix", "path", "expected"), [
    pytest.param(None, "/sonic-db:CONFIG_DB/localhost/PORT/Ethernet0/mtu",
                 DbPath("CONFIG_DB", "PORT", "Ethernet0", "mtu"), id="native-field"),
    pytest.param(None, "sonic-db:CONFIG_DB/localhost/INTERFACE[key=Ethernet0|10.0.0.0/31]",
                 DbPath("CONFIG_DB", "INTERFACE", "Ethernet0|10.0.0.0/31"), id="native-key-with-slash"),
    pytest.param(None, "/sonic-db:APPL_DB/localhost/ROUTE_TABLE[key=10.1.4.2/32]/nexthop",
                 DbPath("APPL_DB", "ROUTE_TABLE", "10.1.4.2/32", "nexthop"), id="native-slash-key-then-field"),
    pytest.param(None, "/sonic-db:CONFIG_DB/localhost/", DbPath("CONFIG_DB"), id="native-whole-db"),
    pytest.param(None, "/sonic-db:STATE_DB/localhost/NEIGH_STATE_TABLE",
                 DbPath("STATE_DB", "NEIGH_STATE_TABLE"), id="native-table"),
    pytest.param(None, "/sonic-db:CONFIG_DB/localhost/DEVICE_METADATA/localhost/hostname",
                 DbPath("CONFIG_DB", "DEVICE_METADATA", "localhost", "hostname"), id="key-named-localhost"),
    pytest.param(None, "/sonic-db:COUNTERS_DB/COUNTERS_PORT_NAME_MAP",
                 DbPath("COUNTERS_DB", "COUNTERS_PORT_NAME_MAP"), id="localhost-elem-optional"),
    pytest.param(None, "/CONFIG_DB/localhost/PORT", DbPath("CONFIG_DB", "PORT"), id="no-origin"),
    pytest.param(_path("/sonic-db:CONFIG_DB/localhost"), "PORT/Ethernet0",
                 DbPath("CONFIG_DB", "PORT", "Ethernet0"), id="native-prefix-plus-relative-path"),
    pytest.param(_path("", target="STATE_DB"), "NEIGH_STATE_TABLE/10.0.0.64",
                 DbPath("STATE_DB", "NEIGH_STATE_TABLE", "10.0.0.64"), id="legacy-prefix-target"),
    pytest.param(_path("", target="APPL_DB"), "ROUTE_TABLE[key=10.1.4.2/32]",
                 DbPath("APPL_DB", "ROUTE_TABLE", "10.1.4.2/32"), id="legacy-prefix-target-slash-key"),
    pytest.param(_path("", target="STATE_DB"), "", DbPath("STATE_DB"), id="legacy-whole-db"),
    pytest.param(_path("", target="localhost"), "/sonic-db:CONFIG_DB/localhost/PORT",
                 DbPath("CONFIG_DB", "PORT"), id="target-localhost-ignored"),
])
def test_parse(prefix: gnmi_pb2.Path | None, path: str, expected: DbPath) -> None:
    assert parse(prefix, _path(path)) == expected


def test_parse_target_on_the_path_itself() -> None:
    assert parse(None, _path("PORT_TABLE/Ethernet0", target="STATE_DB")) == DbPath("STATE_DB", "PORT_TABLE",
                                                                                 "Ethernet0")


@pytest.mark.parametrize(("prefix", "path", "message"), [
    pytest.param(None, "/sonic-db:FOO_DB/localhost/PORT",
                 f"unknown database 'FOO_DB'; use one of {DBS}", id="unknown-db"),
    pytest.param(None, "/sonic-db:localhost/PORT",
                 f"unknown database 'localhost'; use one of {DBS}", id="db-missing"),
    pytest.param(_path("", target="FOO_DB"), "PORT/Ethernet0",
                 f"unknown target 'FOO_DB'; use one of {DBS}", id="unknown-target"),
    pytest.param(None, "/openconfig:interfaces",
                 "unsupported origin 'openconfig'; this switch serves 'sonic-db'", id="wrong-origin"),
    pytest.param(_path("/openconfig:"), "CONFIG_DB/localhost/PORT",
                 "unsupported origin 'openconfig'; this switch serves 'sonic-db'", id="wrong-origin-in-prefix"),
    pytest.param(None, "/sonic-db:APPL_DB/localhost/ROUTE_TABLE/10.1.4.2/32/nexthop",
                 f"path too deep: APPL_DB/localhost/ROUTE_TABLE/10.1.4.2/32/nexthop; {TOO_DEEP_HINT}",
                 id="too-deep-unbracketed-slash-key"),
    pytest.param(None, "/sonic-db:CONFIG_DB/localhost/PORT/Ethernet0/mtu/extra",
                 f"path too deep: CONFIG_DB/localhost/PORT/Ethernet0/mtu/extra; {TOO_DEEP_HINT}", id="too-deep"),
    pytest.param(None, "", "empty path; use /sonic-db:CONFIG_DB/localhost/...", id="empty"),
    pytest.param(None, "/", "empty path; use /sonic-db:CONFIG_DB/localhost/...", id="slash"),
    pytest.param(None, "sonic-db://", "empty path; use /sonic-db:CONFIG_DB/localhost/...", id="origin-only"),
    pytest.param(None, "/sonic-db:CONFIG_DB/localhost/PORT[name=Ethernet0]",
                 "unsupported key {'name': 'Ethernet0'} on 'PORT'; use PORT[key=...]", id="key-not-named-key"),
])
def test_parse_errors(prefix: gnmi_pb2.Path | None, path: str, message: str) -> None:
    with pytest.raises(PathError) as err:
        parse(prefix, _path(path))
    assert str(err.value) == message


def test_unbracketed_slash_key_reads_as_key_and_field() -> None:
    """The pitfall of DESIGN §9: pygnmi splits on every '/', and a 3-part rest is a valid key/field path."""
    assert parse(None, _path("/sonic-db:CONFIG_DB/localhost/INTERFACE/Ethernet0|10.0.0.0/31")) == DbPath(
        "CONFIG_DB", "INTERFACE", "Ethernet0|10.0.0.0", "31")


def test_path_error_is_a_value_error() -> None:
    assert issubclass(PathError, ValueError)


ROUND_TRIP = [
    pytest.param(DbPath("CONFIG_DB"), id="whole-db"),
    pytest.param(DbPath("STATE_DB", "NEIGH_STATE_TABLE"), id="table"),
    pytest.param(DbPath("STATE_DB", "NEIGH_STATE_TABLE", "10.0.0.64"), id="key"),
    pytest.param(DbPath("CONFIG_DB", "PORT", "Ethernet0", "mtu"), id="field"),
    pytest.param(DbPath("CONFIG_DB", "DEVICE_METADATA", "localhost", "hostname"), id="key-named-localhost"),
    pytest.param(DbPath("CONFIG_DB", "INTERFACE", "Ethernet0|10.0.0.0/31"), id="slash-key"),
    pytest.param(DbPath("APPL_DB", "ROUTE_TABLE", "10.1.4.2/32", "nexthop"), id="slash-key-field"),
    pytest.param(DbPath("COUNTERS_DB", "COUNTERS", "oid:0x1000000000000"), id="colon-key"),
]


@pytest.mark.parametrize("p", ROUND_TRIP)
def test_to_proto_round_trips_through_parse(p: DbPath) -> None:
    assert parse(None, to_proto(p)) == p


@pytest.mark.parametrize("p", ROUND_TRIP)
def test_to_proto_round_trips_through_pygnmi_strings(p: DbPath) -> None:
    """What a pygnmi client prints for our path, fed back to pygnmi, names the same thing."""
    assert parse(None, _path(gnmi_path_degenerator(to_proto(p)))) == p


@pytest.mark.parametrize(("p", "elems"), [
    pytest.param(DbPath("CONFIG_DB"), [gnmi_pb2.PathElem(name="CONFIG_DB"), gnmi_pb2.PathElem(name="localhost")],
                 id="whole-db"),
    pytest.param(DbPath("CONFIG_DB", "PORT", "Ethernet0", "mtu"),
                 [gnmi_pb2.PathElem(name="CONFIG_DB"), gnmi_pb2.PathElem(name="localhost"),
                  gnmi_pb2.PathElem(name="PORT"), gnmi_pb2.PathElem(name="Ethernet0"),
                  gnmi_pb2.PathElem(name="mtu")], id="plain-key-is-an-elem"),
    pytest.param(DbPath("CONFIG_DB", "INTERFACE", "Ethernet0|10.0.0.0/31"),
                 [gnmi_pb2.PathElem(name="CONFIG_DB"), gnmi_pb2.PathElem(name="localhost"),
                  gnmi_pb2.PathElem(name="INTERFACE", key={"key": "Ethernet0|10.0.0.0/31"})],
                 id="slash-key-in-brackets"),
    pytest.param(DbPath("APPL_DB", "ROUTE_TABLE", "10.1.4.2/32", "ifname"),
                 [gnmi_pb2.PathElem(name="APPL_DB"), gnmi_pb2.PathElem(name="localhost"),
                  gnmi_pb2.PathElem(name="ROUTE_TABLE", key={"key": "10.1.4.2/32"}),
                  gnmi_pb2.PathElem(name="ifname")], id="slash-key-then-field"),
])
def test_to_proto_shape(p: DbPath, elems: list[gnmi_pb2.PathElem]) -> None:
    assert to_proto(p) == gnmi_pb2.Path(origin="sonic-db", elem=elems)


@pytest.mark.parametrize(("p", "text"), [
    pytest.param(DbPath("CONFIG_DB"), "/sonic-db:CONFIG_DB/localhost", id="whole-db"),
    pytest.param(DbPath("CONFIG_DB", "PORT", "Ethernet0", "mtu"), "/sonic-db:CONFIG_DB/localhost/PORT/Ethernet0/mtu",
                 id="field"),
])
def test_str(p: DbPath, text: str) -> None:
    assert str(p) == text
