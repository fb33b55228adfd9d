"""Checks: a typed Input, a declaration of what to read, and `evaluate` that only judges.

Collection (I/O) lives in twin/checks/collect_local.py; a check never reads the network itself, so it
can be unit-tested on canned FRR and kernel JSON. A bug in a check becomes an `error` result.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from twin.model.results import CheckResult, ItemResult, summarize

# What a check can ask the collector for, per node.
Source = Literal["bgp_summary", "fib", "ping", "ospf_neighbors", "bfd_sessions", "port_table", "daemons", "agent",
                 "frr_config", "interfaces", "df_ping"]
Outputs = dict[str, dict[str, Any]]  # node -> source -> parsed output


class CheckInput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


InputT = TypeVar("InputT", bound=CheckInput)


class Check(Generic[InputT]):
    name: ClassVar[str]
    description: ClassVar[str]
    needs: ClassVar[tuple[Source, ...]]

    # The field of `inputs` keyed (or listed) by the nodes the check judges, each on its own outputs:
    # what `narrowed` keeps. None: the check judges nodes together and is not narrowed.
    per_node: ClassVar[str | None] = None

    def __init__(self, inputs: InputT) -> None:
        self.inputs = inputs

    def narrowed(self, nodes: Collection[str]) -> Check[InputT]:
        """This check judging only `nodes` (itself when it is not per node): what a health poll asks
        of the batch it just read. Judged whole, a 64 x 128 fabric's checks made 16,384 session items
        and 16,256 prefix items for every batch of every poll, tens of ms each time."""
        if self.per_node is None:
            return self
        wanted = set(nodes)
        value = getattr(self.inputs, self.per_node)
        kept = {k: v for k, v in value.items() if k in wanted} if isinstance(value, dict) \
            else [n for n in value if n in wanted]
        return type(self)(self.inputs.model_copy(update={self.per_node: kept}))

    def nodes(self) -> list[str]:
        """The nodes whose outputs this check reads."""
        raise NotImplementedError

    def sources(self, node: str) -> tuple[Source, ...]:
        """What is read of `node`: every source of `needs` unless a check reads its nodes differently
        (a link's switch end in STATE_DB, its server end in the server's kernel)."""
        return self.needs

    def argument(self, node: str, source: Source) -> Any:
        """What the reader of `source` is given for `node` (whom a server pings), None for most."""
        return None

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        raise NotImplementedError

    def measurements(self, outputs: Outputs) -> dict[str, float]:
        return {}

    def evaluate(self, outputs: Outputs) -> CheckResult:
        try:
            return summarize(self.name, self.description, self.evaluate_items(outputs),
                             self.measurements(outputs))
        except Exception as exc:  # a bug in a check is a result, not a traceback
            return CheckResult(name=self.name, description=self.description, status="error",
                               items=[ItemResult(subject="(check)", status="error",
                                                 message=f"{type(exc).__name__}: {exc}")])
