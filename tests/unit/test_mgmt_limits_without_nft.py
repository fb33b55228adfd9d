"""twin.switch.access.mgmt_nft without nft: every switch in a namespace of twin's is reported without
its limits, the containers' and SONiC images' switches are not counted (the tables themselves:
tests/integration/test_mgmt_nft.py)."""

from __future__ import annotations

import pytest

from twin.model.agent import AgentSwitch
from twin.switch.access import mgmt_nft


def test_without_nft_every_switch_of_twins_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mgmt_nft.shutil, "which", lambda name: None)
    applied = mgmt_nft.apply([AgentSwitch(name="leaf1", netns="tw.nolab.leaf1"),
                              AgentSwitch(name="vs1", netns=None),
                              AgentSwitch(name="vs2", netns="tw.nolab.vs2", backend="sonic-redis")], [8080])
    assert applied.limited == [] and applied.failed == ["leaf1: nft is not installed"]
    assert applied.own == 1
