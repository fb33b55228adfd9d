"""Run a function in a thread that has entered another network namespace.

Linux's setns(CLONE_NEWNET) changes only the calling thread, and a socket stays in the
namespace it was created in: so one process can listen on every switch's management address.
/proc/sys/net, too, is that of the task that opens it: a node's sysctls are written from such a
thread (twin.host.shell.sysctl), with no `ip netns exec` process.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
_CLONE_NEWNET = 0x40000000


def run_in_netns(netns: str, fn: Callable[[], T]) -> T:
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
            try:
                if libc.setns(fd, _CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into {netns} failed")
            finally:
                os.close(fd)
            result["value"] = fn()
        except BaseException as exc:
            result["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in result:
        raise result["error"]
    value: T = result["value"]
    return value
