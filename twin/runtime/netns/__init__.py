"""The embedded default runtime: one network namespace per node, veth pairs, real FRR (runtime.py)."""

from twin.runtime.netns.runtime import NetnsRuntime

__all__ = ["NetnsRuntime"]
