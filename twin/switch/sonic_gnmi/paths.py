"""A native (`sonic-db` origin) request's paths resolved as sonic-gnmi's mixed_db_client.go does.

A native path is `/sonic-db:DB/INSTANCE/TABLE/KEY/FIELD/INDEX`: the prefix's elements and the
path's are joined; the first names the database, the second the namespace or container
(`localhost`; on a single-ASIC switch its name is not checked), the rest address redis. An element
may carry `[key=...]`: its value is appended as the next element (`INTERFACE[key=Ethernet0|10.0.0.0/31]`
is table INTERFACE, key `Ethernet0|10.0.0.0/31`); other key names are ignored. COUNTERS_DB
tables other than COUNTERS and PORT_PHY_ATTR are flat hashes: an empty key is put in after the
table, so `COUNTERS_PORT_NAME_MAP/Ethernet0` is that hash's field Ethernet0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.redis.sonic_redis import DATABASES
from twin.switch.sonic_gnmi.status import GnmiStatus, unknown

ORIGIN = "sonic-db"
KEYED_COUNTERS_TABLES = frozenset({"COUNTERS", "PORT_PHY_ATTR"})  # db_client.go countersDbHasTableKeys


def counters_keyed(db: str, table: str) -> bool:
    """False for a COUNTERS_DB table stored as one flat hash (COUNTERS_PORT_NAME_MAP)."""
    return db != "COUNTERS_DB" or table in KEYED_COUNTERS_TABLES


@dataclass(frozen=True)
class TablePath:
    """What one gNMI path addresses in redis (mixed_db_client.go's tablePath)."""

    db: str
    separator: str
    table: str = ""
    key: str = ""
    field: str = ""
    index: int = -1
    depth: int = 1  # elements after joining, with the database: 1 DB, 2 table, 3 key, 4 field, 5 index

    @property
    def redis_key(self) -> str:
        """The redis key of the entry (the table itself for a flat hash)."""
        return f"{self.table}{self.separator}{self.key}" if self.key else self.table

    @property
    def keyed(self) -> bool:
        return counters_keyed(self.db, self.table)


def path_origin(prefix: gnmi_pb2.Path | None, paths: Sequence[gnmi_pb2.Path]) -> str:
    """The request's origin: the prefix's, else the paths' (server.go ParseOrigin; all must agree)."""
    if prefix is not None and prefix.origin:
        return str(prefix.origin)
    origins = {p.origin for p in paths}
    if len(origins) > 1:
        raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "Origin conflict in path")
    return str(origins.pop()) if origins else ""


def joined(prefix: gnmi_pb2.Path | None, path: gnmi_pb2.Path) -> list[gnmi_pb2.PathElem]:
    """The prefix's elements followed by the path's."""
    return [*(prefix.elem if prefix is not None else []), *path.elem]


def parse_database(prefix: gnmi_pb2.Path | None, paths: Sequence[gnmi_pb2.Path]) -> str:
    """The database every path names (MixedDbClient.ParseDatabase), UNIMPLEMENTED when they
    name none, disagree, or name a database the switch does not have."""
    if not paths:
        raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "No valid path")
    target = instance = ""
    for path in paths:
        elems = joined(prefix, path)
        if not path.elem:
            continue
        if len(elems) < 2:
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "Invalid elem length")
        if target and elems[0].name != target:
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "Target conflict in path")
        if instance and elems[1].name != instance:
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "Namespace/container conflict in path")
        target, instance = elems[0].name, elems[1].name
    if not target:
        raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "No target specified in path")
    if target not in DATABASES:
        raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "Invalid target: ns , container ")
    return target


def names(elems: Sequence[gnmi_pb2.PathElem]) -> list[str]:
    """Element names, each followed by its `key` key's value when it has one."""
    out: list[str] = []
    for elem in elems:
        out.append(elem.name)
        if "key" in elem.key:
            out.append(elem.key["key"])
    return out


def table_path(db: str, prefix: gnmi_pb2.Path | None, path: gnmi_pb2.Path) -> TablePath:
    """What `path` addresses in `db` (MixedDbClient.getDbtablePath, without the existence checks)."""
    elems = joined(prefix, path)
    if len(elems) < 2 and path.elem:
        raise unknown(f"Invalid gnmi path: length {len(elems)}")
    parts = [db, *names(elems[2:])]
    if len(parts) > 1 and not counters_keyed(db, parts[1]):
        parts.insert(2, "")
    separator = DATABASES[db].separator
    if len(parts) > 5:
        raise unknown(f"Invalid db table Path {separator.join(parts[1:])}")
    index = -1
    if len(parts) == 5:
        try:
            index = int(parts[4])
        except ValueError:
            raise unknown(f"Invalid index {parts[4]}") from None
    padded = [*parts, "", "", ""]
    return TablePath(db=db, separator=separator, table=padded[1], key=padded[2], field=padded[3],
                     index=index, depth=len(parts))


def json_pointer(prefix: gnmi_pb2.Path | None, path: gnmi_pb2.Path) -> str:
    """The JSON Patch path sonic-gnmi forms for a Set (MixedDbClient.ConvertToJsonPatch): the
    elements after DB/INSTANCE joined with `/`, keys written `[name=value]`, nothing escaped
    (a key holding `/` must be sent with `~1` in its element name, as JSON Pointer writes it)."""
    elems = joined(prefix, path)
    if len(elems) < 2 and path.elem:
        raise unknown(f"Invalid gnmi path: length {len(elems)}")
    pointer = "/"
    for elem in elems[2:]:
        pointer += elem.name + "".join(f"[{k}={v}]" for k, v in elem.key.items()) + "/"
    return pointer.removesuffix("/") if pointer != "/" else ""


def element_names(prefix: gnmi_pb2.Path | None, path: gnmi_pb2.Path) -> list[str]:
    """The element names after DB/INSTANCE, keys dropped (what the checkpoint is addressed by)."""
    return [e.name for e in joined(prefix, path)[2:]]


def not_found(status: GnmiStatus) -> GnmiStatus:
    """server.go wraps a client's construction error: `status.Error(codes.NotFound, err.Error())`,
    so a status error's own text (`rpc error: code = ... desc = ...`) becomes the message."""
    if status.code == grpc.StatusCode.UNKNOWN:
        return GnmiStatus(grpc.StatusCode.NOT_FOUND, status.message)
    return GnmiStatus(grpc.StatusCode.NOT_FOUND,
                      f"rpc error: code = {_go_code(status.code)} desc = {status.message}")


def _go_code(code: grpc.StatusCode) -> str:
    """grpc-go's name of a status code (codes.Code.String): `NotFound`, `Unimplemented`."""
    return "".join(word.capitalize() for word in code.name.split("_")).replace("Ok", "OK")
