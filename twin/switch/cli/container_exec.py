"""A line of the switch's shell run inside the switch's container (docker and clab runtimes).

Through the Docker Engine API (`exec` of `bash -c LINE`, stdin attached, no tty): output arrives
in the API's multiplexed frames, typed lines go to its stdin, and ^C is a SIGINT to the exec'd
process and its descendants (the API gives its host pid). So `bash` on such a switch is the
container's bash, with the container's file system.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import socket
import struct
from pathlib import Path
from typing import Any


@functools.cache
def _api() -> Any:
    # imported here: the docker client added ~12 MiB to the gNMI agent and is needed only for containers
    import docker

    return docker.from_env(timeout=60).api


def container_argv(line: str) -> list[str]:
    """What runs in the container for one line."""
    return ["bash", "-c", line]


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc's children lists)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return found


class ContainerProcess:
    def __init__(self, exec_id: str, raw: socket.socket, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, keep: Any) -> None:
        self.exec_id, self.raw, self.reader, self.writer = exec_id, raw, reader, writer
        self._keep = keep  # the API's response: closing it would close the socket
        self._stdin_closed = False

    @classmethod
    async def start(cls, container: str, line: str) -> ContainerProcess:
        api = _api()
        exec_id = (await asyncio.to_thread(api.exec_create, container, container_argv(line), stdin=True,
                                           stdout=True, stderr=True, tty=False))["Id"]
        sock = await asyncio.to_thread(api.exec_start, exec_id, socket=True)
        raw: socket.socket = getattr(sock, "_sock", sock)
        raw.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=raw)
        return cls(exec_id, raw, reader, writer, sock)

    async def read(self) -> bytes:
        """The next frame's payload (stdout and stderr alike), b"" at the end."""
        try:
            header = await self.reader.readexactly(8)
            _, size = struct.unpack(">BxxxL", header)
            return await self.reader.readexactly(size) if size else await self.read()
        except (asyncio.IncompleteReadError, ConnectionError):
            return b""

    def write(self, data: bytes) -> None:
        if not self._stdin_closed:
            self.writer.write(data)

    def close_stdin(self) -> None:
        if not self._stdin_closed:
            self._stdin_closed = True
            with contextlib.suppress(OSError):
                self.raw.shutdown(socket.SHUT_WR)

    def interrupt(self) -> None:
        self._signal(signal.SIGINT)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, sig: signal.Signals) -> None:
        """`sig` to the exec'd process and everything it started (host pids: the API gives them)."""
        import docker.errors

        try:
            pid = int(_api().exec_inspect(self.exec_id).get("Pid") or 0)
        except docker.errors.DockerException:
            return
        if pid > 0:
            for each in descendants(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(each, sig)

    async def wait(self) -> int:
        for _ in range(200):
            info = await asyncio.to_thread(_api().exec_inspect, self.exec_id)
            if not info.get("Running"):
                self.writer.close()
                return int(info.get("ExitCode") or 0)
            await asyncio.sleep(0.05)
        self.writer.close()
        return 1
