"""SSH on every switch's management address (asyncssh): the switch's CLI, never the host's.

Runs inside the agent process: one asyncio loop, one listener per switch, each listening socket
created inside that switch's namespace. Password authentication only (the lab's `gnmi:` username
and password, SONiC's admin/YourPaSsWoRd by default), failed passwords slowed and connections not
logged in yet limited as sshd does (twin.switch.cli.ssh_logins); no port forwarding, SFTP or SCP.

A session is a SONiC login: MOTD, the prompt `admin@leaf1:~$ `, and the closed command set of
twin.switch.cli.shell (`show`, `sudo config`, `vtysh`, `sonic-db-cli`, `redis-cli`, `ping`,
`traceroute`, `ip`, `sonic-cli`, `exit`); `sudo -s` gives `root@leaf1:/home/admin# ` until
`exit`, as netmiko's linux and edgecore_sonic drivers expect for their config mode, and
`sonic-cli` the KLISH prompt `leaf1# ` netmiko's dell_sonic driver expects. ^C interrupts the
running command, ^D logs out.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import contextlib
import enum
import functools
import hmac
import logging
import socket
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import asyncssh

from twin.host.netns_thread import run_in_netns
from twin.model.agent import AgentSwitch
from twin.switch.access.login_throttle import client_host
from twin.switch.access.tls import write_private
from twin.switch.cli import config_cli, klish
from twin.switch.cli.cli_filters import Filter, FilterError
from twin.switch.cli.cli_output import Output
from twin.switch.cli.cli_process import LocalProcess, Process
from twin.switch.cli.container_exec import ContainerProcess
from twin.switch.cli.counters_cli import run_tool
from twin.switch.cli.shell import (
    Clock,
    Config,
    CounterTool,
    DbCli,
    Enter,
    Exit,
    Hostname,
    InContainer,
    Piped,
    ReadFile,
    Run,
    Show,
    Switch,
    Text,
    translate,
    translate_redis,
)
from twin.switch.cli.show_cli import run_show
from twin.switch.cli.sonic_cli import db_cli
from twin.switch.cli.ssh_logins import LOGIN_GRACE_S, SshLogins
from twin.switch.cli.switch_view import CLEAN_ENV, Services, SwitchView
from twin.switch.cli.system_cli import read_file, run_date, run_uptime
from twin.switch.cli.vtysh_guard import VTYSH_CONF, refusal, vtysh_conf
from twin.switch.redis.redis_server import socket_path
from twin.switch.redis.sonic_redis import SonicRedis

log = logging.getLogger("twin.sshd")
# What SONiC's sshd says first: sonic-buildimage builds Debian's openssh-server 10.0p1-7 (rules/openssh.mk at
# 086b03bd), whose banner is "SSH-2.0-OpenSSH_10.0p1 Debian-7". Tools tell a SONiC switch by it (sonic-mgmt's
# reboot waits for /OpenSSH_[\w\.]+ Debian/); the server behind it is AsyncSSH (docs/differences.md).
SSH_VERSION = "OpenSSH_10.0p1 Debian-7"
T = TypeVar("T")
SWITCH_THREADS = 4       # a switch's sessions' blocking commands (show, config, sonic-cli) at once; made when needed
MAX_FILTERED = 64 << 20  # output a command may give the shell's `|` filters, which need it whole
MOTD = ("You are on\n"
        "  ____   ___  _   _ _  ____\n"
        " / ___| / _ \\| \\ | (_)/ ___|\n"
        " \\___ \\| | | |  \\| | | |\n"
        "  ___) | |_| | |\\  | | |___\n"
        " |____/ \\___/|_| \\_|_|\\____|\n\n"
        "-- Software for Open Networking in the Cloud --\n\n"
        "Unauthorized access and/or use are prohibited.\n"
        "All access and/or use are subject to monitoring.\n\n"
        "Help:    https://sonic-net.github.io/SONiC/\n\n"
        "twin: this switch's CLI - show, sudo config, vtysh, sonic-db-cli, redis-cli, ping, traceroute, "
        "ip, sonic-cli\n\n")


class Signal(enum.Enum):
    BREAK = "break"   # ^C
    EOF = "eof"       # ^D, or the client closed its side


Item = str | Signal


class _Server(asyncssh.SSHServer):
    """One SSH connection's login, within its switch's limits (twin.switch.cli.ssh_logins)."""

    def __init__(self, username: str, password: str, logins: SshLogins) -> None:
        self.username, self.password, self.logins = username, password, logins
        self.peer, self.counted = "", False

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        peername = conn.get_extra_info("peername")
        self.peer = client_host(str(peername[0])) if peername else ""
        self.counted = self.logins.startups.admit(self.peer)
        if not self.counted:  # sshd's MaxStartups: dropped before the banner
            conn.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._done()

    def auth_completed(self) -> None:
        self._done()

    def _done(self) -> None:
        if self.counted:
            self.counted = False
            self.logins.startups.done(self.peer)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    async def validate_password(self, username: str, password: str) -> bool:
        authentic = hmac.compare_digest(username.encode(), self.username.encode()) and \
            hmac.compare_digest(password.encode(), self.password.encode())
        return await self.logins.verdict(self.peer, authentic)


class Inbox:
    """What the client typed, line by line, with ^C and end of input."""

    def __init__(self) -> None:
        self.items: collections.deque[Item] = collections.deque()
        self.ready = asyncio.Event()

    def put(self, item: Item) -> None:
        self.items.append(item)
        self.ready.set()

    async def wait(self, beyond: int = 0) -> None:
        """Until there are more than `beyond` items."""
        while len(self.items) <= beyond:
            self.ready.clear()
            await self.ready.wait()

    async def get(self) -> Item:
        await self.wait()
        return self.items.popleft()


class EchoSwallow:
    """Drops a process's echo of the lines it was given (vtysh over a pipe prints `prompt line`),
    since the client's line editor already showed them."""

    def __init__(self) -> None:
        self.expected: collections.deque[str] = collections.deque()
        self.buf = ""

    def expect(self, line: str) -> None:
        self.expected.append(line + "\n")

    def feed(self, text: str) -> str:
        self.buf += text
        out: list[str] = []
        while self.expected:
            nl = self.buf.find("\n")
            if nl < 0:
                if len(self.buf) > 65536:
                    break
                return "".join(out)
            line, self.buf = self.buf[:nl + 1], self.buf[nl + 1:]
            if line.endswith(self.expected[0]):
                line = line[:-len(self.expected[0])]
                self.expected.popleft()
            out.append(line)
        out.append(self.buf)
        self.buf = ""
        return "".join(out)


class Session:
    """One SSH session on one switch."""

    def __init__(self, process: Any, switch: Switch, user: str, pool: Executor | None = None,
                 services: Services | None = None) -> None:
        self.process, self.switch, self.user = process, switch, user
        self.pool = pool   # the switch's own threads for blocking work (None: asyncio's shared ones)
        self.tty = process.get_terminal_type() is not None
        self.inbox = Inbox()
        self.view = SwitchView(switch.name, switch.rundir, services=services)
        self.hostname = switch.name   # DEVICE_METADATA's, read again before each prompt (hostname_now)
        self.root = self.root_home = False
        self.mode = "shell"          # shell, sonic-cli, redis-cli
        self.klish = klish.Klish()
        self.redis_db = 0
        self.status = 0
        self.closed = False

    # -- input and output -------------------------------------------------------------------

    async def _read(self) -> None:
        while True:
            try:
                line = await self.process.stdin.readline()
            except (asyncssh.BreakReceived, asyncssh.SignalReceived):
                self.inbox.put(Signal.BREAK)
                continue
            except asyncssh.TerminalSizeChanged:
                continue
            except (asyncssh.Error, OSError):
                self.inbox.put(Signal.EOF)
                return
            if not line:
                self.inbox.put(Signal.EOF)
                return
            self.inbox.put(line.rstrip("\r\n"))

    def write(self, out: str, err: str = "") -> None:
        """Output as a terminal shows it (one stream, the line editor adds the \\r), or, without a
        terminal, standard output and standard error apart."""
        if self.tty:
            text = out + err
            if text:
                self.process.stdout.write(text)
        else:
            if out:
                self.process.stdout.write(out)
            if err:
                self.process.stderr.write(err)

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the switch's own threads: a switch whose redis or FRR is slow (its `show`
        commands waiting) holds its own sessions back, not other switches' (asyncio's shared pool
        has 6 threads on 2 CPUs)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(fn, *args))

    async def drained(self) -> None:
        """Until the client has taken what was written (SSH flow control): a command's output is read
        from it no faster than the client reads it, so it does not pile up in the agent."""
        with contextlib.suppress(asyncssh.Error, OSError):
            await self.process.stdout.drain()
            if not self.tty:
                await self.process.stderr.drain()

    def show(self, output: Output) -> int:
        self.write(output.out, output.err)
        return output.status

    async def hostname_now(self) -> str:
        """The switch's hostname as it is now (a Set may have changed DEVICE_METADATA's): bash's `\\h`
        and KLISH's prompt show the system's, which SONiC's hostname-config keeps equal to it."""
        with contextlib.suppress(Exception):   # the switch's redis gone: the name it had
            self.hostname = await self.blocking(self.view.hostname)
        return self.hostname

    def prompt(self) -> str:
        if self.mode == "sonic-cli":
            return self.klish.prompt(self.hostname)
        if self.mode == "redis-cli":
            return f"127.0.0.1:6379{f'[{self.redis_db}]' if self.redis_db else ''}> "
        if self.root:
            return f"root@{self.hostname}:{'~' if self.root_home else '/home/' + self.user}# "
        return f"{self.user}@{self.hostname}:~$ "

    # -- the session ----------------------------------------------------------------------------

    async def run(self) -> None:
        reader = asyncio.create_task(self._read())
        try:
            if self.process.command is not None:   # ssh host "show version"
                await self.guarded(self.process.command)
                if not self.closed and (self.mode != "shell" or self.root):
                    await self.loop()
            else:
                self.write(MOTD)
                await self.loop()
        finally:
            reader.cancel()
        self.process.exit(self.status)

    async def loop(self) -> None:
        while not self.closed:
            if self.tty:
                if not self.switch.sonic:
                    await self.hostname_now()
                self.write(self.prompt())
            item = await self.inbox.get()
            if item is Signal.EOF:   # the end of the client's input: the session ends
                self.write("logout\n" if self.tty else "")
                return
            if item is Signal.BREAK:
                if self.tty:
                    self.process.channel.clear_input()
                    self.write("^C\n")
                self.status = 130
                continue
            await self.guarded(item)

    async def guarded(self, line: str) -> None:
        """One line; a failure of the switch's parts (its redis gone, ...) is reported, the session stays."""
        try:
            await self.line(line)
        except Exception as exc:
            log.exception("%s: SSH command %r failed", self.switch.name, line)
            self.status = self.show(Output(err=f"-bash: {(line.split() or [''])[0]}: {exc}\n", status=1))

    async def line(self, line: str) -> None:
        if self.mode == "sonic-cli":
            self.klish, output = await self.blocking(klish.handle, self.view, self.klish, line)
            self.status = self.show(output)
            if self.klish.left:
                self.mode, self.klish = "shell", klish.Klish()
            return
        if self.mode == "redis-cli":
            action = translate_redis(line, self.switch, self.redis_db, self.tty)
            if isinstance(action, Enter):
                self.redis_db = action.db
                self.status = self.show(Output(out="OK\n"))
            elif isinstance(action, Exit):
                self.mode = "shell"
            else:
                self.status = await self.perform(action, ())
            return
        piped = translate(line, self.switch, self.root, self.tty)
        action, filters = (piped.action, piped.filters) if isinstance(piped, Piped) else (piped, ())
        self.status = await self.perform(action, filters)

    async def perform(self, action: Any, filters: tuple[Filter, ...]) -> int:
        if isinstance(action, Exit):
            if self.root:
                self.root = False
            else:
                self.closed = True
            return 0
        if isinstance(action, Enter):
            if action.mode == "root":
                self.root, self.root_home = True, action.home
            else:
                self.mode, self.redis_db, self.klish = action.mode, action.db, klish.Klish()
            return 0
        capture = bool(filters)
        if isinstance(action, Text):
            output = action.output
        elif isinstance(action, Show):
            output = await self.blocking(run_show, self.view, list(action.args))
        elif isinstance(action, CounterTool):
            output = await self.blocking(run_tool, self.view, action.tool, list(action.args))
        elif isinstance(action, Config):
            output = await self.config(action)
        elif isinstance(action, DbCli):
            output = await self.blocking(self.db_cli, list(action.args))
        elif isinstance(action, Clock):
            output = run_date(list(action.args)) if action.tool == "date" else \
                await self.blocking(run_uptime, list(action.args), self.switch.rundir)
        elif isinstance(action, ReadFile):
            output = await self.blocking(read_file, action.path, self.switch.rundir)
        elif isinstance(action, Hostname):
            output = Output(out=f"{await self.hostname_now()}\n")
        elif isinstance(action, Run):
            if action.vtysh:
                await self.blocking(self.view.vtysh_hostname)
            output = await self.run_process(functools.partial(LocalProcess.start, action.argv, self.env()),
                                            capture, vtysh=action.vtysh)
        elif isinstance(action, InContainer):
            output = await self.run_process(functools.partial(ContainerProcess.start, action.container,
                                                              action.line), capture)
        else:
            raise TypeError(f"unknown action {action!r}")
        return self.show(filtered(output, filters))

    def env(self) -> dict[str, str]:
        return {**CLEAN_ENV, "HOME": str(self.switch.rundir), "TERM": "dumb", "COLUMNS": "512"}

    def db_cli(self, args: list[str]) -> Output:
        db = SonicRedis(unix_socket=socket_path(self.switch.rundir))
        try:
            code, text = db_cli(db, args)
        finally:
            db.close()   # its connection goes now, not when the collector finds it
        return Output(out=text) if code == 0 else Output(err=text, status=code)

    async def config(self, action: Config) -> Output:
        request = action.request
        if request.question is not None:
            self.write(f"{request.question} [y/N]: ")
            item = await self.inbox.get()
            if not isinstance(item, str) or item.strip().lower() not in ("y", "yes"):
                if item is Signal.BREAK and self.tty:
                    self.write("^C\n")
                return Output(err="Aborted!\n", status=1)
        return await self.blocking(config_cli.execute, self.view, request, self.user)

    async def run_process(self, start: Callable[[], Any], capture: bool, vtysh: bool = False) -> Output:
        """Run a process to its end: its output shown (or kept, for filters), typed lines fed to it
        (vtysh: checked first), ^C passed on as SIGINT."""
        try:
            proc: Process = await start()
        except Exception as exc:  # the Docker engine gone, a missing binary: say it, keep the session
            return Output(err=f"-bash: {exc}\n", status=126)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        echo = EchoSwallow() if vtysh else None
        kept: list[str] = []
        kept_size = 0

        async def pump() -> None:
            nonlocal kept_size
            while True:
                chunk = await proc.read()
                text = decoder.decode(chunk, final=not chunk)
                if echo is not None:
                    text = echo.feed(text)
                if capture:
                    kept_size += len(text)
                    if kept_size > MAX_FILTERED:   # `ping ... | grep x` runs until ^C: its output is not kept whole
                        proc.kill()
                        kept.append(f"\n-bash: output over {MAX_FILTERED >> 20} MiB for '|': command stopped\n")
                        return
                    kept.append(text)
                elif text:
                    self.write(text)
                    await self.drained()
                if not chunk:
                    return

        output = asyncio.create_task(pump())
        interactive = vtysh or isinstance(proc, ContainerProcess)
        ahead = 0   # typed-ahead items at the front of the inbox: the shell's, after this command
        while not output.done():
            waiter = asyncio.create_task(self.inbox.wait(ahead))
            await asyncio.wait({output, waiter}, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if self.process.channel.is_closing():   # the client went away: so does its command
                proc.kill()
                break
            while len(self.inbox.items) > ahead:
                item = self.inbox.items[ahead]
                if item is Signal.BREAK:      # ^C: SIGINT, and the typed-ahead input is dropped
                    for _ in range(ahead + 1):
                        self.inbox.items.popleft()
                    ahead = 0
                    proc.interrupt()
                elif not interactive or item is Signal.EOF:
                    if item is Signal.EOF:
                        proc.close_stdin()
                    ahead += 1
                else:
                    del self.inbox.items[ahead]
                    line = str(item)
                    why = refusal(line) if vtysh else None
                    if why is not None:
                        self.write(f"% {why}\n")
                        line = ""
                    if echo is not None:
                        echo.expect(line)
                    proc.write((line + "\n").encode())
        status = await proc.wait()
        output.cancel()
        return Output(out="".join(kept), status=status)


def filtered(output: Output, filters: tuple[Filter, ...]) -> Output:
    """`output` through the `|` stages (bash: the status is the last stage's)."""
    if not filters:
        return output
    text, status = output.out, output.status
    try:
        for stage in filters:
            text, status = stage.apply(text)
    except FilterError as exc:
        return Output(err=output.err + f"{exc}\n", status=2)
    return Output(out=text, err=output.err, status=status)


def _handler(switch: Switch, username: str, services: Services | None = None) -> Callable[[Any], Any]:
    pool = ThreadPoolExecutor(max_workers=SWITCH_THREADS, thread_name_prefix=f"ssh-{switch.name}")

    async def handle(process: Any) -> None:
        if process.subsystem:   # sftp and the like: not on this switch
            process.exit(1)
            return
        await Session(process, switch, username, pool, services).run()

    return handle


def prepare_switch(switch: Switch) -> None:
    """vtysh's config in the switch's run directory: integrated (write memory writes frr.conf
    there) and the switch's name as vtysh's prompt (rewritten with DEVICE_METADATA's hostname before
    each vtysh, SwitchView.vtysh_hostname)."""
    if not switch.sonic and switch.rundir.is_dir():
        conf = switch.rundir / VTYSH_CONF
        if not conf.exists():
            conf.write_text(vtysh_conf(switch.name))


def start(switches: list[AgentSwitch], username: str, password: str, port: int, host_key: Path,
          services: Mapping[str, Services] | None = None) -> None:
    """Start the SSH listeners in a background thread; returns once they listen. `services`: by switch,
    how its services restart around a new CONFIG_DB (`config reload`), for the switches the agent runs."""
    if not host_key.exists():
        write_private(host_key, asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    errors: list[BaseException] = []

    async def listen_all() -> None:
        for sw in switches:
            switch = Switch.from_settings(sw)
            prepare_switch(switch)
            bind = functools.partial(_listening_socket, str(sw.mgmt), port)
            sock = run_in_netns(sw.netns, bind) if sw.netns else bind()
            logins = SshLogins()  # per switch: one switch's attacker does not slow another's logins
            await asyncssh.listen(sock=sock, server_host_keys=[str(host_key)], server_version=SSH_VERSION,
                                  server_factory=functools.partial(_Server, username, password, logins),
                                  login_timeout=LOGIN_GRACE_S,
                                  process_factory=_handler(switch, username, (services or {}).get(sw.name)),
                                  encoding="utf-8", line_editor=True, allow_scp=False,
                                  agent_forwarding=False, x11_forwarding=False)

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(listen_all())
        except BaseException as exc:
            errors.append(exc)
            ready.set()
            return
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True, name="sshd").start()
    ready.wait(30)
    if errors:
        raise errors[0]


def _listening_socket(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    sock.setblocking(False)
    return sock
