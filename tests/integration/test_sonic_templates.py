"""`twin up --sonic-templates`: switches render FRR with a SONiC release's own templates, and follow CONFIG_DB."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from labtools import netns_exec, running_lab

from twin.host.reference import reference_path

TEMPLATES = reference_path("sonic-frr-templates") or Path("/nonexistent")

pytestmark = pytest.mark.skipif(not (TEMPLATES / "usr/share/sonic/templates").is_dir(),
                                reason="SONiC's templates not found: set TWIN_SONIC_REFERENCE")


def _running(lab: str, node: str) -> str:
    return subprocess.run(["vtysh", "--vty_socket", f"/run/twin/{lab}/nodes/{node}", "-c", "show running-config"],
                          capture_output=True, text=True).stdout


def test_a_lab_rendered_with_sonic_templates_comes_up_and_follows_config_db() -> None:
    with running_lab("tests/integration/data/mini.yaml", "tp", "--sonic-templates", str(TEMPLATES)) as name:
        conf = Path(f"/run/twin/{name}/nodes/leaf1/frr.conf").read_text()
        assert "sonic-cfggen" in conf or "template:" in conf, "rendered by SONiC's own templates"
        netns_exec(name, "leaf1", "redis-cli", "-n", "4", "hset", "BGP_NEIGHBOR|default|10.0.0.64", "name", "via-tpl")
        deadline = time.monotonic() + 20
        while "neighbor 10.0.0.64 description via-tpl" not in _running(name, "leaf1"):
            assert time.monotonic() < deadline, "the change never reached FRR"
            time.sleep(0.2)
