"""Wait for a file to appear in a directory, told by the kernel (inotify) instead of looked for.

The lab's agent waits through a whole launch for `twin up` to mark it (twin.switch.agent_progress):
looking every 20 ms through tenacity cost it 10 ms of CPU every second, 2 CPU-s of a 64 x 128
launch that needs both CPUs. Here the wait sleeps in poll() until the directory changes, and looks
again every RECHECK_S all the same, in case the directory was made anew under the same path.
"""

from __future__ import annotations

import math
import select
import time
from pathlib import Path

from asyncinotify import Inotify, Mask

RECHECK_S = 1.0
# made by open(O_CREAT) or renamed there; the directory itself removed or moved away
CHANGES = Mask.CREATE | Mask.MOVED_TO | Mask.DELETE_SELF | Mask.MOVE_SELF | Mask.ONLYDIR


def await_file(directory: Path, name: str, timeout: float = math.inf, recheck: float = RECHECK_S) -> bool:
    """Until `directory/name` exists (True); False when `directory` went away first, or after `timeout` s."""
    target = directory / name
    deadline = time.monotonic() + timeout
    with Inotify(sync_timeout=0.0) as inotify:   # non-blocking reads: poll() does the waiting
        try:
            inotify.add_watch(directory, CHANGES)
        except OSError:   # no such directory (any more)
            return target.exists()
        poller = select.poll()   # not select(): an agent holds descriptors past 1024
        poller.register(inotify.fd, select.POLLIN)
        while True:
            if target.exists():
                return True
            left = deadline - time.monotonic()
            if not directory.is_dir() or left <= 0:
                return False
            poller.poll(1000 * min(recheck, left))
            while inotify.sync_get() is not None:   # what woke it: looked at above, on the next turn
                pass
