"""The one shape of a CONFIG_DB in memory, as config_db.json holds it: table -> key -> entry
(field -> value; a value is a string, or a list of strings for a YANG leaf-list)."""

from __future__ import annotations

from typing import Any

ConfigDb = dict[str, dict[str, Any]]
