"""A CONFIG_DB row as bgpcfgd's managers receive it.

bgpcfgd reads its tables with swsscommon's SubscriberStateTable, which hands over a redis hash's fields
as they are stored: a YANG leaf-list (BGP_PEER_RANGE `ip_range`, BGP_ALLOWED_PREFIXES `prefixes_v4`
and `prefixes_v6`) is stored by ConfigDBConnector as one field named `<leaf>@` holding the values
joined with commas. bgpcfgd never reads `<leaf>@`: its templates and managers read `<leaf>`, which a
row written from a config_db.json list does not have (only a value written as one string does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LIST_SUFFIX = "@"


def as_received(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's fields as bgpcfgd gets them: a list as `<name>@` with its values comma-joined."""
    return {(f"{name}{LIST_SUFFIX}" if isinstance(value, list) else name):
            (",".join(str(v) for v in value) if isinstance(value, list) else value) for name, value in row.items()}
