"""Which redis commands `sonic-db-cli` and `redis-cli` send to the switch's own redis.

The switch's redis-server runs as root on the host (netns runtime) and is shared by the switch's
own daemons (config daemon, state producers) and its gNMI clients, so what the shell sends must
stay inside the switch's databases and leave that server running and answering:

- refused, because they reach the host's files, load code or talk to other servers: CONFIG other
  than GET (`CONFIG SET dir` + `dbfilename` + SAVE writes any file), MODULE (loads a shared
  object), DEBUG, REPLICAOF/SLAVEOF, MIGRATE, FAILOVER, SYNC/PSYNC;
- refused, because they stop the server or lock its own daemons out: SHUTDOWN, ACL other than its
  read-only subcommands (ACL SETUSER/DELUSER lock the daemons out while `twin status` still says
  healthy), CLIENT other than the calling connection's own subcommands (CLIENT PAUSE stops every
  writer of the switch, CLIENT KILL cuts its daemons' connections), MONITOR (streams every command
  of every client, buffered without bound in redis for as long as the session reads slowly).

Everything else runs as on SONiC, where admin's `redis-cli` and `sonic-db-cli` are unrestricted:
reads, writes of keys, FLUSHDB, SAVE and BGSAVE (into the switch's run directory: its `dir` cannot
change), EVAL and FUNCTION (Lua runs inside redis, on the switch's databases only), SUBSCRIBE.
"""

from __future__ import annotations

from collections.abc import Sequence

FILES = "it would reach beyond the switch's databases (the host's files, code or other servers)"
REFUSED: dict[str, str] = {
    "MODULE": FILES, "DEBUG": FILES, "REPLICAOF": FILES, "SLAVEOF": FILES, "MIGRATE": FILES,
    "FAILOVER": FILES, "SYNC": FILES, "PSYNC": FILES,
    "SHUTDOWN": "it would stop the switch's redis, and with it the switch's databases",
    "MONITOR": "it streams every command of the switch's own daemons, which redis buffers without bound "
               "for a slow reader; use SUBSCRIBE to __keyspace@<db>__:<key pattern> to watch changes",
}
# subcommands that run; any other of these commands is refused, for the reason given
ALLOWED_SUB: dict[str, tuple[frozenset[str], str]] = {
    "CONFIG": (frozenset({"GET", "HELP"}),
               "it would change the switch's redis server itself (`dir` and `dbfilename` name host files)"),
    "ACL": (frozenset({"WHOAMI", "LIST", "USERS", "CAT", "GETUSER", "HELP"}),
            "it would change who may use the switch's redis, its own daemons included"),
    "CLIENT": (frozenset({"LIST", "INFO", "ID", "GETNAME", "SETNAME", "HELP", "TRACKINGINFO", "GETREDIR"}),
               "it acts on other clients of the switch's redis, its own daemons included (PAUSE stops "
               "every writer, KILL cuts their connections)"),
}


def redis_refusal(words: Sequence[str]) -> str | None:
    """Why redis command `words` is refused on this switch (None: it may run). Judged as redis will
    receive it: a first word holding spaces is split into words, as redis-py (sonic-db-cli) splits it
    before sending (`sonic-db-cli CONFIG_DB "ACL SETUSER" x` is ACL SETUSER)."""
    words = [*words[0].split(), *words[1:]] if words else []
    if not words:
        return None
    name = words[0].upper()
    if name in REFUSED:
        return f"(error) ERR '{name}' is not available on this switch: {REFUSED[name]}"
    if name in ALLOWED_SUB:
        allowed, why = ALLOWED_SUB[name]
        sub = words[1].upper() if len(words) > 1 else ""
        if sub and sub not in allowed:
            return (f"(error) ERR '{name} {sub}' is not available on this switch: {why} "
                    f"(allowed: {', '.join(f'{name} {s}' for s in sorted(allowed))})")
    return None


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "a": "\a"}
_HEX = frozenset("0123456789abcdefABCDEF")


def unquote_c_string(word: str) -> str | None:
    """One argument as `redis-cli --quoted-input` reads it: sdssplitargs' one token. Outside quotes
    characters are taken as they are; a '"' opens a part with C escapes (\\xHH, \\n, ...) and a
    "'" one where only \\' is special, each also in the middle of a word (C"LIENT" is CLIENT); a
    closing quote ends the token. None when it is not one well-formed token (redis-cli refuses it)."""
    out: list[str] = []
    i, n = 0, len(word)
    while i < n:
        c = word[i]
        if c.isspace():
            return None
        if c not in "\"'":
            out.append(c)
            i += 1
            continue
        quote, i = c, i + 1
        while True:
            if i >= n:
                return None                       # no closing quote
            c = word[i]
            if c == quote:
                return "".join(out) if i == n - 1 else None   # the token ends at its closing quote
            if c == "\\" and quote == '"' and i + 3 < n and word[i + 1] == "x" and set(word[i + 2:i + 4]) <= _HEX:
                out.append(chr(int(word[i + 2:i + 4], 16)))
                i += 4
            elif c == "\\" and quote == '"' and i + 1 < n:
                out.append(_ESCAPES.get(word[i + 1], word[i + 1]))
                i += 2
            elif c == "\\" and quote == "'" and i + 1 < n and word[i + 1] == "'":
                out.append("'")
                i += 2
            else:
                out.append(c)
                i += 1
    return "".join(out)
