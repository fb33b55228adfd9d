"""The config daemons of one switch: program FRR and the kernel from CONFIG_DB, on every change.

On SONiC, bgpcfgd or frrcfgd (picked by DEVICE_METADATA|localhost, see twin.stages.render.frr) and the
kernel-side managers (portmgrd, intfmgrd, vlanmgrd, hostcfgd) subscribe to CONFIG_DB and turn
each change into targeted commands. Here one `ConfigDaemon` per switch does the same: CONFIG_DB
keyspace notifications name the keys that changed, those keys are read again, and only the
difference from what was programmed last is sent (`ip -b` lines, `tc -b` lines for the egress queues,
then vtysh lines: twin.switch.config.kernel, twin.switch.config.qdisc and twin.switch.config.apply). What
was programmed is kept in `programmed.json`.

That file is written after FRR and the kernel were told, so an agent killed in between leaves it
behind the switch. A daemon started where the switch already runs (`reconcile`: `twin agent
restart`, a restarted agent) therefore does not trust it: it reads what the kernel holds (`ip -j
addr`, twin.switch.config.kernel_state) and FRR's running config (each daemon's vty), and sends what
differs from CONFIG_DB (twin.switch.frr.frr_drift), until FRR runs what CONFIG_DB renders; each port's
queues are programmed again in place (their counters kept). A daemon started on a fresh switch only
gives the queues' tree to the ports that lack one (a runtime that programmed none: containerlab's).

A Set through gNMI (or any other writer of CONFIG_DB) reaches the switch the same way; the gNMI
endpoint additionally waits for the programming and undoes a change the switch refused.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from twin.model.routing_surface import not_emulated
from twin.stages import configdb
from twin.stages.configdb import ConfigDb
from twin.stages.render.frr import render_frr
from twin.switch.config.apply import frr_lines
from twin.switch.config.config_values import without_unsafe
from twin.switch.config.kernel import kernel_changes
from twin.switch.config.kernel_state import observed, read_links, read_rooted
from twin.switch.config.qdisc import qdisc_changes, qdisc_reconcile
from twin.switch.frr.frr_daemons import runtime_lines
from twin.switch.frr.frr_drift import converge_lines, describe, drift
from twin.switch.frr.frr_vty import running_config
from twin.switch.redis.sonic_redis import SonicRedis, as_stored, raw_to_typed, split_key
from twin.switch.system_files import write_hostname

PROGRAMMED = "programmed.json"
FRR_RELOAD = Path("/usr/lib/frr/frr-reload.py")  # Debian's frr-pythontools
PROTOCOL_ROUTE_MAP = re.compile(r"ip(?:v6)? protocol \S+ route-map \S+")
KEYSPACE = "__keyspace@4__:"  # CONFIG_DB is database 4
STOP_CHANNEL = "twin-cfgmgr-stop"  # published on a switch's redis to wake its listener (wake)
LISTEN_IDLE_S = 60.0  # a listener's longest wait for CONFIG_DB without looking at its stop event (listen)
CONVERGE_ROUNDS = 4  # reads of FRR's running config while converging it (a removal can take more with it)
log = logging.getLogger("twin.cfgmgr")


class ProgramError(Exception):
    """The kernel or FRR refused part of a change."""


def load_programmed(rundir: Path) -> ConfigDb | None:
    """What a switch's config daemon last programmed, as CONFIG_DB holds it: programmed.json, which
    is written in that form (by `twin up` and the config daemon), read as it is; else the saved
    config_db.json, converted (at 64 x 128 converting both took the agent's start 1.3 CPU-seconds).
    None when neither is readable."""
    try:
        db = configdb.load(rundir / PROGRAMMED)
        if isinstance(db, dict) and all(isinstance(rows, dict) for rows in db.values()):
            return db
    except (OSError, ValueError):
        pass
    try:
        return as_stored(configdb.load(rundir / "config_db.json"))
    except (OSError, ValueError, AttributeError):
        return None


class ConfigDaemon:
    def __init__(self, name: str, netns: str, rundir: Path, db: SonicRedis,
                 ifmap: dict[str, str] | None = None, templates: Path | None = None,
                 reconcile: bool = False, queues: bool = True) -> None:
        """`reconcile`: the switch already runs (its FRR launched before this daemon): at start,
        converge the kernel and FRR on CONFIG_DB from what they hold, not from programmed.json.
        `queues` False: the ports' egress queues are not programmed (the topology's
        fabric.egress_queues), whatever the QoS tables say."""
        self.name, self.netns, self.rundir, self.db = name, netns, rundir, db
        self.ifmap = ifmap or {}
        self.templates = templates
        self.reconcile_at_start = reconcile
        self.queues = queues
        self.started = threading.Event()   # set once the first sync (start) is done
        self.lock = threading.RLock()
        self.programmed: ConfigDb = self._load_programmed()
        self.cache: ConfigDb = {}   # CONFIG_DB as stored (every value a string, lists of strings): read, or as_stored

    # -- what was programmed ----------------------------------------------------------------

    @property
    def programmed_path(self) -> Path:
        return self.rundir / PROGRAMMED

    def _load_programmed(self) -> ConfigDb:
        return load_programmed(self.rundir) or {}

    def _save_programmed(self) -> None:
        tmp = self.programmed_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.programmed, sort_keys=True))
        tmp.replace(self.programmed_path)

    # -- reading CONFIG_DB --------------------------------------------------------------------

    def start(self) -> None:
        """The daemon's first sync with CONFIG_DB: reconcile or resync."""
        try:
            if self.reconcile_at_start:
                self.reconcile()
            else:
                self.resync()
                self._queues_present()
            self._log_not_emulated(self.cache, {})
            if not self.queues:
                log.warning("%s: egress queues not programmed (the topology's fabric.egress_queues is false): "
                            "the QoS tables are stored in CONFIG_DB, every port sends from one queue", self.name)
        finally:
            self.started.set()

    def _log_not_emulated(self, new: ConfigDb, old: ConfigDb) -> None:
        """Say what CONFIG_DB now holds that SONiC's routing stack would act on and this switch does not
        (twin.model.routing_surface): stored as SONiC stores it, never acted on in silence."""
        before = {str(item) for item in not_emulated(old)} if old else set()
        for item in not_emulated(new):
            if str(item) not in before:
                log.warning("%s: %s: stored in CONFIG_DB, not programmed", self.name, item)

    def reconcile(self) -> None:
        """Read CONFIG_DB whole, and program the kernel and FRR from what they actually hold: the
        switch runs what CONFIG_DB says, whatever programmed.json says was programmed."""
        with self.lock:
            self.cache = self.db.get_config()
            new, unsafe = without_unsafe(as_stored(self.cache), self.programmed)
            for problem in unsafe:
                log.error("%s: change not programmed: %s", self.name, problem)
            self._hostname(new)
            try:
                links = read_links(self.netns)
                kernel = [] if links is None else kernel_changes(observed(links, new, self.ifmap), new, self.ifmap)
                if links is None:
                    log.error("%s: the kernel's links could not be read; not reconciled", self.name)
                if kernel:
                    log.warning("%s: the kernel differed from CONFIG_DB: %s", self.name, "; ".join(kernel))
                self._kernel(kernel, tolerant=True)
                rooted = read_rooted(self.netns) if self.queues else set()
                if rooted is None:
                    log.error("%s: the kernel's queues could not be read; not reconciled", self.name)
                elif self.queues:
                    self._tc(qdisc_reconcile(new, rooted, self.ifmap), tolerant=True)
                if self.templates is not None:
                    self._reload(render_frr(new, self.templates), tolerant=True)  # frr-reload.py diffs FRR
                else:
                    self._converge_frr(new)
                if any(line.startswith("address add ") for line in kernel):
                    self._reinstall_sourced_routes(new)
            except Exception as exc:  # a daemon logs and carries on
                log.error("%s: reconciling with CONFIG_DB failed: %s", self.name, exc)
            finally:
                self.programmed = self.cache if new == self.cache else new
                self._save_programmed()

    def _converge_frr(self, new: ConfigDb) -> None:
        """Send FRR what its running config lacks of what `new` renders, and `no` what it has beyond,
        reading it again after each round; what FRR refuses or keeps differing is logged."""
        rendered = render_frr(new)
        for _ in range(CONVERGE_ROUNDS):
            running = running_config(self.rundir)
            if running is None:
                log.error("%s: FRR's running config could not be read; FRR not reconciled", self.name)
                return
            found = drift(rendered, running)
            if not found:
                return
            log.warning("%s: FRR differed from CONFIG_DB: %s", self.name,
                        "; ".join(describe(d, new) for d in found[:20]))
            self._vtysh(converge_lines(found), tolerant=True)
        log.error("%s: FRR still differs from CONFIG_DB after %d rounds", self.name, CONVERGE_ROUNDS)

    def _queues_present(self) -> None:
        """Every port with QoS maps has its queues' tree: the ports the runtime gave none get theirs."""
        if not self.queues:
            return
        with self.lock:
            rooted = read_rooted(self.netns)
            if rooted is None:
                log.error("%s: the kernel's queues could not be read", self.name)
                return
            self._tc(qdisc_reconcile(self.programmed, rooted, self.ifmap, refresh=False), tolerant=True)

    def resync(self) -> None:
        """Read CONFIG_DB whole and program whatever differs (at start, and after a reload)."""
        with self.lock:
            self.cache = self.db.get_config()
            self._program_logged(self.cache)

    def changed(self, keys: set[str]) -> None:
        """Keyspace events named `keys` (redis keys of CONFIG_DB): read them and program the change."""
        with self.lock:
            client = self.db.client("CONFIG_DB")
            names = sorted(keys)
            pipe = client.pipeline(transaction=True)
            for name in names:
                pipe.hgetall(name)
            rows = pipe.execute(raise_on_error=False)
            cache = {t: dict(r) for t, r in self.cache.items()}
            for name, raw in zip(names, rows, strict=True):
                table, key = split_key("CONFIG_DB", name)
                if key is None:
                    continue
                if isinstance(raw, dict) and raw:
                    cache.setdefault(table, {})[key] = raw_to_typed(raw)
                else:
                    cache.get(table, {}).pop(key, None)
                    if table in cache and not cache[table]:
                        del cache[table]
            self.cache = cache
            self._program_logged(cache)

    def set_cache(self, config: ConfigDb) -> None:
        """CONFIG_DB now holds `config` (the gNMI endpoint wrote it)."""
        with self.lock:
            self.cache = as_stored(config)

    # -- programming --------------------------------------------------------------------------

    def _program_logged(self, new: ConfigDb) -> None:
        """Program `new` (the cache) as SONiC's daemons would: what the switch refuses is logged, not
        undone. Where the programmed config then holds what CONFIG_DB holds, as it does but for a
        refused entry, it becomes the cache itself: a switch's CONFIG_DB is kept once, not twice
        (at 64 x 128 a copy is up to ~0.8 MiB a switch; the cache, read from redis, has its strings
        interned). Neither is ever changed in place: `changed` copies each table it touches,
        `program` builds a new config."""
        try:
            self.program(new, tolerant=True)
        except Exception as exc:  # a daemon logs and carries on with the next change
            log.error("%s: %s", self.name, exc)
        if self.cache is new and self.programmed == new:
            self.programmed = new

    def program(self, new: ConfigDb, tolerant: bool = False) -> None:
        """Send the kernel and FRR what differs between the programmed config and `new`.

        ProgramError when not `tolerant` and something was refused (what was sent stays sent:
        the caller programs the old config back). Entries no FRR or kernel line may carry
        (twin.switch.config.config_values: control characters, oversized, spaces in a kernel key) stay
        as they were programmed and are logged, whoever wrote them to CONFIG_DB."""
        with self.lock:
            stored = new if new is self.cache else as_stored(new)   # the cache is as stored already
            new, unsafe = without_unsafe(stored, self.programmed)
            for problem in unsafe:
                log.error("%s: change not programmed: %s", self.name, problem)
            self._hostname(new)
            old = self.programmed
            if new == old:
                return
            self._log_not_emulated(new, old)
            try:
                kernel = kernel_changes(old, new, self.ifmap)
                self._kernel(kernel, tolerant)
                if self.queues:
                    self._tc(qdisc_changes(old, new, self.ifmap), tolerant)
                if self.templates is not None:
                    self._reload(render_frr(new, self.templates), tolerant)
                else:
                    lines = frr_lines(old, new)
                    whole = lines is None
                    if lines is None:
                        self._vtysh(["no router bgp"], tolerant=True)
                        lines = render_frr(new).splitlines()
                    if lines:
                        self._vtysh(lines, tolerant)
                    if whole:  # what the config before left outside BGP (the other dialect's route-maps, lists)
                        self._converge_frr(new)
                if any(line.startswith("address add ") for line in kernel):
                    self._reinstall_sourced_routes(new)
            finally:
                self.programmed = new
                self._save_programmed()

    def _hostname(self, new: ConfigDb) -> None:
        """/etc/hostname follows DEVICE_METADATA's hostname, as hostcfgd has hostname-config.sh write it."""
        try:
            write_hostname(self.rundir, new)
        except OSError as exc:
            log.error("%s: /etc/hostname not written: %s", self.name, exc)

    def _reinstall_sourced_routes(self, new: ConfigDb) -> None:
        """Routes zebra installs with a source address (`ip protocol bgp route-map RM_SET_SRC`,
        `set src` Loopback0's address) are refused by the kernel while that address is missing, and
        zebra does not try again when it comes back. SONiC forwards from the ASIC (fpmsyncd), which
        takes them either way; here the kernel forwards, so the route-map is applied afresh once an
        address is added, and zebra installs those routes again."""
        rendered = render_frr(new, self.templates) if self.templates is not None else render_frr(new)
        maps = [line.strip() for line in rendered.splitlines() if PROTOCOL_ROUTE_MAP.fullmatch(line.strip())]
        if maps:
            self._vtysh([*(f"no {m}" for m in maps), *maps], tolerant=True)

    def _reload(self, conf: str, tolerant: bool) -> None:
        """Rendered with a SONiC release's templates: the whole config again, applied by FRR's own
        frr-reload.py, which sends only the difference from the running config."""
        path = self.rundir / "frr.conf"
        path.write_text(conf + "\n".join(runtime_lines(self.rundir)) + "\n")
        proc = subprocess.run([sys.executable, str(FRR_RELOAD), "--reload", "--vty_socket", str(self.rundir),
                               "--rundir", str(self.rundir), "--bindir", "/usr/bin", "--stdout", str(path)],
                              capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            message = f"frr-reload.py refused: {(proc.stdout + proc.stderr).strip()[-500:]}"
            if not tolerant:
                raise ProgramError(message)
            log.warning("%s: %s", self.name, message)

    def _kernel(self, lines: list[str], tolerant: bool) -> None:
        if not lines:
            return
        proc = subprocess.run(["ip", "-n", self.netns, "-force", "-b", "-"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            message = f"the kernel refused: {proc.stderr.strip()[-500:]}"
            if "Unknown device type" in proc.stderr and any(" type vlan " in line for line in lines):
                message += " (tagged VLAN members need the kernel's 8021q module, which this machine lacks)"
            if not tolerant:
                raise ProgramError(message)
            log.warning("%s: %s", self.name, message)

    def _tc(self, lines: list[str], tolerant: bool) -> None:
        if not lines:
            return
        proc = subprocess.run(["tc", "-n", self.netns, "-force", "-batch", "-"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            message = f"the kernel refused queues: {proc.stderr.strip()[-500:]}"
            if not tolerant:
                raise ProgramError(message)
            log.warning("%s: %s", self.name, message)

    def _vtysh(self, lines: list[str], tolerant: bool) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".conf", dir=self.rundir, delete=False) as f:
            f.write("\n".join(lines) + "\n")
        try:
            proc = subprocess.run(["vtysh", "--vty_socket", str(self.rundir), "-f", f.name],
                                  capture_output=True, text=True, timeout=60)
        finally:
            Path(f.name).unlink(missing_ok=True)
        if proc.returncode != 0:
            message = f"FRR refused: {(proc.stdout + proc.stderr).strip()[-500:]}"
            if not tolerant:
                raise ProgramError(message)
            log.warning("%s: %s", self.name, message)


def keyspace_key(channel: str) -> str | None:
    """The CONFIG_DB key a keyspace notification channel names."""
    return channel[len(KEYSPACE):] if channel.startswith(KEYSPACE) else None


def listen(daemon: ConfigDaemon, stop: threading.Event, settle: float = 0.01) -> None:
    """Follow CONFIG_DB keyspace events until `stop` (then `wake`): keys changing together (one
    MULTI/EXEC, a `config load`) are gathered until `settle` seconds pass with no more, then programmed.

    Between changes it waits on the subscription, for up to LISTEN_IDLE_S: at 64 x 128 the agent's 192
    listeners, each waking twice a second to look at `stop`, cost it 20 ms of CPU every second, through
    the launch and at rest. (Not a wait without end: redis-py before 8 ends such a read at the
    connection's socket timeout with an error.)"""
    client = daemon.db.client("CONFIG_DB")
    pubsub = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
    pubsub.psubscribe(KEYSPACE + "*")
    pubsub.subscribe(STOP_CHANNEL)
    daemon.start()  # after subscribing: nothing written meanwhile is missed, nor a wake
    try:
        while not stop.is_set():
            msg: Any = pubsub.get_message(timeout=LISTEN_IDLE_S)
            keys: set[str] = set()
            while msg is not None:
                key = keyspace_key(str(msg.get("channel", "")))
                if key is not None:
                    keys.add(key)
                msg = pubsub.get_message(timeout=settle)
            if keys:
                daemon.changed(keys)
    finally:
        pubsub.close()


def wake(daemon: ConfigDaemon) -> None:
    """Wake `daemon`'s listener, blocked on its subscription, to look at its stop event. A switch whose
    redis is gone needs none: the listener's read has failed already."""
    try:
        daemon.db.client("CONFIG_DB").publish(STOP_CHANNEL, "stop")
    except RedisError as exc:
        log.info("%s: no listener to wake (%s)", daemon.name, exc)
