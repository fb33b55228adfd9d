"""A JSON Patch applied to a switch's CONFIG_DB as SONiC's Generic Config Updater applies it.

sonic-gnmi hands a Set's patch to GCU (`config apply-patch` through sonic-host-services), whose
PatchApplier.apply and StrictPatchSorter.sort (sonic-utilities generic_config_updater, 691b1bbc)
do, in order: simulate the patch on the running config (jsonpatch), refuse empty tables, refuse
a patch touching a table without a YANG model, validate the whole result with YANG (sonic_yang:
tables without a model cropped) plus two checks YANG lacks (PORT lanes are digits and unique,
BGP_PEER_RANGE ip_range not duplicated), then write the changes. A config replace is the patch
from the running config to the target (ConfigReplacer).

Here the result is written to CONFIG_DB in one MULTI/EXEC by the switch's endpoint, which
programs it (twin's switch: the config daemon) and saves config_db.json, as sonic-gnmi's
`config save` after a Set does. Every refusal is raised as GnmiStatus UNKNOWN (sonic-gnmi returns
GCU's error as a plain error) and changes nothing. Without YANG models, the built-in schema
(twin/stages/schema.json, a digest of the same models) judges the config instead.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import jsonpatch

from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.switch.config.config_values import changed_entry_problems
from twin.switch.config.yang_check import YangCheck
from twin.switch.endpoint_protocol import SetRejected, SwitchEndpoint
from twin.switch.sonic_gnmi.patch import Patch, patch_text
from twin.switch.sonic_gnmi.status import unknown

log = logging.getLogger("twin.gcu")
PATCH_FILE = "gcu.patch"  # sonic-gnmi writes the patch to GNMI_WORK_PATH/gcu.patch before applying it
FULL_CONFIG_FILE = "config_db.json.tmp"  # SetFullConfig's staged config


class Gcu:
    """GCU for one switch: `apply_patch`, `replace` and `validate_full`."""

    def __init__(self, endpoint: SwitchEndpoint, yang: YangCheck | None, workdir: Path | None) -> None:
        self.endpoint, self.yang, self.workdir = endpoint, yang, workdir

    # -- judging a target config ----------------------------------------------------------------

    def _yang_tables(self) -> frozenset[str]:
        return self.yang.tables if self.yang is not None else configdb.KNOWN_TABLES

    def yang_errors(self, config: ConfigDb) -> list[str]:
        """YANG's verdict on a whole config (tables without a model left out)."""
        if self.yang is not None:
            return self.yang.errors(config)
        known = {t: rows for t, rows in config.items() if t in configdb.KNOWN_TABLES}
        return configdb.schema_errors(known)

    def _check(self, patch: Patch, current: ConfigDb, target: ConfigDb) -> None:
        unsafe = changed_entry_problems(current, target)
        if unsafe:
            raise unknown(f"Given patch will produce invalid config. Error: {'; '.join(unsafe[:3])}")
        empty = [t for t, rows in target.items() if not rows]
        if empty:
            raise unknown(f"given patch is not valid because it will result in empty tables which is not "
                          f"allowed in ConfigDb. Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}")
        tables = {_first_token(op["path"]) for op in patch if _first_token(op["path"])}
        tables |= {t for op in patch if not _first_token(op["path"]) and isinstance(op.get("value"), dict)
                   for t in op["value"]}
        if tables - self._yang_tables():
            raise unknown("Given patch is not valid because it has changes to tables without YANG models")
        errors = self.yang_errors(target) or _supplemental_errors(target)
        if errors:
            raise unknown(f"Given patch will produce invalid config. Error: {'; '.join(errors)}")

    # -- GCU's operations -----------------------------------------------------------------------

    def apply_patch(self, patch: Patch, record: bool = True, current: ConfigDb | None = None) -> None:
        """PatchApplier.apply: the patch on the running config, judged whole, then committed.
        `record`: sonic-gnmi writes the patch of an incremental Set to gcu.patch first.
        `current`: the running config as the caller read it under the endpoint's lock."""
        if record:
            self._write(PATCH_FILE, patch_text(patch))
        with self.endpoint.lock:
            if current is None:
                current = self.endpoint.config()
            try:
                target: ConfigDb = jsonpatch.apply_patch(current, patch)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                # jsonpatch names the whole document a pointer missed: keep the first words
                raise unknown(f"Failed to apply patch: {str(exc).split(' in {')[0]}") from None
            if not isinstance(target, dict):
                raise unknown("Failed to apply patch: the result is not a config (a JSON object of tables)")
            self._check(patch, current, target)
            self._commit(target, current)

    def replace(self, config: Any, current: ConfigDb | None = None) -> None:
        """ConfigReplacer.replace: the patch from the running config to `config`, applied."""
        if not isinstance(config, dict):
            raise unknown("Failed to replace config: the target config is not a JSON object of tables")
        with self.endpoint.lock:
            if current is None:
                current = self.endpoint.config()
            self.apply_patch(list(jsonpatch.make_patch(current, config)), record=False, current=current)

    def validate_full(self, config: Any) -> None:
        """SetFullConfig: the config is staged in the work directory and validated with YANG only;
        sonic-gnmi writes it nowhere else (the running config stays as it is)."""
        self._write(FULL_CONFIG_FILE, patch_text(config))
        if not isinstance(config, dict) or self.yang_errors(config):
            raise unknown("Yang validation failed!")

    def forget_full(self) -> None:
        """Every CONFIG_DB Set starts by removing the staged full config (SetConfigDB)."""
        if self.workdir is not None:
            (self.workdir / FULL_CONFIG_FILE).unlink(missing_ok=True)

    def _commit(self, target: ConfigDb, current: ConfigDb) -> None:
        try:
            self.endpoint.commit(target, current)
        except SetRejected as exc:
            raise unknown(f"Failed to apply patch: {exc}") from None

    def _write(self, name: str, text: str) -> None:
        if self.workdir is not None:
            (self.workdir / name).write_text(text)


def _first_token(pointer: str) -> str:
    """The table a JSON Pointer names (its first token, `~1` and `~0` decoded)."""
    token = pointer.split("/")[1] if pointer.count("/") else ""
    return token.replace("~1", "/").replace("~0", "~")


def _supplemental_errors(config: ConfigDb) -> list[str]:
    """ConfigWrapper's validate_lanes and validate_bgp_peer_group."""
    lanes: dict[str, str] = {}
    for port, attrs in (config.get("PORT") or {}).items():
        if not isinstance(attrs, dict) or "lanes" not in attrs:
            continue
        for lane in (x.strip() for x in str(attrs["lanes"]).split(",")):
            if not lane:
                return [f"PORT '{port}' has an empty lane"]
            if not (lane.isascii() and lane.isdigit()):
                return [f"PORT '{port}' has an invalid lane '{lane}'"]
            if lane in lanes:
                return [f"'{lane}' lane is used multiple times in PORT: {{'{port}', '{lanes[lane]}'}}"]
            lanes[lane] = port
    seen: dict[tuple[str, str], str] = {}
    for group, attrs in (config.get("BGP_PEER_RANGE") or {}).items():
        vrf = group.split("|")[0] if "|" in group else "default"
        for ip in (attrs or {}).get("ip_range", []):
            if (ip, vrf) in seen:
                return [f"{ip} with vrf {vrf} is duplicated in BGP_PEER_RANGE: {{'{group}', '{seen[(ip, vrf)]}'}}"]
            seen[(ip, vrf)] = group
    return []
