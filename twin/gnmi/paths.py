"""gNMI paths in SONiC's shape, both directions.

Native: origin `sonic-db`, elems DB/localhost/TABLE/KEY/FIELD, e.g.
`/sonic-db:CONFIG_DB/localhost/PORT/Ethernet0/mtu`. Legacy: `prefix.target` names the DB and
the path starts at the table: target STATE_DB, path `NEIGH_STATE_TABLE/10.0.0.64`.
Keys holding `/` (`Ethernet0|10.0.0.0/31`, `10.1.4.2/32`) travel as `TABLE[key=...]`, because
clients split path strings on every `/`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pygnmi.spec.v080 import gnmi_pb2

DATABASES = ("CONFIG_DB", "APPL_DB", "STATE_DB", "COUNTERS_DB")
ORIGIN = "sonic-db"


class PathError(ValueError):
    """A path the agent cannot serve; the message says why."""


@dataclass(frozen=True)
class DbPath:
    db: str
    table: str | None = None
    key: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        parts = [p for p in (self.table, self.key, self.field) if p is not None]
        return f"/{ORIGIN}:{self.db}/localhost" + "".join(f"/{p}" for p in parts)


def _names(path: gnmi_pb2.Path) -> list[str]:
    """Elem names, with `name[key=value]` flattened to name, value."""
    out: list[str] = []
    for elem in path.elem:
        out.append(elem.name)
        if elem.key:
            if set(elem.key) != {"key"}:
                raise PathError(f"unsupported key {dict(elem.key)} on '{elem.name}'; use {elem.name}[key=...]")
            out.append(elem.key["key"])
    return out


def parse(prefix: gnmi_pb2.Path | None, path: gnmi_pb2.Path) -> DbPath:
    """Resolve a request's prefix and path into a DB, table, key and field."""
    names = (_names(prefix) if prefix is not None else []) + _names(path)
    target = (prefix.target if prefix is not None else "") or path.target
    if target and target not in ("localhost",):
        if target not in DATABASES:
            raise PathError(f"unknown target '{target}'; use one of {', '.join(DATABASES)}")
        names = [target, "localhost", *names]
    origin = (prefix.origin if prefix is not None and prefix.origin else "") or path.origin
    if origin and origin != ORIGIN:
        raise PathError(f"unsupported origin '{origin}'; this switch serves '{ORIGIN}'")
    names = [n for n in names if n != ""]
    if not names:
        raise PathError("empty path; use /sonic-db:CONFIG_DB/localhost/...")
    if names[0] not in DATABASES:
        raise PathError(f"unknown database '{names[0]}'; use one of {', '.join(DATABASES)}")
    rest = names[1:]
    if rest and rest[0] == "localhost":
        rest = rest[1:]
    if len(rest) > 3:
        raise PathError(f"path too deep: {'/'.join(names)}; expected DB/localhost/TABLE/KEY/FIELD "
                        "(write keys containing '/' as TABLE[key=...])")
    padded: list[str | None] = [*rest, None, None, None]
    table, key, field = padded[:3]
    return DbPath(names[0], table, key, field)


def to_proto(p: DbPath) -> gnmi_pb2.Path:
    elems = [gnmi_pb2.PathElem(name=p.db), gnmi_pb2.PathElem(name="localhost")]
    if p.table is not None:
        if p.key is not None and "/" in p.key:
            elems.append(gnmi_pb2.PathElem(name=p.table, key={"key": p.key}))
        else:
            elems.append(gnmi_pb2.PathElem(name=p.table))
            if p.key is not None:
                elems.append(gnmi_pb2.PathElem(name=p.key))
        if p.field is not None:
            elems.append(gnmi_pb2.PathElem(name=p.field))
    return gnmi_pb2.Path(origin=ORIGIN, elem=elems)
