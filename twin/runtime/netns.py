"""The embedded default runtime: one network namespace per node, veth pairs, real FRR.

Names: node namespaces are `tw.<lab>.<node>`, the management namespace `tw.<lab>` (a bridge
`br0` with one veth per switch, `eth0` inside the switch) and the host's end `tw-<lab>`.
Dots are not allowed in lab names, so one lab's prefix never matches another's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path

from twin.host import userfile
from twin.host.rundir import (
    LabState,
    NodeState,
    known_labs,
    lab_dir,
    load_state,
    node_dir,
    remove_lab_dir,
    save_plan,
    save_state,
)
from twin.host.shell import in_netns, ip_batch, list_netns, run
from twin.kinds.host import HOST_SYSCTLS, SWITCH_SYSCTLS, server_lines
from twin.model.errors import RuntimeBackendError, TwinError
from twin.model.plan import NodePlan, Plan
from twin.runtime import neighbours
from twin.runtime.confine import HOW as CONFINED
from twin.runtime.confine import confined_argv
from twin.runtime.frr_statedirs import remove_statedirs
from twin.runtime.registry import ProgressFn, check_lab_name
from twin.stages.configdb import ConfigDb
from twin.stages.render.config_db import dumps, node_config_db
from twin.stages.render.frr import render_frr
from twin.switch import redis_server
from twin.switch.cfgmgr import PROGRAMMED
from twin.switch.frr_daemons import (
    daemon_env,
    node_daemons,
    start_frr,
    vtysh,
)
from twin.switch.kernel import kernel_lines
from twin.switch.sonic_cli import tool_argv
from twin.switch.sonic_redis import as_stored

MGMT_SPACE = IPv4Network("172.20.0.0/14")
WORKERS = 8
LINK_INDEX, MGMT_INDEX = 1000, 900000   # interface indexes of link and management veth ends


def node_netns(lab: str, node: str) -> str:
    return f"tw.{lab}.{node}"


def mgmt_netns(lab: str) -> str:
    return f"tw.{lab}"


def _owned_netns(lab: str) -> list[str]:
    prefix = f"tw.{lab}."
    return [ns for ns in list_netns() if ns == mgmt_netns(lab) or ns.startswith(prefix)]


def link_lines(lab: str, plan: Plan) -> list[str]:
    """`ip -b` lines creating every link as a veth pair with its ends in the two nodes' namespaces.

    Both ends of every veth get their own ifindex. When the two ends of a pair share one (easy
    across namespaces), the kernel's linkwatch treats a carrier change as non-urgent and may sit on
    it for up to a second: a spine's link going down would then reach the leaf late.
    """
    lines = []
    for k, link in enumerate(plan.links):
        a, b = plan.node(link.a_node), plan.node(link.b_node)
        lines.append(f"link add name {a.iface(link.a_iface).kernel} index {LINK_INDEX + 2 * k} "
                     f"netns {node_netns(lab, a.name)} type veth "
                     f"peer name {b.iface(link.b_iface).kernel} index {LINK_INDEX + 2 * k + 1} "
                     f"netns {node_netns(lab, b.name)}")
    return lines


def pick_mgmt_subnet(count: int, taken: Iterable[IPv4Network]) -> IPv4Network:
    """The first subnet of 172.20.0.0/14 big enough for the host and `count` switches, unused."""
    prefixlen = 24
    while (2 ** (32 - prefixlen)) - 3 < count:
        prefixlen -= 1
    busy = list(taken)
    for net in MGMT_SPACE.subnets(new_prefix=prefixlen):
        if net.network_address == IPv4Network("172.20.0.0/24").network_address and prefixlen == 24:
            continue  # leave 172.20.0.0/24 alone; containerlab's default is 172.20.20.0/24
        if not any(net.overlaps(b) for b in busy):
            return net
    raise RuntimeBackendError("no free management subnet in 172.20.0.0/14; remove other labs")


def _host_routes() -> list[IPv4Network]:
    out = run(["ip", "-4", "route", "show", "table", "all"], check=False).stdout
    nets = []
    for line in out.splitlines():
        word = line.split()[0] if line.split() else ""
        if word in ("local", "broadcast", "unreachable", "blackhole"):
            word = line.split()[1]
        try:
            nets.append(IPv4Network(word if "/" in word or word == "default" else f"{word}/32"))
        except ValueError:
            continue
    return [n for n in nets if n.prefixlen > 0]


class NetnsRuntime:
    name = "netns"
    # A SONiC release's FRR templates to render switches with (twin.stages.render.sonic_templates); None:
    # twin's own renderer.
    templates: Path | None = None

    # -- the protocol -------------------------------------------------------------------------

    def labs(self) -> list[str]:
        names = set(known_labs())
        for ns in list_netns():
            if ns.startswith("tw."):
                names.add(ns.split(".")[1])
        return sorted(names)

    def up(self, lab: str, plan: Plan, progress: ProgressFn) -> LabState:
        check_lab_name(lab)
        _preflight()
        old = load_state(lab)
        if old is not None and old.phase == "up" and _owned_netns(lab):
            raise TwinError(f"lab '{lab}' is already up; 'twin down --name {lab}' first, "
                            "or pick another --name")
        if old is not None or _owned_netns(lab):
            self.down(lab)  # recover from a crash half-way through an earlier `up`
        try:
            return self._up(lab, plan, progress)
        except BaseException:
            self.down(lab)
            raise

    def down(self, lab: str) -> list[str]:
        state = load_state(lab)
        namespaces = set(_owned_netns(lab))
        if state is not None:
            namespaces |= {ns for ns in state.netns if ns in set(list_netns())}
        removed: list[str] = []
        pids: set[int] = set()
        for ns in namespaces:
            out = run(["ip", "netns", "pids", ns], check=False).stdout.split()
            pids |= {int(p) for p in out if p.isdigit()}
        pids |= _pidfile_pids(lab_dir(lab))
        _kill(pids)
        if pids:
            removed.append(f"{len(pids)} processes")
        removed += self._remove_nodes(lab)
        if namespaces:
            ip_batch([f"netns delete {ns}" for ns in sorted(namespaces)], force=True)
            removed.append(f"{len(namespaces)} namespaces")
        host_if = f"tw-{lab}"
        if run(["ip", "link", "show", "dev", host_if], check=False).returncode == 0:
            run(["ip", "link", "delete", "dev", host_if], check=False)
        if lab_dir(lab).exists():
            remove_lab_dir(lab)
            removed.append(str(lab_dir(lab)))
        removed += remove_statedirs(lab)
        removed += neighbours.restore_when_idle(lab)
        left = _owned_netns(lab)
        if left:
            raise RuntimeBackendError(f"could not remove namespaces of lab '{lab}': {', '.join(left)}")
        return removed

    def exec_argv(self, state: LabState, node: str, cmd: Sequence[str]) -> list[str]:
        ns = state.node(node)
        argv = list(cmd)
        tool = tool_argv(node_dir(state.lab, node), argv) if ns.kind == "switch" else None
        if tool is not None:
            return in_netns(ns.netns, tool)
        if argv and argv[0] == "vtysh" and "--vty_socket" not in argv:
            argv = vtysh(node_dir(state.lab, node), *argv[1:])
        return in_netns(ns.netns, argv)

    def set_link_state(self, state: LabState, node: str, ifaces: Sequence[str], up: bool) -> None:
        ip_batch([f"link set dev {i} {'up' if up else 'down'}" for i in ifaces], netns=state.node(node).netns)

    def node_loss(self, state: LabState, node: str, ifaces: Sequence[str], lost: bool) -> str:
        self.set_link_state(state, node, ifaces, not lost)
        return f"all {len(ifaces)} links of {node} down at once"

    def node_pids(self, state: LabState, node: str) -> list[int]:
        out = run(["ip", "netns", "pids", state.node(node).netns], check=False).stdout.split()
        return sorted(int(p) for p in out if p.isdigit())

    # -- what differs between runtimes: how nodes exist and how their daemons start ----------

    def _describe(self, state: LabState) -> None:
        """Fill in the state fields this runtime adds before anything is created."""
        state.mgmt_netns = mgmt_netns(state.lab)
        state.netns = [mgmt_netns(state.lab), *state.netns]

    def _create_nodes(self, state: LabState, plan: Plan, subnet: IPv4Network,
                      mgmt_ip: dict[str, IPv4Address]) -> None:
        """One namespace per node, and the management bridge in its own namespace."""
        lab = state.lab
        ip_batch([f"netns add {ns}" for ns in state.netns])
        mgmt = mgmt_netns(lab)
        host_lines = [f"link add name tw-{lab} type veth peer name up0 netns {mgmt}"]
        mgmt_lines = ["link set dev lo up", "link add br0 type bridge", "link set dev br0 up",
                      "link set dev up0 master br0 up"]
        for i, n in enumerate(plan.switches):
            host_lines.append(f"link add name eth0 index {MGMT_INDEX + 2 * i} netns {node_netns(lab, n.name)} "
                              f"type veth peer name m{i} index {MGMT_INDEX + 2 * i + 1} netns {mgmt}")
            mgmt_lines.append(f"link set dev m{i} master br0 up")
        ip_batch(host_lines)
        ip_batch(mgmt_lines, netns=mgmt)
        ip_batch([f"address add {state.mgmt_host}/{subnet.prefixlen} dev tw-{lab}", f"link set dev tw-{lab} up"])

    def _wire_links(self, lab: str, plan: Plan) -> None:
        ip_batch(link_lines(lab, plan), path=lab_dir(lab) / "wiring.batch")

    def _prepare_rundir(self, lab: str, node: NodePlan, rundir: Path) -> None:
        shutil.chown(rundir, "frr", "frr")

    def _mgmt_lines(self, mgmt_ip: str, plen: int) -> list[str]:
        return [f"address add {mgmt_ip}/{plen} dev eth0", "link set dev eth0 up"]

    def _start_daemon(self, lab: str, node: NodePlan, argv: list[str]) -> None:
        run(in_netns(node_netns(lab, node.name), argv), env=daemon_env())

    def _start_databases(self, lab: str, node: NodePlan, rundir: Path, db: ConfigDb) -> None:
        """SONiC's redis databases of a switch, CONFIG_DB loaded from its config_db.json (as
        `config-setup` does at boot); programmed.json records that the kernel and FRR are
        about to be programmed from it, for the config daemon that takes over from here."""
        redis_server.write_database_config(rundir)
        self._start_daemon(lab, node, redis_server.redis_argv(rundir))
        try:
            databases = redis_server.wait_ready(rundir)
        except TimeoutError as exc:
            raise RuntimeBackendError(f"{node.name}: {exc}") from None
        try:
            redis_server.config_load(databases, db)
        finally:
            databases.close()
        (rundir / PROGRAMMED).write_text(json.dumps(as_stored(db), sort_keys=True))

    def _exec_line(self, lab: str, node: NodePlan, line: str) -> str:
        """Run one of an imported host's `exec:` lines inside the node, confined (twin.runtime.confine),
        as containerlab runs it inside the node's container; returns what `twin up` reports it ran."""
        argv = confined_argv(node_netns(lab, node.name), node_dir(lab, node.name), node.name, line)
        proc = run(argv, check=False)
        if proc.returncode != 0:
            raise RuntimeBackendError(f"{node.name}: exec line '{line}' failed (exit {proc.returncode}): "
                                      f"{(proc.stderr or proc.stdout).strip()[-500:]}")
        return f"{node.name}: ran exec line '{line}' ({CONFINED})"

    def _remove_nodes(self, lab: str) -> list[str]:
        """Remove what `_create_nodes` made beyond namespaces and processes (nothing here)."""
        return []

    # -- bring-up -----------------------------------------------------------------------------

    def _up(self, lab: str, plan: Plan, progress: ProgressFn) -> LabState:
        switches = plan.switches
        others = [state.mgmt_subnet for name in known_labs() if name != lab
                  if (state := load_state(name)) is not None and state.mgmt_subnet]
        subnet = pick_mgmt_subnet(len(switches), [IPv4Network(s) for s in others] + _host_routes())
        hosts = list(subnet.hosts())
        mgmt_ip = {n.name: hosts[i + 1] for i, n in enumerate(switches)}
        state = LabState(
            lab=lab, runtime=self.name, phase="creating", topology=plan.source, created=time.time(),
            mgmt_subnet=str(subnet), mgmt_host=str(hosts[0]), host_iface=f"tw-{lab}",
            netns=[node_netns(lab, n.name) for n in plan.nodes],
            nodes=[NodeState(name=n.name, role=n.role, kind=n.kind, netns=node_netns(lab, n.name),
                             mgmt=f"{mgmt_ip[n.name]}" if n.name in mgmt_ip else None)
                   for n in plan.nodes],
        )
        self._describe(state)
        save_state(state)  # before anything exists: a crash from here on is recoverable
        save_plan(lab, plan)
        lab_dir(lab).chmod(0o755)
        state.notes += neighbours.size_for(plan)

        nodes = len(plan.nodes)
        progress(f"creating {nodes} nodes", 0, nodes)
        self._create_nodes(state, plan, subnet, mgmt_ip)
        progress(f"wiring {len(plan.links)} links", 0, nodes)
        self._wire_links(lab, plan)

        started = 0

        def one(node: NodePlan) -> list[str]:
            return self._start_node(lab, plan, node, str(mgmt_ip.get(node.name, "")), subnet.prefixlen)

        def tick() -> None:
            nonlocal started
            started += 1
            progress(f"starting nodes ({started}/{nodes})", started, nodes)

        warnings = _parallel(plan.nodes, one, tick)
        state.notes += warnings
        state.phase = "up"
        save_state(state)
        progress("all nodes started", nodes, nodes)
        return state

    def _start_node(self, lab: str, plan: Plan, node: NodePlan, mgmt_ip: str, plen: int) -> list[str]:
        ns = node_netns(lab, node.name)
        rundir = node_dir(lab, node.name)
        rundir.mkdir(parents=True, exist_ok=True)
        warnings: list[str] = []
        if node.kind == "host":
            _sysctl(ns, HOST_SYSCTLS)
            if node.exec:
                ip_batch(["link set dev lo up"] + [f"link set dev {i.kernel} up" for i in node.interfaces],
                         netns=ns)
                warnings += [self._exec_line(lab, node, line) for line in node.exec]  # in order, each once
            else:
                ip_batch(server_lines(node), netns=ns)
            return warnings

        _sysctl(ns, SWITCH_SYSCTLS)
        mgmt_lines = self._mgmt_lines(mgmt_ip, plen)
        self._prepare_rundir(lab, node, rundir)
        if node.kind == "switch":
            eth0 = IPv4Interface(f"{mgmt_ip}/{plen}")
            db = node_config_db(plan, node, mgmt=(eth0, str(eth0.network.network_address + 1)))
            (rundir / "config_db.json").write_text(dumps(db))
            self._start_databases(lab, node, rundir, db)
            conf = render_frr(db, self.templates)
            ifmap = {i.name: i.kernel for i in node.interfaces}
            ip_batch(kernel_lines(db, ifmap) + mgmt_lines, netns=ns)
        else:  # an imported router running the user's own FRR files
            assert node.frr_conf is not None
            conf = userfile.read_text(node.frr_conf)  # checked when the topology was loaded; again here
            ip_batch(["link set dev lo up"] + [f"link set dev {i.kernel} up" for i in node.interfaces]
                     + mgmt_lines, netns=ns)
        daemons = node_daemons(node, plan.fabric.bfd.enabled)
        try:
            skipped = start_frr(rundir, ns, daemons, conf, lambda argv: self._start_daemon(lab, node, argv))
        except RuntimeBackendError as exc:
            raise RuntimeBackendError(f"{node.name}: {exc}") from None
        return warnings + [f"{node.name}: {w}" for w in skipped]


def _preflight() -> None:
    if os.geteuid() != 0:
        raise TwinError("the netns runtime needs root (network namespaces, veth pairs); run as root")
    if not Path("/usr/lib/frr/zebra").exists() or shutil.which("vtysh") is None:
        raise TwinError("FRR is not installed: run 'make lab-up' (it installs it) or "
                        "'apt-get install frr frr-pythontools'")


def _sysctl(ns: str, values: dict[str, str]) -> None:
    run(in_netns(ns, ["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in values.items())]))


def _parallel(nodes: list[NodePlan], fn: Callable[[NodePlan], list[str]],
              tick: Callable[[], None]) -> list[str]:
    out: list[str] = []
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for result in pool.map(fn, nodes):
            out += result
            tick()
    return out


def _pidfile_pids(root: Path) -> set[int]:
    """PIDs from the lab's pid files, only where that process is still one the lab started."""
    pids = set()
    for pidfile in [*root.glob("*.pid"), *root.glob("nodes/*/*.pid")]:
        try:
            pid = int(pidfile.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except (OSError, ValueError):
            continue
        if str(pidfile.parent) in cmdline:
            pids.add(pid)
    return pids


def _kill(pids: set[int], grace: float = 3.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = set()
        for pid in pids:
            try:
                os.kill(pid, sig)
                alive.add(pid)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + grace
        while alive and time.monotonic() < deadline:
            alive = {p for p in alive if Path(f"/proc/{p}").exists()}
            time.sleep(0.02)
        pids = alive
        if not pids:
            return
