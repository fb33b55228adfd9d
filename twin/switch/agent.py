"""The gNMI agent: every switch of a lab answers gNMI on its own management address.

One process per lab (`python -m twin.switch.agent --run-dir /run/twin/<lab>`), one gRPC server
per switch, each bound inside that switch's network namespace, so endpoints stay separate.
Each answers as SONiC's gNMI server (sonic-gnmi) answers: gNMI (twin.switch.sonic_gnmi), gNOI System
and File (twin.switch.gnoi), and gRPC reflection listing them (twin.switch.sonic_gnmi.reflection).
"""

from __future__ import annotations

import argparse
import functools
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from twin.host.cpu_share import LOWEST, NORMAL, set_cpu_share
from twin.host.file_wait import await_file
from twin.host.netns_thread import run_in_netns
from twin.model.agent import AgentSettings, AgentSwitch
from twin.stages.validate.yang import models_not_found
from twin.switch.access import mgmt_nft
from twin.switch.access.grpc_guard import guarded_server
from twin.switch.agent_progress import LAUNCHED, MGMT_LIMITED, SETTLED, STATE_WRITTEN, Progress
from twin.switch.cli import sshd
from twin.switch.cli.switch_view import Services
from twin.switch.config.cfgmgr import ConfigDaemon
from twin.switch.config.yang_check import YangCheck
from twin.switch.endpoint_protocol import SwitchEndpoint
from twin.switch.frr.leftover_writers import await_leftover_writers
from twin.switch.gnoi.file import add_file_servicer
from twin.switch.gnoi.gnoi_pb.file import file_pb2
from twin.switch.gnoi.gnoi_pb.system import system_pb2
from twin.switch.gnoi.switch_files import SwitchFiles
from twin.switch.gnoi.system import add_system_servicer
from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis
from twin.switch.restart.config_reload import reload_config
from twin.switch.restart.reboot import SwitchReboot
from twin.switch.restart.services import SwitchServices
from twin.switch.sonic_endpoint import SonicEndpoint
from twin.switch.sonic_gnmi.reflection import REFLECTION_METHODS, enable_reflection
from twin.switch.sonic_gnmi.server import SonicGnmiServicer
from twin.switch.start_many import start_many
from twin.switch.state.producers import SwitchProducers
from twin.switch.state.switchd import SwitchDaemons
from twin.switch.twin_endpoint import TwinSwitchEndpoint

SwitchParts = tuple[ConfigDaemon, SwitchProducers]  # what twin runs for one of its own switches
# What every switch's server serves (as sonic-gnmi registers them when its writes are enabled), and
# gRPC reflection listing them.
SERVICES = (gnmi_pb2.DESCRIPTOR.services_by_name["gNMI"].full_name,
            system_pb2.DESCRIPTOR.services_by_name["System"].full_name,
            file_pb2.DESCRIPTOR.services_by_name["File"].full_name)
RESTARTED = "started where the switches run: converging each on CONFIG_DB from what it runs"
log = logging.getLogger("twin.agent")


# -- the process ------------------------------------------------------------------------------

def _add_port(server: grpc.Server, address: str, creds: grpc.ServerCredentials | None) -> int:
    port: int = server.add_secure_port(address, creds) if creds is not None else server.add_insecure_port(address)
    return port


def _bind(server: grpc.Server, address: str, creds: grpc.ServerCredentials | None, netns: str | None) -> int:
    bind = functools.partial(_add_port, server, address, creds)
    return run_in_netns(netns, bind) if netns else bind()  # a container front may listen in the agent's own


def add_services(server: grpc.Server, settings: AgentSettings, ep: SwitchEndpoint, reboot: SwitchReboot | None,
                 yang: YangCheck | None) -> list[str]:
    """Serve SERVICES of one switch on `server` (`reboot` None: a switch twin only fronts, whose gNOI
    answers UNIMPLEMENTED), and reflection; returns what reflection lists."""
    user, password = settings.username, settings.password
    gnmi_pb2_grpc.add_gNMIServicer_to_server(SonicGnmiServicer(ep, user, password, yang), server)
    if reboot is None:
        add_system_servicer(server, None, user, password)
        add_file_servicer(server, None, user, password)
    else:
        add_system_servicer(server, reboot, user, password, SwitchServices(reboot.daemon, reboot.launch))
        add_file_servicer(server, SwitchFiles(reboot.rundir), user, password, reboot.daemon.netns)
    return enable_reflection(server, SERVICES)


def _endpoint(sw: AgentSwitch, templates: Path | None = None,
              reconcile: bool = False) -> tuple[SwitchEndpoint, SwitchParts | None]:
    """The switch behind one agent.json entry, and its daemons when twin runs them (`reconcile`: the
    switch already runs, twin.switch.config.cfgmgr.ConfigDaemon).

    A SONiC container (`"backend": "sonic-redis"`, with `redis_socket` or `redis_host`/`redis_port`)
    runs SONiC's own daemons; twin's switch has its databases on `redis.sock` in its run directory
    and its daemons run here."""
    if sw.sonic:
        return SonicEndpoint.from_settings(sw), None
    if sw.rundir is None or sw.netns is None:
        raise ValueError(f"{sw.name}: agent.json names no run directory or namespace for twin's own switch")
    rundir = Path(sw.rundir)
    db = SonicRedis(unix_socket=socket_path(rundir))
    daemon = ConfigDaemon(sw.name, sw.netns, rundir, db, ifmap=sw.ifmap, templates=templates, reconcile=reconcile,
                          queues=sw.queues)
    producers = SwitchProducers(sw.name, sw.netns, rundir, db)
    return TwinSwitchEndpoint(name=sw.name, rundir=rundir, ports=sw.ports, daemon=daemon), (daemon, producers)


RECONCILE_WAIT_S = 120.0  # how long a restarted agent waits for a switch's reconcile before serving anyway


def await_settings(run_dir: Path) -> bool:
    """Started ahead of its switches (twin.lab.agent.prestart_agent, at nice 19): wait for agent.json,
    then take the normal priority back (threads made from here on inherit it). False when the lab's
    run directory went away first (its `up` failed)."""
    if not _await_file(run_dir, "agent.json"):
        return False
    os.setpriority(os.PRIO_PROCESS, 0, 0)
    return True


def _await_file(run_dir: Path, name: str) -> bool:
    """Until `name` exists in the lab's run directory; False when the directory went away first."""
    return await_file(run_dir, name)


def serve(run_dir: Path, started_ahead: bool = False) -> None:
    """Serve the lab's switches. `started_ahead`: started before the switches launched (`twin up`);
    otherwise the switches already run (`twin agent restart`, or an agent started after the launch)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    (run_dir / STATE_WRITTEN).unlink(missing_ok=True)   # an earlier agent's
    settings = AgentSettings.model_validate_json((run_dir / "agent.json").read_text())
    creds = None
    if settings.tls:
        creds = grpc.ssl_server_credentials([((run_dir / "tls.key").read_bytes(), (run_dir / "tls.crt").read_bytes())])
    yang = YangCheck.find()
    if yang is None:
        log.warning("%s: Sets are judged by twin's built-in schema, a digest of the same models (set "
                    "TWIN_SONIC_YANG or TWIN_SONIC_REFERENCE)", models_not_found())
    else:
        log.info("Sets are validated with SONiC's YANG models in %s", yang.models)
    servers = []
    binds: list[Callable[[], int]] = []
    parts: list[SwitchParts] = []
    services: dict[str, Services] = {}   # `config reload` in each switch's shell
    progress = Progress(run_dir)
    templates = Path(settings.sonic_templates) if settings.sonic_templates else None
    # Started where the switches already run (`twin agent restart`): an earlier agent may have died
    # half-way through programming them, so each config daemon converges its switch on CONFIG_DB from
    # what the switch runs, once that agent's leftover vtysh and ip processes have ended. Said by how
    # the agent was started, not by whether the lab is marked launched by now: an agent started ahead
    # of a small lab can read its settings after the launch (loading SONiC's YANG models takes a while).
    restarted = not started_ahead
    if restarted:
        log.info(RESTARTED)
        own_switches = [sw for sw in settings.switches if not sw.sonic and sw.rundir and sw.netns]
        await_leftover_writers({str(sw.rundir) for sw in own_switches}, {str(sw.netns) for sw in own_switches})
    for sw in settings.switches:
        ep, own = _endpoint(sw, templates, reconcile=restarted)
        try:
            ep.recover()
        except Exception:  # one switch's leftover must not keep every other switch's gNMI and SSH down
            log.exception("%s: could not undo an interrupted Set; CONFIG_DB is left as it is", sw.name)
        if own is not None:
            parts.append(own)
        # Each call is authenticated and counted before it takes one of the server's threads
        # (twin.switch.access.grpc_guard): a client without the password cannot fill them.
        server, _ = guarded_server(sw.name, settings.username, settings.password, open_methods=REFLECTION_METHODS)
        reboot = SwitchReboot.from_settings(sw, own[0], settings.reboot) if own is not None else None
        if reboot is not None:
            services[sw.name] = functools.partial(reload_config, reboot)
        add_services(server, settings, ep, reboot, yang)
        binds.append(functools.partial(_bind, server, f"{sw.mgmt}:{settings.port}", creds, sw.netns))
        servers.append(server)
        progress.step()
    start_many(binds, lambda bind: bind())  # each in its switch's namespace, from a thread of its own
    log.info("%d switches set up, their gNMI ports bound", len(servers))
    daemons = SwitchDaemons([d for d, _ in parts], [p for _, p in parts])
    daemons.start_config()
    daemons.subscribe(progress.step)
    log.info("config daemons of %d switches started, their state producers subscribed", len(parts))
    if settings.ssh_port:
        sshd.start(settings.switches, settings.username, settings.password, settings.ssh_port,
                   run_dir / "ssh_host_key", services)
    # The state producers write once every switch's FRR has launched: while the fabric launches,
    # following each converging switch's kernel events cost this process about 10 CPU-s at 64 x 128,
    # taken from a launch that needs both CPUs, where reading each table once afterwards costs one.
    # What the kernel told them meanwhile (at most 64 KiB a switch: switchd.SUBSCRIBED_RCVBUF) is
    # dropped as each switch's tables are read.
    launched = _await_file(run_dir, LAUNCHED)  # else the lab's `up` failed and its run directory is gone
    if launched:
        if restarted:  # ready means reconciled: `twin agent restart` returns with the switches as CONFIG_DB says
            for daemon, _ in parts:
                daemon.started.wait(timeout=RECONCILE_WAIT_S)
        serving, written = threading.Event(), threading.Event()
        _ready(run_dir, lambda: daemons.start_state(on_written=functools.partial(_written, run_dir, len(parts),
                                                                                   serving, written)),
               functools.partial(_start_servers, servers, serving), len(parts), started_ahead)
        ports = [settings.port, *([settings.ssh_port] if settings.ssh_port else [])]
        threading.Thread(target=_limit_mgmt, args=(run_dir, settings.switches, ports, written), name="mgmt-nft",
                         daemon=True).start()
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        stop.wait()
    if launched:
        for server in servers:
            server.stop(grace=0.5)
    daemons.close()


def _start_servers(servers: list[grpc.Server], serving: threading.Event) -> None:
    """The switches' gRPC servers started (then `serving` set), once the lab has launched: their ports
    were bound and listen from the set-up on, so a client that connects before is answered from
    here. Each started server's thread wakes five times a second, which at 64 x 128 cost the agent
    29 ms of CPU every second of a launch that needs both CPUs."""
    try:
        start_many(servers, lambda server: server.start())
        log.info("%d gNMI servers started", len(servers))
    finally:
        serving.set()


def _ready(run_dir: Path, start_state: Callable[[], None], start_servers: Callable[[], None], switches: int,
           started_ahead: bool) -> None:
    """agent.ready written, and the gRPC servers and the state producers started. Started ahead (`twin
    up`, which polls the lab's health once agent.ready exists and returns once the state tables are
    written): agent.ready first, then the agent takes the lowest share of the CPU until the lab is
    judged, and only then do the servers start and the producers' first pass begin. Both are paid from
    what FRR and the health poll leave, not out of the convergence `twin up` waits for: lowered before
    agent.ready, the agent wrote it only once FRR left it a moment (up to 21 s after the last switch
    launched at 64 x 128, and the health poll waited as long); lowered after the servers started, it
    stayed at the normal share while they started (15-37 s at 64 x 128, each start waiting for the
    interpreter lock the first pass's workers held). The servers start before the first pass for the
    same reason, and `twin up` returns after both (_written waits for the servers).
    Started where the switches already run (`twin agent restart`, which returns on agent.ready), the
    servers and producers start first: ready means serving.

    What the set-up made (every switch's gNMI server, config daemon and producers) lives as long as
    the agent: it is moved out of the cyclic garbage collector's reach first (gc.freeze). Each full
    collection traversed all of it, and the first pass and the loop allocate enough to run many:
    gc_collect_main was half the agent's CPU while a 64 x 128 fabric converged."""
    gc.freeze()
    if started_ahead:
        (run_dir / "agent.ready").write_text(str(os.getpid()))
        how = set_cpu_share(LOWEST)
        threading.Thread(target=_settle_when_judged, args=(run_dir,), name="settle", daemon=True).start()
        log.info("at the lowest CPU share (%s) until the lab is judged", how)
    start_servers()
    start_state()
    log.info("state producers of %d switches started", switches)
    if not started_ahead:
        (run_dir / "agent.ready").write_text(str(os.getpid()))


def _written(run_dir: Path, switches: int, serving: threading.Event, written: threading.Event) -> None:
    gc.freeze()   # the tables' rows the first pass made live until replaced, as the set-up does (_ready)
    log.info("state tables of %d switches written", switches)
    serving.wait()   # `twin up` returns on STATE_WRITTEN: what it reports is served by then
    (run_dir / STATE_WRITTEN).write_text(str(os.getpid()))
    written.set()


# The management ports' limits wait at most this long for the state tables (a switch whose redis
# never takes its first pass must not keep every switch's limits away).
LIMITS_WAIT_S = 120.0


def _limit_mgmt(run_dir: Path, switches: list[AgentSwitch], ports: list[int], written: threading.Event,
                wait: float = LIMITS_WAIT_S) -> None:
    """The management ports' connection limits (twin.switch.access.mgmt_nft) on every switch, once its
    state tables are written (so after `twin up` has returned, or `wait` seconds at most), then
    MGMT_LIMITED. The tables' hooks see every packet the switch sends or receives: in place while
    the fabric converges, they cost its bgpds and the kernel CPU the convergence needs. Applied from
    the set-up on, through the launch, at 64 x 128 FRR spent 471 and 496 CPU-s against 360 and 386
    in the same rounds, the rest of the machine 49 against 28, and twin took 1.29x as long; on an
    idle 64 x 128 lab the tables cost 0.1 of a CPU (bgpd's keepalives and the softirqs)."""
    written.wait(wait)
    began = time.monotonic()
    applied = mgmt_nft.apply(switches, ports)
    log.info("management ports' connection limits in place on %d of %d switches in %.1f s",
             len(applied.limited), applied.own, time.monotonic() - began)
    (run_dir / MGMT_LIMITED).write_text(str(os.getpid()))


def _settle_when_judged(run_dir: Path) -> None:
    if _await_file(run_dir, SETTLED):
        set_cpu_share(NORMAL)
        log.info("the lab is judged: back at the normal CPU share")


def await_go(run_dir: Path) -> bool:
    """Preloaded before its lab existed (twin.lab.agent_preload), its modules loaded: wait for a line
    on standard input, which comes once the lab's run directory exists; from there on agent.log in it
    takes the process's output. False when the input closes first (`twin up` stopped before that)."""
    if not sys.stdin.readline():
        return False
    log_fd = os.open(run_dir / "agent.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for fd in (1, 2):
        os.dup2(log_fd, fd)
    os.close(log_fd)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description="twin's gNMI agent for the switches of one lab")
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--await-settings", action="store_true",
                        help="started before the switches: wait for agent.json, then serve")
    parser.add_argument("--preloaded", action="store_true",
                        help="started before the lab existed: wait for a line on standard input, then "
                             "for agent.json, then serve")
    args = parser.parse_args()
    if args.preloaded and not await_go(args.run_dir):
        return
    if (args.await_settings or args.preloaded) and not await_settings(args.run_dir):
        return
    serve(args.run_dir, started_ahead=args.await_settings or args.preloaded)


if __name__ == "__main__":
    main()
