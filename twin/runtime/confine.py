"""Run an imported host's `exec:` lines confined, as containerlab runs them inside the node's container.

A line runs as `ip netns exec <node's namespace> bwrap ... -- sh -c LINE` (Debian's bubblewrap):

- network: the node's namespace only (its links, routes and net.* sysctls);
- files: the host's file system read-only; writable are the node's run directory (the working
  directory, e.g. /run/twin/<lab>/nodes/<node>/), a private /tmp and /run, and /proc/sys/net (the
  namespace's own sysctls); /proc is the sandbox's own and read-only otherwise, /dev a minimal one;
- processes: a PID namespace of its own (host processes are invisible, so none can be signalled),
  its own hostname (the node's), IPC and cgroup namespaces; everything it started ends with it;
- privileges: root, with only CAP_NET_ADMIN (ip addr/route/link, sysctl -w net.*), CAP_NET_RAW
  (ping, arping) and CAP_NET_BIND_SERVICE; no CAP_SYS_ADMIN, so nothing can be remounted writable;
- environment: PATH and HOME only.

A private /run also hides the host's daemon sockets (Docker's, systemd's, D-Bus'), which a read-only
mount would not: connecting to a socket is not a write to the file system.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from twin.model.errors import TwinError

CAPABILITIES = ("CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_NET_BIND_SERVICE")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOW = "confined: its namespace, host files read-only"  # what `twin up` says of each line (README: the rest)


def bwrap() -> str:
    """The bubblewrap binary; TwinError when it is not installed."""
    found = shutil.which("bwrap")
    if found is None:
        raise TwinError("an imported host has exec: lines, which twin runs confined with bubblewrap, and bwrap is "
                        "not installed: run 'bash scripts/install-deps.sh' (it installs it) or "
                        "'apt-get install bubblewrap'")
    return found


def confined_argv(netns: str, rundir: Path, hostname: str, line: str) -> list[str]:
    """The argv that runs `line` with `sh -c` inside namespace `netns`, confined (see the module)."""
    run = str(rundir)
    argv = ["ip", "netns", "exec", netns, bwrap(),
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc", "--remount-ro", "/proc", "--bind", "/proc/sys/net", "/proc/sys/net",
            "--tmpfs", "/tmp", "--tmpfs", "/run",
            "--bind", run, run, "--chdir", run,
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", hostname,
            "--die-with-parent", "--new-session",
            "--clearenv", "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp",
            "--cap-drop", "ALL"]
    for cap in CAPABILITIES:
        argv += ["--cap-add", cap]
    return [*argv, "--", "sh", "-c", line]
