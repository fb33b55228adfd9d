"""A fault that is a change of a switch's running CONFIG_DB (session-reset, mtu-mismatch), and its restore.

The change is written to CONFIG_DB only (LabAccess.config_field), never to config_db.json. One thing can
still save it there while it is in place: a gNMI Set by another client, which twin's switch follows with
a save of the whole running CONFIG_DB (the fault included), as does a `config save` typed in the switch.
So the restore looks at config_db.json: when it was written during the fault, it is saved again once
the fault is back out, which keeps what that client saved and drops the fault.
"""

from __future__ import annotations

from dataclasses import dataclass

from twin.drills.faults.base import LabAccess
from twin.host.rundir import node_dir

SAVED = "config_db.json"


@dataclass(frozen=True)
class _Change:
    node: str
    table: str
    key: str
    field: str
    old: str | None          # the field's value before (None: it was not set)
    saved: bytes | None      # config_db.json before (None: not twin's switch, whose file twin cannot see)


class RunningChanges:
    """The running-config changes of one kind in a drill, by fault target."""

    def __init__(self, lab: LabAccess) -> None:
        self.lab = lab
        self._changes: dict[str, _Change] = {}

    def saved_config(self, node: str) -> bytes | None:
        """The switch's config_db.json as it is now; None where twin does not keep it (a SONiC-VS image)."""
        try:
            return (node_dir(self.lab.state.lab, node) / SAVED).read_bytes()
        except OSError:
            return None

    def change(self, target: str, node: str, table: str, key: str, field: str, value: str) -> None:
        saved = self.saved_config(node)
        old = self.lab.config_field(node, table, key, field)
        # remembered before the write: an inject cut short (a signal) is restored from it
        self._changes[target] = _Change(node, table, key, field, old, saved)
        self.lab.config_field(node, table, key, field, value)

    def restore(self, target: str) -> str | None:
        """Put the field back as it was; None when `change` never began for `target`. Says, in words, when
        config_db.json had been saved during the fault and was saved again without it."""
        c = self._changes.pop(target, None)
        if c is None:
            return None
        self.lab.config_field(c.node, c.table, c.key, c.field, c.old, delete=c.old is None)
        if c.saved is None or self.saved_config(c.node) == c.saved:
            return ""
        self.lab.node_cmd(c.node, ["config", "save", "-y"])
        return f"; {c.node}'s config_db.json was saved during the fault (a Set or `config save`), so it was " \
               "saved again without it"
