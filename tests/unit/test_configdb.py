"""CONFIG_DB validation (whole, before anything is applied) and atomic persistence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from configdb_edits import LEAF1, Mutation
from configdb_edits import both as _both
from configdb_edits import drop_at as _drop
from configdb_edits import set_at as _set

from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.stages.render.frr import render_frr

NB = "default|10.0.0.64"
NO_MODEL = "no SONiC YANG model defines this table (SONiC's config reload, GCU and gNMI Set refuse it)"



def test_leaf1_is_valid(leaf1: ConfigDb) -> None:
    assert configdb.validate(leaf1) == []


@pytest.mark.parametrize(("mutate", "errors"), [
    # shape
    pytest.param(lambda db: [], ["CONFIG_DB must be a JSON object of tables"], id="list-not-object"),
    pytest.param(lambda db: "PORT", ["CONFIG_DB must be a JSON object of tables"], id="string-not-object"),
    pytest.param(lambda db: None, ["CONFIG_DB must be a JSON object of tables"], id="null-not-object"),
    pytest.param(_set("BFD_PROFILE", value={"twin": {"detect_multiplier": "3"}}), [f"BFD_PROFILE: {NO_MODEL}"],
                 id="table-without-a-yang-model"),
    pytest.param(_set("PORT", value=[]), ["PORT: every key must map to an object of fields"], id="table-not-object"),
    pytest.param(_set("PORT", "Ethernet0", value="up"), ["PORT: every key must map to an object of fields"],
                 id="row-not-object"),
    # DEVICE_METADATA
    pytest.param(_drop("DEVICE_METADATA"), ["DEVICE_METADATA|localhost is required (hostname, bgp_asn)"],
                 id="device-metadata-missing"),
    pytest.param(_set("DEVICE_METADATA", value={}), ["DEVICE_METADATA|localhost is required (hostname, bgp_asn)"],
                 id="device-metadata-localhost-missing"),
    pytest.param(_set("DEVICE_METADATA", "localhost", "bgp_asn", value="AS65101"),
                 ["DEVICE_METADATA|localhost bgp_asn: 'AS65101' is not an ASN (1-4294967294)"], id="bad-bgp-asn"),
    # PORT
    pytest.param(_set("PORT", "Ethernet0", "mtu", value="9217"), ["PORT|Ethernet0 mtu: '9217' is not in 68-9216"],
                 id="mtu-too-big"),
    pytest.param(_set("PORT", "Ethernet0", "mtu", value="67"), ["PORT|Ethernet0 mtu: '67' is not in 68-9216"],
                 id="mtu-too-small"),
    pytest.param(_set("PORT", "Ethernet0", "mtu", value="jumbo"), ["PORT|Ethernet0 mtu: 'jumbo' is not in 68-9216"],
                 id="mtu-not-a-number"),
    pytest.param(_set("PORT", "Ethernet0", "speed", value="100"),
                 ["PORT|Ethernet0 speed: '100' is not in 1000-800000"], id="speed-out-of-range"),
    pytest.param(_set("PORT", "Ethernet0", "admin_status", value="shutdown"),
                 ["PORT|Ethernet0 admin_status: 'shutdown' must be up or down"], id="bad-admin-status"),
    pytest.param(_set("PORT", "eth0", value={"lanes": "0", "speed": "1000"}), ["PORT|eth0: port names are Ethernet<N>"],
                 id="bad-port-name"),
    # INTERFACE / LOOPBACK_INTERFACE
    pytest.param(_drop("INTERFACE", "Ethernet0"),
                 ["INTERFACE|Ethernet0|10.2.0.0/31: the base key 'Ethernet0' is missing; add \"Ethernet0\": {}"],
                 id="interface-base-key-missing"),
    pytest.param(_drop("LOOPBACK_INTERFACE", "Loopback0"),
                 ["LOOPBACK_INTERFACE|Loopback0|10.1.4.1/32: the base key 'Loopback0' is missing; "
                  "add \"Loopback0\": {}"], id="loopback-base-key-missing"),
    pytest.param(_set("INTERFACE", "Ethernet8", value={}), ["INTERFACE|Ethernet8: port Ethernet8 is not in PORT"],
                 id="interface-on-unknown-port"),
    pytest.param(_both(_set("INTERFACE", "Ethernet8", value={}), _set("INTERFACE", "Ethernet8|10.9.0.0/31", value={})),
                 ["INTERFACE|Ethernet8: port Ethernet8 is not in PORT",
                  "INTERFACE|Ethernet8|10.9.0.0/31: port Ethernet8 is not in PORT"],
                 id="interface-address-on-unknown-port"),
    pytest.param(_drop("PORT", "Ethernet4"),
                 ["INTERFACE|Ethernet4: port Ethernet4 is not in PORT",
                  "INTERFACE|Ethernet4|10.2.0.2/31: port Ethernet4 is not in PORT"],
                 id="port-removed-under-its-interface"),
    pytest.param(_set("INTERFACE", "Ethernet0|10.2.0.300/31", value={}),
                 ["INTERFACE|Ethernet0|10.2.0.300/31: '10.2.0.300/31' is not an address with a prefix length"],
                 id="interface-bad-address"),
    # BGP_NEIGHBOR
    pytest.param(_set("BGP_NEIGHBOR", NB, "peer_group_name", value="PEER_V6"),
                 [f"BGP_NEIGHBOR|{NB} peer_group_name: no BGP_PEER_GROUP 'PEER_V6'"], id="unknown-peer-group"),
    pytest.param(_drop("BGP_PEER_GROUP", "default|PEER_V4"),
                 [f"BGP_NEIGHBOR|default|10.0.0.{n} peer_group_name: no BGP_PEER_GROUP 'PEER_V4'"
                  for n in (64, 66, 68, 70)], id="peer-group-removed-under-its-neighbors"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "asn", value="0"),
                 [f"BGP_NEIGHBOR|{NB} asn: '0' is not an ASN (1-4294967294)"], id="asn-zero"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "asn", value="4294967295"),
                 [f"BGP_NEIGHBOR|{NB} asn: '4294967295' is not an ASN (1-4294967294)"], id="asn-too-big"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "asn", value="65100.1"),
                 [f"BGP_NEIGHBOR|{NB} asn: '65100.1' is not an ASN (1-4294967294)"], id="asn-dotted"),
    pytest.param(_drop("BGP_NEIGHBOR", NB, "asn"),
                 [f"BGP_NEIGHBOR|{NB} asn: 'None' is not an ASN (1-4294967294)"], id="asn-missing"),
    pytest.param(_set("BGP_NEIGHBOR", "default|10.0.0.300", value={"asn": "65100"}),
                 ["BGP_NEIGHBOR|default|10.0.0.300: '10.0.0.300' is not an IP address"], id="peer-not-an-ip"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "bfd", value="yes"),
                 [f"BGP_NEIGHBOR|{NB} bfd: 'yes' must be true or false"], id="bfd-not-true-false"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "admin_status", value="disabled"),
                 [f"BGP_NEIGHBOR|{NB} admin_status: 'disabled' must be up or down"], id="neighbor-bad-admin-status"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "holdtime", value="65536"),
                 [f"BGP_NEIGHBOR|{NB} holdtime: '65536' is not in 0-65535"], id="holdtime-out-of-range"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "conn_retry", value="0"),
                 [f"BGP_NEIGHBOR|{NB} conn_retry: '0' is not in 1-65535"], id="conn-retry-zero"),
    # BGP globals, networks, BFD
    pytest.param(_set("BGP_GLOBALS_AF", "default|ipv4_unicast", "max_ebgp_paths", value="0"),
                 ["BGP_GLOBALS_AF|default|ipv4_unicast max_ebgp_paths: '0' is not in 1-256"], id="max-ebgp-paths-0"),
    pytest.param(_set("BGP_GLOBALS_AF", "default|ipv4_unicast", "max_ebgp_paths", value="257"),
                 ["BGP_GLOBALS_AF|default|ipv4_unicast max_ebgp_paths: '257' is not in 1-256"],
                 id="max-ebgp-paths-257"),
    pytest.param(_set("BGP_GLOBALS_AF_NETWORK", "default|ipv4_unicast|10.9.0.0/33", value={}),
                 ["BGP_GLOBALS_AF_NETWORK|default|ipv4_unicast|10.9.0.0/33: '10.9.0.0/33' is not a prefix"],
                 id="network-not-a-prefix"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "asn", value="65_100"),
                 [f"BGP_NEIGHBOR|{NB} asn: '65_100' is not an ASN (1-4294967294)"], id="asn-underscore"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "asn", value="\u0666\u0665\u0661"),
                 [f"BGP_NEIGHBOR|{NB} asn: '\u0666\u0665\u0661' is not an ASN (1-4294967294)"],
                 id="asn-non-ascii-digits"),
])
def test_validate_rejects(leaf1: ConfigDb, mutate: Mutation, errors: list[str]) -> None:
    assert configdb.validate(mutate(leaf1)) == errors


def test_validate_reports_every_error_at_once(leaf1: ConfigDb) -> None:
    leaf1["PORT"]["Ethernet0"]["mtu"] = "10"
    leaf1["BGP_NEIGHBOR"][NB]["bfd"] = "on"
    leaf1["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] = "0"
    assert configdb.validate(leaf1) == [
        "PORT|Ethernet0 mtu: '10' is not in 68-9216",
        f"BGP_NEIGHBOR|{NB} bfd: 'on' must be true or false",
        "BGP_GLOBALS_AF|default|ipv4_unicast max_ebgp_paths: '0' is not in 1-256",
    ]


@pytest.mark.parametrize("mutate", [
    pytest.param(_set("PORT", "Ethernet0", "mtu", value=1500), id="int-mtu"),
    pytest.param(_set("PORT", "Ethernet0", "admin_status", value="down"), id="port-down"),
    pytest.param(_drop("BGP_NEIGHBOR", NB), id="neighbor-removed"),
    pytest.param(_set("BGP_NEIGHBOR", NB, "bfd", value="false"), id="bfd-false"),
    pytest.param(_set("INTERFACE", "Ethernet0|fc00::1/126", value={}), id="ipv6-address"),
    pytest.param(_set("BUFFER_POOL", value={}), id="empty-known-table"),
    # SONiC loads these (twin validate reports them: twin.stages.validate.local_addr)
    pytest.param(_set("BGP_NEIGHBOR", NB, "local_addr", value="10.9.9.9"), id="local-addr-not-on-switch"),
    pytest.param(_drop("INTERFACE", "Ethernet128|10.0.0.65/31"), id="address-removed-under-its-neighbor"),
])
def test_validate_accepts(leaf1: ConfigDb, mutate: Mutation) -> None:
    assert configdb.validate(mutate(leaf1)) == []


@pytest.mark.parametrize("mutate", [
    pytest.param(_drop("DEVICE_METADATA", "localhost", "hostname"), id="hostname-missing"),
    pytest.param(_set("BGP_GLOBALS", "default", "local_asn", value="AS65101"), id="bad-local-asn"),
    pytest.param(_set("BGP_GLOBALS", "default", "router_id", value="leaf1"), id="bad-router-id"),
])
def test_validate_checks_what_frr_is_given(leaf1: ConfigDb, mutate: Mutation) -> None:
    assert configdb.validate(mutate(leaf1)) != []


def test_hostname_missing_breaks_rendering(leaf1: ConfigDb) -> None:
    """Why the hostname-missing case above matters: the agent renders frr.conf after every commit."""
    del leaf1["DEVICE_METADATA"]["localhost"]["hostname"]
    with pytest.raises(KeyError, match="hostname"):
        render_frr(leaf1)


def test_validate_rejects_address_without_prefix_length(leaf1: ConfigDb) -> None:
    leaf1["INTERFACE"]["Ethernet0|10.2.0.4"] = {}
    assert configdb.validate(leaf1) == [
        "INTERFACE|Ethernet0|10.2.0.4: '10.2.0.4' has no prefix length; keys are <port>|<address>/<length> "
        "(in a gNMI path write INTERFACE[key=Ethernet0|10.2.0.4/<length>])"]


def test_save_then_load_round_trips(tmp_path: Path, leaf1: ConfigDb) -> None:
    target = tmp_path / "config_db.json"
    configdb.save(target, leaf1)
    assert configdb.load(target) == leaf1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config_db.json"]


def test_save_replaces_an_existing_file(tmp_path: Path, leaf1: ConfigDb) -> None:
    target = tmp_path / "config_db.json"
    target.write_text(json.dumps({"PORT": {}}))
    leaf1["PORT"]["Ethernet0"]["mtu"] = "1500"
    configdb.save(target, leaf1)
    assert configdb.load(target)["PORT"]["Ethernet0"]["mtu"] == "1500"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config_db.json"]


def test_save_writes_the_committed_file_format(tmp_path: Path, leaf1: ConfigDb) -> None:
    """Sorted keys, 4-space indent, trailing newline: byte-identical to the rendered configs/ file."""
    target = tmp_path / "config_db.json"
    configdb.save(target, leaf1)
    assert target.read_text() == LEAF1.read_text()


def test_copy_db_is_deep(leaf1: ConfigDb) -> None:
    copied = configdb.copy_db(leaf1)
    copied["PORT"]["Ethernet0"]["mtu"] = "1500"
    assert leaf1["PORT"]["Ethernet0"]["mtu"] == "9100"
