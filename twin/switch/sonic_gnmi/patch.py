"""A CONFIG_DB Set as sonic-gnmi turns it into GCU's input (mixed_db_client.go SetConfigDB).

Three shapes, decided by the request alone:
- delete of `/sonic-db:CONFIG_DB/localhost` plus one update of it: a full config, which sonic-gnmi
  only validates with YANG (SetFullConfig) and writes nowhere;
- one replace of `/sonic-db:CONFIG_DB/localhost` and nothing else: GCU's config replace
  (ReplaceFullConfig);
- anything else: an incremental JSON Patch (SetIncrementalConfig). Each operation is first tried
  on a checkpoint of the running config (json_client.go): a delete whose path is missing there is
  skipped, a replace needs its path to exist, an update adds it. Then it becomes one patch
  operation (ConvertToJsonPatch): delete -> remove, replace -> replace, update -> add, at the
  path's elements joined by `/` with `[k=v]` for keys, nothing escaped. JSON Patch's `add` on an
  existing member replaces its whole value: an update of PORT/Ethernet0 with one field replaces
  the entry.
Values must be json_ietf_val ("Value encoding is not IETF JSON").
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pygnmi.spec.v080 import gnmi_pb2

from twin.switch.sonic_gnmi.golang import go_unmarshal
from twin.switch.sonic_gnmi.paths import element_names, json_pointer
from twin.switch.sonic_gnmi.status import unknown

Patch = list[dict[str, Any]]


@dataclass
class SetPlan:
    """What a CONFIG_DB Set asks GCU for."""

    kind: Literal["full-validate", "replace", "patch"]
    patch: Patch = field(default_factory=list)
    config: dict[str, Any] | None = None  # the whole config of full-validate and replace


def _json(value: gnmi_pb2.TypedValue) -> Any:
    raw = value.json_ietf_val
    if not raw:
        raise unknown("Value encoding is not IETF JSON")
    try:
        return go_unmarshal(raw)
    except json.JSONDecodeError as exc:
        raise unknown(f"JSON unmarshalling error: {exc}") from None


def _root(prefix: gnmi_pb2.Path | None, path: gnmi_pb2.Path) -> bool:
    return not element_names(prefix, path)


def set_plan(prefix: gnmi_pb2.Path | None, delete: list[gnmi_pb2.Path], replace: list[gnmi_pb2.Update],
             update: list[gnmi_pb2.Update], checkpoint: dict[str, Any]) -> SetPlan:
    """The GCU request a Set makes, judged against `checkpoint` (the running config)."""
    if len(delete) == 1 and not replace and len(update) == 1 and _root(prefix, delete[0]) \
            and _root(prefix, update[0].path):
        return SetPlan("full-validate", config=_json(update[0].val))
    if not delete and len(replace) == 1 and not update and _root(prefix, replace[0].path):
        return SetPlan("replace", config=_json(replace[0].val))
    return SetPlan("patch", patch=incremental_patch(prefix, delete, replace, update, checkpoint))


def incremental_patch(prefix: gnmi_pb2.Path | None, delete: list[gnmi_pb2.Path], replace: list[gnmi_pb2.Update],
                      update: list[gnmi_pb2.Update], checkpoint: dict[str, Any]) -> Patch:
    """SetIncrementalConfig's patch list."""
    cp = Checkpoint(checkpoint)
    patch: Patch = []
    for path in delete:
        try:
            cp.remove(element_names(prefix, path))
        except KeyError:
            continue  # "Remove failed, ignore"
        patch.append({"op": "remove", "path": json_pointer(prefix, path)})
    for upd in replace:
        names = element_names(prefix, upd.path)
        if not upd.HasField("val"):
            try:
                cp.remove(names)
            except KeyError:
                continue
            patch.append({"op": "replace", "path": json_pointer(prefix, upd.path)})
            continue
        try:
            cp.remove(names)
        except KeyError as exc:
            raise unknown(str(exc.args[0])) from None
        cp.add(names, upd.val.json_ietf_val)
        patch.append({"op": "replace", "path": json_pointer(prefix, upd.path), "value": _json(upd.val)})
    for upd in update:
        if not upd.HasField("val"):
            raise unknown(f"Invalid update {upd}")
        cp.add(element_names(prefix, upd.path), upd.val.json_ietf_val)
        patch.append({"op": "add", "path": json_pointer(prefix, upd.path), "value": _json(upd.val)})
    return patch


class Checkpoint:
    """json_client.go's JsonClient over a copy of the running config: TABLE/KEY/FIELD/INDEX,
    `~1` in a key read as `/`. `remove` raises KeyError (with sonic-gnmi's message) when the
    path is not there; `add` raises GnmiStatus for a value of the wrong shape."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.data = copy.deepcopy(config)

    @staticmethod
    def _fix(names: list[str]) -> list[str]:
        out = list(names)
        if len(out) >= 2:
            out[1] = out[1].replace("~1", "/")
        return out

    def _table(self, name: str) -> dict[str, Any]:
        table = self.data.get(name)
        if not isinstance(table, dict):
            raise KeyError(f"Invalid database {name} -> {self.data}" if table is None else f"Invalid table {table}")
        return table

    @staticmethod
    def _entry(table: dict[str, Any], name: str) -> dict[str, Any]:
        entry = table.get(name)
        if not isinstance(entry, dict):
            raise KeyError(f"Invalid entry {table}" if entry is None else f"Invalid entry {entry}")
        return entry

    def remove(self, names: list[str]) -> None:
        names = self._fix(names)
        if not 1 <= len(names) <= 4:
            raise KeyError(f"Invalid db table Path {names}")
        if len(names) == 1:
            self._table(names[0])
            del self.data[names[0]]
            return
        table = self._table(names[0])
        entry = self._entry(table, names[1])
        if len(names) == 3:
            if names[2] not in entry:
                raise KeyError(f"Invalid entry {entry}")
            del entry[names[2]]
        elif len(names) == 4:
            items = entry.get(names[2])
            index = _index(names[3])
            if not isinstance(items, list) or index is None or not 0 <= index < len(items):
                raise KeyError(f"Invalid index {names[3]}")
            del items[index]
            if not items:
                del entry[names[2]]
        if len(names) == 2 or not entry:
            del table[names[1]]
        if not table:
            del self.data[names[0]]

    def add(self, names: list[str], raw: bytes) -> None:
        names = self._fix(names)
        if not 1 <= len(names) <= 4:
            raise unknown(f"Invalid db table Path {names}")
        try:
            value = go_unmarshal(raw) if raw else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            raise unknown(f"Fail to parse {raw.decode(errors='replace')}")
        if len(names) == 1:
            if not isinstance(value, dict):
                raise unknown(f"Invalid table {value}")
            self.data[names[0]] = value
            return
        table = self.data.setdefault(names[0], {})
        if len(names) == 2:
            if not isinstance(value, dict):
                raise unknown(f"Invalid entry {value}")
            table[names[1]] = value
            return
        entry = table.setdefault(names[1], {})
        if len(names) == 3:
            if not isinstance(value, str | list):
                raise unknown(f"Invalid field {value}")
            entry[names[2]] = value
            return
        items = entry.setdefault(names[2], [])
        index = _index(names[3])
        if not isinstance(items, list):
            raise unknown(f"Invalid target field {entry}")
        if index is None or not 0 <= index <= len(items):
            raise unknown(f"Invalid index {names[3]}")
        items.insert(index, value)


def _index(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def patch_text(patch: Patch) -> str:
    """The patch as sonic-gnmi writes it to gcu.patch (Go's json.Marshal of the list)."""
    return json.dumps(patch, sort_keys=True, separators=(",", ":"))
