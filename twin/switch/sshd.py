"""SSH on every switch's management address (asyncssh), serving the SONiC-like shell.

Runs inside the agent process: one asyncio loop, one listener per switch, each listening
socket created inside that switch's namespace. Password authentication only.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import threading
from pathlib import Path
from typing import Any

import asyncssh

from twin.switch.netns_socket import in_netns
from twin.switch.shell import translate


class _Server(asyncssh.SSHServer):
    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == self.username and password == self.password


async def _run(cmd_line: str, name: str, netns: str, rundir: Path, process: Any) -> int:
    cmd = translate(cmd_line, netns, rundir)
    if cmd.text is not None:
        process.stdout.write(cmd.text.replace("\n", "\r\n") if process.get_terminal_type() else cmd.text)
        return 0
    if cmd.argv is None:
        return 0
    proc = await asyncio.create_subprocess_exec(*cmd.argv, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    text = out.decode(errors="replace")
    process.stdout.write(text.replace("\n", "\r\n") if process.get_terminal_type() else text)
    return proc.returncode or 0


def _handler(name: str, netns: str, rundir: Path, username: str) -> Any:
    prompt = f"{username}@{name}:~$ "

    async def handle(process: Any) -> None:
        if process.command:  # ssh host "show version"
            process.exit(await _run(process.command, name, netns, rundir, process))
            return
        process.stdout.write(f"Welcome to {name} (twin, SONiC-like shell; FRR via vtysh)\r\n{prompt}")
        try:
            async for line in process.stdin:
                cmd = translate(line, netns, rundir)
                if cmd.exit:
                    break
                await _run(line, name, netns, rundir, process)
                process.stdout.write(prompt)
        except asyncssh.BreakReceived:
            pass
        process.exit(0)

    return handle


def start(switches: list[dict[str, Any]], username: str, password: str, port: int, host_key: Path) -> None:
    """Start the SSH listeners in a background thread; returns once they listen."""
    if not host_key.exists():
        host_key.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
        host_key.chmod(0o600)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    errors: list[BaseException] = []

    async def listen_all() -> None:
        for sw in switches:
            sock = in_netns(sw["netns"], functools.partial(_listening_socket, sw["mgmt"], port))
            await asyncssh.listen(sock=sock, server_host_keys=[str(host_key)],
                                  server_factory=lambda: _Server(username, password),
                                  process_factory=_handler(sw["name"], sw["netns"], Path(sw["rundir"]), username),
                                  encoding="utf-8", line_editor=True)

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
