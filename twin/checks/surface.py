"""Nothing a switch runs is judged in silence: what its running CONFIG_DB holds that SONiC's routing
stack would act on and twin does not emulate (twin.model.routing_surface) fails `twin verify`, `ci`
and `rehearse`, entry by entry, unless the lab file accepts the table by name. Judged from the
running configs the catalog is given; nothing is read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.config_db import ConfigDb
from twin.model.results import ItemResult
from twin.model.routing_surface import not_emulated


class SurfaceInput(CheckInput):
    found: dict[str, list[str]]       # switch -> "TABLE|key field: not emulated (reason)"
    accepted: list[str]


class EverythingEmulated(Check[SurfaceInput]):
    name = "not-emulated"
    description = "every table and field SONiC's routing stack would act on is emulated, or accepted by the lab"
    needs = ()

    def nodes(self) -> list[str]:
        return []

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        items = [ItemResult(subject=switch, status="failure", message=line)
                 for switch, lines in sorted(self.inputs.found.items()) for line in lines]
        accepted = f" (accepted by the lab: {', '.join(self.inputs.accepted)})" if self.inputs.accepted else ""
        return items or [ItemResult(subject="fabric", status="success",
                                    message=f"nothing twin does not emulate{accepted}")]


def surface_check(configs: Mapping[str, ConfigDb] | None, accepted: Iterable[str] = ()) -> EverythingEmulated | None:
    if not configs:
        return None
    accepted = list(accepted)
    found = {switch: [str(item) for item in not_emulated(db, accepted)] for switch, db in configs.items()}
    return EverythingEmulated(SurfaceInput(found={s: lines for s, lines in found.items() if lines}, accepted=accepted))
