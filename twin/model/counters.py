"""The counters of the links a drill touched, as the lab's Prometheus (`twin telemetry`) kept them over
the drill's window: what `twin drill --report` plots beside its timeline. Times are unix seconds;
each series is a list of [t, value]."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Series = list[list[float]]


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PortCounters(Frozen):
    """One end of a link: a switch's port, its rates and its oper status (1 up, 0 down)."""

    switch: str
    port: str
    peer: str = ""
    peer_port: str = ""
    in_bps: Series = []
    out_bps: Series = []
    oper_status: Series = []


class LinkCounters(Frozen):
    """A link the drill touched: its switch ends (a server's end has no counters)."""

    name: str                      # leaf1:Ethernet128--spine1:Ethernet0
    ends: list[PortCounters]


class DrillInstant(Frozen):
    """An instant of the drill on the lab's event log: inject, detect, converge, restore, restore_detect, recovered."""

    t: float
    phase: str
    kind: str
    target: str


class DrillCounters(Frozen):
    lab: str
    drill: str
    run: str                       # the drill's run on the lab's event log (scenario@start)
    start: float                   # the window read
    end: float
    step_s: float                  # the range query's step
    rate_window_s: float           # rate() over this many seconds
    instants: list[DrillInstant]
    links: list[LinkCounters]      # at most a few: the first links the drill touched
    links_touched: int             # how many it touched in all
