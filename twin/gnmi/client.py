"""A typed wrapper over pygnmi for one switch: the calls twin makes, with one error type."""

from __future__ import annotations

import json
import logging
import os
from types import TracebackType
from typing import Any

# gRPC prints an INFO line for every fork() while a channel is open (drills run commands then).
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

from pygnmi.client import gNMIclient

from twin.lab.running import RunningLab
from twin.model.errors import GnmiError

# pygnmi warns on every TLS connection with skip_verify, which is how twin's labs run, and logs
# every refused request at CRITICAL.
logging.getLogger("pygnmi").setLevel(logging.CRITICAL + 1)  # it logs every failed RPC; twin reports them


CONFIG_ROOT = "/sonic-db:CONFIG_DB/localhost/"


class SwitchClient:
    """`with SwitchClient(name, target) as sw:`; target is what `twin status` lists as `gnmi`."""

    def __init__(self, name: str, target: dict[str, Any], timeout: float = 10) -> None:
        self.name = name
        self._addr = (target["host"], target["port"])
        self._opts = {k: v for k, v in target.items() if k not in ("target", "host", "port")}
        self._timeout = timeout
        self._gc: Any = None

    def __enter__(self) -> SwitchClient:
        try:
            self._gc = gNMIclient(target=self._addr, gnmi_timeout=self._timeout, show_diff="", **self._opts)
            self._gc.connect()
        except Exception as exc:
            raise GnmiError(f"{self.name}: cannot connect to gNMI at {self._addr[0]}:{self._addr[1]}: {exc}") from None
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._gc is not None:
            self._gc.close()

    def get(self, path: str) -> Any:
        try:
            response = self._gc.get(path=[path], encoding="json_ietf")
        except Exception as exc:
            raise GnmiError(f"{self.name}: Get {path} failed: {exc}") from None
        notifications = response.get("notification") or []  # none when a table has no entries
        updates = notifications[0].get("update") or [] if notifications else []
        return updates[0]["val"] if updates else None

    def table(self, db: str, table: str) -> dict[str, Any]:
        """A table's entries; `{}` for a table with none, which SONiC's gNMI answers with
        NOT_FOUND "Failed to find ..." (no key starts with the table's name)."""
        try:
            value = self.get(f"/sonic-db:{db}/localhost/{table}")
        except GnmiError as exc:
            if "Failed to find" in str(exc):
                return {}
            raise
        return value if isinstance(value, dict) else {}

    def replace_config(self, config: dict[str, Any]) -> None:
        try:
            self._gc.set(replace=[(CONFIG_ROOT, config)], encoding="json_ietf")
        except Exception as exc:
            raise GnmiError(f"{self.name}: Set (replace CONFIG_DB) rejected: {exc}") from None

    @classmethod
    def of(cls, lab: RunningLab, node: str) -> SwitchClient:
        """The client for a lab's switch; GnmiError when the node has no agent (hosts, routers)."""
        target = lab.gnmi_target(node)
        if target is None:
            raise GnmiError(f"{node} has no gNMI agent (only switches have one)")
        return cls(node, target)

    def set_field(self, table: str, key: str, field: str, value: str) -> None:
        """Set one CONFIG_DB field, as SONiC's gNMI takes it: a JSON Patch `add` of that field
        (a key holding `/` travels as `~1`, JSON Pointer's escape, which sonic-gnmi decodes)."""
        path = f"{CONFIG_ROOT}{table}/{pointer_token(key)}/{field}"
        try:
            # pygnmi sends a str as it is: json_ietf_val must hold the JSON string, quotes and all
            self._gc.set(update=[(path, json.dumps(value))], encoding="json_ietf")
        except Exception as exc:
            raise GnmiError(f"{self.name}: Set (update {path}) rejected: {exc}") from None


def pointer_token(key: str) -> str:
    """A CONFIG_DB key as one path element of a Set: `~` and `/` escaped as JSON Pointer does."""
    return key.replace("~", "~0").replace("/", "~1")
