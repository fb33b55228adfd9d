"""The clab runtime: containerlab deploys the lab (deploy.py) from twin's containerlab topology
(topology.py), run with containerlab's command lines (command.py)."""

from twin.runtime.clab.deploy import ClabRuntime

__all__ = ["ClabRuntime"]
