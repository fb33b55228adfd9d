"""The what-if of hash seeds: the kernel's `net.ipv4.fib_multipath_hash_seed`, per switch namespace.

A seed of 0 (the default) makes each namespace hash with a random seed of its own, as switches from
different lots would. A real fabric often runs one seed everywhere (the vendor's default), and then
every tier makes the same choice for the same flow: polarization. The modes set, for the length of
one `twin traffic` run, and put back afterwards:
- kernel:     whatever the switches run (nothing is changed);
- same:       one seed on every switch;
- per-tier:   one seed per tier (every leaf alike, every spine alike);
- per-switch: a seed of its own on every switch, derived from its name (reproducible, unlike kernel).
"""

from __future__ import annotations

import subprocess
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.traffic.resolve import NodeArgv

SeedMode = Literal["kernel", "same", "per-tier", "per-switch"]
SEED_MODES: tuple[str, ...] = ("kernel", "same", "per-tier", "per-switch")
SYSCTL = "net.ipv4.fib_multipath_hash_seed"
SAME_SEED = 0x5EED


def seed_for(mode: SeedMode, switch: str, role: str) -> int | None:
    if mode == "kernel":
        return None
    if mode == "same":
        return SAME_SEED
    key = role if mode == "per-tier" else switch
    return zlib.crc32(key.encode()) or 1


def _sysctl(argv: NodeArgv, node: str, args: Sequence[str]) -> str:
    proc = subprocess.run(argv(node, ["sysctl", *args]), capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise TwinError(f"{node}: sysctl {' '.join(args)} failed: {proc.stderr.strip()} (the kernel's "
                        f"{SYSCTL} needs Linux 6.11 or newer)")
    return proc.stdout.strip()


@contextmanager
def hash_seeds(plan: Plan, argv: NodeArgv, mode: SeedMode) -> Iterator[dict[str, int]]:
    """Set every switch's seed as `mode` says; put each one back on the way out."""
    if mode == "kernel":
        yield {}
        return
    saved: dict[str, str] = {}
    chosen: dict[str, int] = {}
    try:
        for node in plan.switches:
            seed = seed_for(mode, node.name, node.role)
            if seed is None:
                continue
            saved[node.name] = _sysctl(argv, node.name, ["-n", SYSCTL])
            _sysctl(argv, node.name, ["-w", f"{SYSCTL}={seed}"])
            chosen[node.name] = seed
        yield chosen
    finally:
        for name, value in saved.items():
            _sysctl(argv, name, ["-w", f"{SYSCTL}={value}"])
