"""A command of the switch's shell while it runs: its output, its input, ^C.

`LocalProcess` is one of the shell's fixed argv (ping, vtysh, ...) on the host, in a session of its
own so ^C reaches it and what it started; `twin.switch.cli.container_exec.ContainerProcess` is a line
run inside the switch's container. Both are a `Process`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from typing import Protocol


class Process(Protocol):
    async def read(self) -> bytes: ...          # b"" once the output ended

    def write(self, data: bytes) -> None: ...

    def close_stdin(self) -> None: ...

    def interrupt(self) -> None: ...

    def kill(self) -> None: ...          # the session is gone: stop it and what it started

    async def wait(self) -> int: ...


class LocalProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, argv: tuple[str, ...], env: Mapping[str, str]) -> LocalProcess:
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT, env=dict(env),
                                                    start_new_session=True)
        return cls(proc)

    async def read(self) -> bytes:
        assert self.proc.stdout is not None
        return await self.proc.stdout.read(65536)

    def write(self, data: bytes) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.write(data)

    def close_stdin(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    def interrupt(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGINT)

    async def wait(self) -> int:
        code = await self.proc.wait()
        return 128 - code if code < 0 else code

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
