"""RoCE rides a lossless queue on every switch port given QoS: the lab's `roce.compute_dscp` goes, by the
switch's running DSCP_TO_TC_MAP and TC_TO_QUEUE_MAP, to a queue PFC makes lossless (PORT_QOS_MAP
`pfc_enable`). The switches' data planes classify by those same maps (twin.switch.config.qdisc), so a
port that fails here counts RoCE's packets in a lossy queue. Judged from the running configs the catalog
is given, as `twin validate` judges files (twin.stages.validate.qos); nothing is read."""

from __future__ import annotations

from collections.abc import Mapping

from twin.checks.base import Check, CheckInput, Outputs
from twin.model.config_db import ConfigDb
from twin.model.results import ItemResult
from twin.stages.port_qos import lossy_roce
from twin.stages.validate.qos import lossy_roce_groups, lossy_roce_text


class RoceQueueInput(CheckInput):
    dscp: int
    found: dict[str, list[str]]       # switch -> what lands in a lossy queue, in words
    judged: list[str]                 # the switches with ports given QoS


class RoceInLosslessQueue(Check[RoceQueueInput]):
    name = "roce-lossless-queue"
    description = "RoCE's DSCP goes to a lossless (PFC) queue on every port given QoS"
    needs = ()

    def nodes(self) -> list[str]:
        return []

    def evaluate_items(self, outputs: Outputs) -> list[ItemResult]:
        failed = [ItemResult(subject=switch, status="failure", message=line)
                  for switch, lines in sorted(self.inputs.found.items()) for line in lines]
        passed = [ItemResult(subject=switch, status="success",
                             message=f"RoCE (DSCP {self.inputs.dscp}) goes to a lossless queue on every port")
                  for switch in self.inputs.judged if switch not in self.inputs.found]
        return failed + passed


def roce_queue_check(configs: Mapping[str, ConfigDb] | None, dscp: int | None) -> RoceInLosslessQueue | None:
    """The check, when the lab names RoCE's DSCP and some switch gives its ports QoS."""
    if dscp is None or not configs:
        return None
    judged = sorted(s for s, db in configs.items() if db.get("PORT_QOS_MAP"))
    if not judged:
        return None
    found = {switch: [lossy_roce_text(dscp, group) for group in lossy_roce_groups(lossy_roce(configs[switch], dscp))]
             for switch in judged}
    return RoceInLosslessQueue(RoceQueueInput(dscp=dscp, found={s: lines for s, lines in found.items() if lines},
                                              judged=judged))
