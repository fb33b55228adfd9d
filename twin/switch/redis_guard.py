"""Which redis commands `sonic-db-cli` and `redis-cli` send to the switch's own redis.

The switch's redis-server runs as root on the host (netns runtime), so commands that make it
write or read files by name, load code, or talk to other servers are refused: CONFIG SET
(`dir` + `dbfilename` + SAVE writes any file), CONFIG REWRITE, MODULE (loads a shared object),
DEBUG, REPLICAOF/SLAVEOF, MIGRATE, FAILOVER, SYNC/PSYNC, ACL SAVE/LOAD. Everything else (reads,
writes of keys, SAVE into the switch's run directory, MONITOR, ...) runs.
"""

from __future__ import annotations

from collections.abc import Sequence

REFUSED = frozenset({"MODULE", "DEBUG", "REPLICAOF", "SLAVEOF", "MIGRATE", "FAILOVER", "SYNC", "PSYNC"})
REFUSED_SUB = {"CONFIG": frozenset({"SET", "REWRITE"}), "ACL": frozenset({"SAVE", "LOAD"})}


def redis_refusal(words: Sequence[str]) -> str | None:
    """Why redis command `words` is refused on this switch (None: it may run)."""
    if not words:
        return None
    name = words[0].upper()
    sub = words[1].upper() if len(words) > 1 else ""
    if name in REFUSED or sub in REFUSED_SUB.get(name, frozenset()):
        shown = f"{name} {sub}" if name in REFUSED_SUB else name
        return f"(error) ERR '{shown}' is not available on this switch (it reaches beyond the switch's databases)"
    return None
