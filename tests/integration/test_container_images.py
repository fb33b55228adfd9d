"""Runtimes that need what this machine may not have: containerlab, a docker-sonic-vs image.

Skipped with the reason where absent (no registry here serves either); run where present, e.g.
`TWIN_SONIC_IMAGE=docker-sonic-vs:202405 make test` after `docker load -i docker-sonic-vs.gz`.
"""

from __future__ import annotations

import json
import os

import pytest
from labtools import running_lab, twin, twin_json

from twin.host.dockerapi import LAB_LABEL, client

SONIC_IMAGE = os.environ.get("TWIN_SONIC_IMAGE", "docker-sonic-vs:latest")


@pytest.mark.needs_docker
@pytest.mark.needs_containerlab
def test_clab_runtime_brings_the_lab_up_and_down() -> None:
    with running_lab("tests/integration/data/mini.yaml", "c", "--runtime", "clab", check_clean=True) as name:
        status = twin_json("status", "--name", name)
        assert status["runtime"] == "clab" and status["healthy"] is True
        assert twin_json("verify", "--name", name)["passed"] is True
    assert not client().containers.list(all=True, filters={"label": f"{LAB_LABEL}={name}"})


@pytest.mark.needs_docker
@pytest.mark.needs_sonic_image
def test_sonic_vs_boots_and_answers_gnmi_over_its_redis() -> None:
    with running_lab("tests/integration/data/sonic-mini.yaml", "s", "--runtime", "docker", "--image", SONIC_IMAGE,
                     check_clean=True) as name:
        proc = twin("exec", "--name", name, "leaf1", "--", "vtysh", "-c", "show running-config")
        assert "router bgp" in proc.stdout
        verified = twin_json("verify", "--name", name)
        assert verified["passed"] is True, json.dumps(verified)[:2000]
        drill = twin_json("drill", "session-reset", "--name", name, check=False, timeout=180)
        assert drill["restored"] is True
