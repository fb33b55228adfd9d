"""SONiC's redis layout as twin reads and writes it: database numbers, keys, `@` lists, diffs."""

from __future__ import annotations

import copy

import pytest

from twin.gnmi.push import with_sonic_tables
from twin.stages.configdb import ConfigDb
from twin.switch.redis.sonic_redis import (
    DATABASES,
    ConfigWrite,
    config_write,
    database,
    raw_to_typed,
    redis_key,
    split_key,
    typed_to_raw,
)

# -- databases ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "number", "separator"), [
    ("APPL_DB", 0, ":"), ("ASIC_DB", 1, ":"), ("COUNTERS_DB", 2, ":"), ("LOGLEVEL_DB", 3, ":"),
    ("CONFIG_DB", 4, "|"), ("PFC_WD_DB", 5, ":"), ("FLEX_COUNTER_DB", 5, ":"), ("STATE_DB", 6, "|"),
    ("SNMP_OVERLAY_DB", 7, "|"),
])
def test_database_numbers_and_separators_are_sonics(name: str, number: int, separator: str) -> None:
    assert (database(name).id, database(name).separator) == (number, separator)


def test_unknown_database_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match="unknown SONiC database 'FOO_DB'"):
        database("FOO_DB")
    assert "CONFIG_DB" in DATABASES


# -- keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("db", "raw", "table", "key"), [
    pytest.param("CONFIG_DB", "BGP_NEIGHBOR|default|10.0.0.64", "BGP_NEIGHBOR", "default|10.0.0.64", id="config-multi"),
    pytest.param("CONFIG_DB", "INTERFACE|Ethernet0|10.2.0.0/31", "INTERFACE", "Ethernet0|10.2.0.0/31", id="slash"),
    pytest.param("CONFIG_DB", "PORT|Ethernet0", "PORT", "Ethernet0", id="config-simple"),
    pytest.param("STATE_DB", "NEIGH_STATE_TABLE|10.0.0.64", "NEIGH_STATE_TABLE", "10.0.0.64", id="state"),
    pytest.param("STATE_DB", "BFD_SESSION_TABLE|default|default|10.0.0.64", "BFD_SESSION_TABLE",
                 "default|default|10.0.0.64", id="bfd"),
    pytest.param("APPL_DB", "ROUTE_TABLE:10.1.4.2/32", "ROUTE_TABLE", "10.1.4.2/32", id="route-v4"),
    pytest.param("APPL_DB", "ROUTE_TABLE:fc00:1::/64", "ROUTE_TABLE", "fc00:1::/64", id="route-v6"),
    pytest.param("COUNTERS_DB", "COUNTERS:oid:0x1000000000002", "COUNTERS", "oid:0x1000000000002", id="counters"),
])
def test_keys_split_at_the_first_separator_and_join_back(db: str, raw: str, table: str, key: str) -> None:
    assert split_key(db, raw) == (table, key)
    assert redis_key(db, table, key) == raw


@pytest.mark.parametrize(("db", "raw"), [
    ("COUNTERS_DB", "COUNTERS_PORT_NAME_MAP"), ("CONFIG_DB", "CONFIG_DB_INITIALIZED"),
])
def test_a_key_without_separator_is_a_flat_hash(db: str, raw: str) -> None:
    assert split_key(db, raw) == (raw, None)
    assert redis_key(db, raw) == raw


def test_separator_depends_on_the_database() -> None:
    assert split_key("CONFIG_DB", "ROUTE_TABLE:10.0.0.0/31") == ("ROUTE_TABLE:10.0.0.0/31", None)
    assert redis_key("STATE_DB", "PORT_TABLE", "Ethernet0") == "PORT_TABLE|Ethernet0"
    assert redis_key("APPL_DB", "PORT_TABLE", "Ethernet0") == "PORT_TABLE:Ethernet0"


# -- values: NULL and @ lists ------------------------------------------------------------------


def test_an_entry_without_fields_is_stored_as_null() -> None:
    assert typed_to_raw({}) == {"NULL": "NULL"}
    assert raw_to_typed({"NULL": "NULL"}) == {}


def test_lists_travel_as_at_fields() -> None:
    typed = {"policy_desc": "data", "type": "L3", "ports": ["Ethernet0", "Ethernet4"]}
    raw = {"policy_desc": "data", "type": "L3", "ports@": "Ethernet0,Ethernet4"}
    assert typed_to_raw(typed) == raw
    assert raw_to_typed(raw) == typed


def test_one_element_and_empty_lists_round_trip() -> None:
    for value in (["Ethernet0"], []):
        assert raw_to_typed(typed_to_raw({"members": value})) == {"members": value}


def test_scalars_are_stored_as_strings() -> None:
    assert typed_to_raw({"mtu": 9100, "enabled": "true"}) == {"mtu": "9100", "enabled": "true"}


def test_null_next_to_real_fields_is_dropped() -> None:
    assert raw_to_typed({"NULL": "NULL", "mtu": "9100"}) == {"mtu": "9100"}


def test_whole_leaf1_config_round_trips(leaf1: ConfigDb) -> None:
    raw = {redis_key("CONFIG_DB", t, k): typed_to_raw(row) for t, rows in leaf1.items() for k, row in rows.items()}
    back: ConfigDb = {}
    for name, fields in raw.items():
        table, key = split_key("CONFIG_DB", name)
        assert key is not None
        back.setdefault(table, {})[key] = raw_to_typed(fields)
    assert back == leaf1
    assert raw["INTERFACE|Ethernet0"] == {"NULL": "NULL"}


# -- diffs -------------------------------------------------------------------------------------

NB = "default|10.0.0.64"


def test_same_config_writes_nothing(leaf1: ConfigDb) -> None:
    assert config_write(leaf1, copy.deepcopy(leaf1)).empty


def test_a_changed_field_is_the_only_write(leaf1: ConfigDb) -> None:
    new = copy.deepcopy(leaf1)
    new["BGP_NEIGHBOR"][NB]["admin_status"] = "down"
    assert config_write(leaf1, new) == ConfigWrite(hset={f"BGP_NEIGHBOR|{NB}": {"admin_status": "down"}})


def test_removed_fields_and_keys_are_deleted(leaf1: ConfigDb) -> None:
    new = copy.deepcopy(leaf1)
    del new["BGP_NEIGHBOR"][NB]["bfd"]
    del new["INTERFACE"]["Ethernet0|10.2.0.0/31"]
    assert config_write(leaf1, new) == ConfigWrite(hdel={f"BGP_NEIGHBOR|{NB}": ["bfd"]},
                                                   delete=["INTERFACE|Ethernet0|10.2.0.0/31"])


def test_a_removed_table_deletes_every_key(leaf1: ConfigDb) -> None:
    new = copy.deepcopy(leaf1)
    del new["BGP_NEIGHBOR"]
    assert sorted(config_write(leaf1, new).delete) == sorted(f"BGP_NEIGHBOR|{k}" for k in leaf1["BGP_NEIGHBOR"])


def test_new_empty_entry_is_written_as_null() -> None:
    write = config_write({}, {"INTERFACE": {"Ethernet8": {}}})
    assert write == ConfigWrite(hset={"INTERFACE|Ethernet8": {"NULL": "NULL"}})


def test_an_empty_entry_gaining_fields_drops_null() -> None:
    write = config_write({"INTERFACE": {"Ethernet8": {}}}, {"INTERFACE": {"Ethernet8": {"vrf_name": "Vrf1"}}})
    assert write == ConfigWrite(hset={"INTERFACE|Ethernet8": {"vrf_name": "Vrf1"}},
                                hdel={"INTERFACE|Ethernet8": ["NULL"]})


def test_an_entry_losing_all_fields_becomes_null() -> None:
    write = config_write({"INTERFACE": {"Ethernet8": {"vrf_name": "Vrf1"}}}, {"INTERFACE": {"Ethernet8": {}}})
    assert write == ConfigWrite(hset={"INTERFACE|Ethernet8": {"NULL": "NULL"}},
                                hdel={"INTERFACE|Ethernet8": ["vrf_name"]})


def test_list_changes_are_written_in_at_form() -> None:
    old = {"ACL_TABLE": {"DATAACL": {"ports": ["Ethernet0"]}}}
    assert config_write(old, {"ACL_TABLE": {"DATAACL": {"ports": ["Ethernet0", "Ethernet4"]}}}) == \
        ConfigWrite(hset={"ACL_TABLE|DATAACL": {"ports@": "Ethernet0,Ethernet4"}})
    assert config_write(old, {"ACL_TABLE": {"DATAACL": {"ports": "Ethernet0"}}}) == \
        ConfigWrite(hset={"ACL_TABLE|DATAACL": {"ports": "Ethernet0"}}, hdel={"ACL_TABLE|DATAACL": ["ports@"]})


# -- SONiC's own tables and port status --------------------------------------------------------


def test_sonic_own_tables_are_kept_known_ones_follow_the_set(leaf1: ConfigDb) -> None:
    current = {**copy.deepcopy(leaf1), "FEATURE": {"bgp": {"state": "enabled"}}}
    new = copy.deepcopy(leaf1)
    del new["BGP_NEIGHBOR"]
    merged = with_sonic_tables(new, current)
    assert merged["FEATURE"] == {"bgp": {"state": "enabled"}}
    assert "BGP_NEIGHBOR" not in merged


def test_values_read_back_share_one_copy_across_rows() -> None:
    """Every port's row repeats "up" and "9100", every switch's the others': a CONFIG_DB read
    back from redis holds each name and value once."""
    one = raw_to_typed({"admin_status": "".join(["u", "p"]), "mtu": str(9100), "lanes@": "0,1"})
    two = raw_to_typed({"admin_status": "".join(["u", "p"]), "mtu": str(9100), "lanes@": "1,2"})
    assert one["admin_status"] is two["admin_status"] and one["mtu"] is two["mtu"]
    assert one["lanes"][1] is two["lanes"][0]
