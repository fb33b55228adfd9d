"""One finding of `twin validate`: the file, where in it (TABLE|key field), what is wrong, the fix."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twin.model.config_db import ConfigDb


@dataclass(frozen=True)
class Finding:
    check: str          # schema | yang | bgp | addressing | ecmp | mtu | qos | surface
    file: str
    where: str          # TABLE|key field
    message: str
    fix: str = ""

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.message}" + (f"; {self.fix}" if self.fix else "")


@dataclass(frozen=True)
class SwitchConfig:
    name: str
    path: Path
    db: ConfigDb

    @property
    def file(self) -> str:
        return str(self.path)

    def table(self, name: str) -> dict[str, dict[str, Any]]:
        rows = self.db.get(name, {})
        return rows if isinstance(rows, dict) else {}

    @property
    def role(self) -> str:
        return str(self.table("DEVICE_METADATA").get("localhost", {}).get("type", ""))
