"""The kernel's neighbour (ARP/NDP) table limits are global across namespaces: size them, and
put them back when the last lab goes down.

net.ipv4/ipv6.neigh.default.gc_thresh1/2/3 live in the host's (initial) network namespace only,
so raising them changes the host. Before twin first raises one, it records the value it found
and the value it set in `<run root>/host-sysctls.json` (twin.host.rundir.run_root); when no
lab is left, each is written back to what it was, unless someone changed it since twin set it
(then it is left alone and `twin down` says so). Both sides hold a lock on the run root, so
a lab coming up while the last one goes down never loses the record.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypedDict

from twin.host.rundir import known_labs, run_root
from twin.model.plan import Plan

_KEYS = ("gc_thresh1", "gc_thresh2", "gc_thresh3")
RECORD = "host-sysctls.json"
LOCK = ".host-sysctls.lock"
PROC_SYS = Path("/proc/sys")


class Changed(TypedDict):
    original: int   # what the host had before twin raised it
    set: int        # what twin last wrote


def needed_entries(plan: Plan) -> int:
    """Each link end learns its peer (v4 and v6 link-local); each switch its management peer."""
    return 4 * len(plan.links) + 4 * len(plan.switches)


def sysctl_path(name: str) -> Path:
    """`net.ipv4.neigh.default.gc_thresh1` -> /proc/sys/net/ipv4/neigh/default/gc_thresh1."""
    return PROC_SYS.joinpath(*name.split("."))


def size_for(plan: Plan) -> list[str]:
    """Raise (never lower) net.ipv4/ipv6.neigh.default.gc_thresh1/2/3, recording what the host had
    first; say what changed."""
    need = needed_entries(plan)
    want = {"gc_thresh1": need, "gc_thresh2": 2 * need, "gc_thresh3": 4 * need}
    notes = []
    with _locked():
        record = _load()
        for family in ("ipv4", "ipv6"):
            for key in _KEYS:
                name = f"net.{family}.neigh.default.{key}"
                current = _read(name)
                if current >= want[key]:
                    continue
                record[name] = Changed(original=record[name]["original"] if name in record else current,
                                       set=want[key])
                _save(record)  # before the write: a crash in between still leaves the original on record
                _write(name, want[key])
                notes.append(f"raised {name} from {current} to {want[key]} for {len(plan.links)} links (the table "
                             f"is shared by all namespaces; put back to {record[name]['original']} when the last "
                             "lab goes down)")
    return notes


def restore_when_idle(leaving: str) -> list[str]:
    """When no lab but `leaving` is left, put back every sysctl twin raised; say what was done
    (one line for `twin down`'s list of what it removed)."""
    if not (run_root() / RECORD).exists():
        return []
    with _locked():
        if any(lab != leaving for lab in known_labs()):
            return []
        record = _load()
        done = []
        for name, change in sorted(record.items()):
            current = _read(name)
            if current == change["set"]:
                _write(name, change["original"])
                done.append(f"{name} back to {change['original']}")
            else:
                done.append(f"{name} left at {current} (changed since twin set it to {change['set']}; it was "
                            f"{change['original']} before twin)")
        (run_root() / RECORD).unlink(missing_ok=True)
    return [f"the host's sysctls twin raised ({'; '.join(done)})"] if done else []


@contextmanager
def _locked() -> Iterator[None]:
    root = run_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _load() -> dict[str, Changed]:
    """The record; {} when there is none, or none readable (then nothing can be put back)."""
    try:
        raw = json.loads((run_root() / RECORD).read_text())
        return {str(name): Changed(original=int(v["original"]), set=int(v["set"])) for name, v in raw.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _save(record: dict[str, Changed]) -> None:
    path = run_root() / RECORD
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def _read(name: str) -> int:
    return int(sysctl_path(name).read_text())


def _write(name: str, value: int) -> None:
    sysctl_path(name).write_text(str(value))
