"""A switch's reboot runs SONiC's phases in order (twin.switch.restart.reboot): what stops during the
shutdown, when the management port goes down and comes back, and what the switch boots from."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from twin.model.lab import RebootSettings
from twin.switch.frr import frr_daemons
from twin.switch.frr.frr_daemons import FrrBoot
from twin.switch.restart import reboot as reboot_module
from twin.switch.restart.reboot import SwitchReboot


class _Daemon:
    name, netns, rundir = "leaf1", "tw.x.leaf1", Path("/nonexistent")
    templates = None

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ifmap: dict[str, str] = {}
        self.programmed: dict[str, Any] = {"DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}}


def _recording(monkeypatch: pytest.MonkeyPatch, timing: RebootSettings) -> tuple[SwitchReboot, list[str]]:
    events: list[str] = []
    reboot = SwitchReboot(_Daemon(), [], launch=lambda argv: None, timing=timing,  # type: ignore[arg-type]
                          sleep=lambda s: events.append(f"sleep {s:.0f}"))
    monkeypatch.setattr(reboot_module, "running_daemons", lambda rundir: ["zebra", "bgpd", "staticd"])
    for step in ("power_off", "stop_control_plane", "warm_boot", "boot", "mark_booted"):
        monkeypatch.setattr(reboot, step, lambda *args, _step=step: events.append(_step))
    def load_saved_config() -> dict[str, Any]:
        events.append("load_saved_config")
        return {}

    def management_down() -> list[str]:
        events.append("management_down")
        return ["default via x"]

    monkeypatch.setattr(reboot, "load_saved_config", load_saved_config)
    monkeypatch.setattr(reboot, "management_down", management_down)
    monkeypatch.setattr(reboot, "management_up", lambda routes: events.append(f"management_up {routes[0]}"))
    return reboot, events


def test_cold_reboot_stops_everything_then_goes_silent_then_boots_the_saved_config(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reboot, events = _recording(monkeypatch, RebootSettings(shutdown_s=5, boot_s=30))
    reboot.reboot("COLD")
    assert events == ["power_off", "sleep 5", "management_down", "sleep 30", "mark_booted", "load_saved_config", "boot",
                      "management_up default via x"]


def test_warm_reboot_keeps_the_data_plane_and_boots_the_running_config(monkeypatch: pytest.MonkeyPatch) -> None:
    reboot, events = _recording(monkeypatch, RebootSettings(shutdown_s=2, boot_s=12))
    reboot.reboot("WARM")
    assert events == ["stop_control_plane", "sleep 2", "management_down", "sleep 12", "mark_booted", "warm_boot",
                      "management_up default via x"]


def test_warm_stop_kills_zebra_then_bgpd_and_stops_the_rest(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    daemon = _Daemon()
    daemon.rundir = tmp_path
    for pid, name in ((11, "zebra"), (22, "bgpd"), (33, "staticd")):
        (tmp_path / f"{name}.pid").write_text(str(pid))
        (tmp_path / f"{name}.vty").write_text("")
    calls: list[tuple[str, list[int]]] = []
    monkeypatch.setattr(reboot_module, "kill_processes", lambda pids: calls.append(("kill", pids)))
    monkeypatch.setattr(reboot_module, "stop_processes", lambda pids: calls.append(("stop", pids)))
    SwitchReboot(daemon, [], launch=lambda argv: None).stop_control_plane(  # type: ignore[arg-type]
        ["zebra", "bgpd", "staticd"])
    assert calls == [("kill", [11, 22]), ("stop", [33])]
    assert not list(tmp_path.glob("*.vty"))


def test_warm_boot_starts_zebra_keeping_its_predecessors_routes(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """FRR boots from the running config, each daemon reading its file as it starts, zebra with -K."""
    daemon = _Daemon()
    daemon.rundir = tmp_path
    argvs: list[list[str]] = []
    monkeypatch.setattr(reboot_module, "render_frr", lambda config, templates: "hostname leaf1\n")
    monkeypatch.setattr(reboot_module, "prepare_boot", lambda rundir, frr, conf: FrrBoot(
        rundir, frr, [], {d: rundir / f"{d}.conf" for d in frr}, None))
    monkeypatch.setattr(frr_daemons, "wait_for_sockets", lambda *args, **kwargs: None)
    SwitchReboot(daemon, [], launch=argvs.append).warm_boot(["zebra", "bgpd"])  # type: ignore[arg-type]
    zebra, bgpd = argvs
    assert zebra[0].endswith("/zebra") and zebra[-2:] == ["-K", str(reboot_module.WARM_ROUTE_HOLD_S)]
    assert "-K" not in bgpd and bgpd[bgpd.index("-f") + 1] == str(tmp_path / "bgpd.conf")


def test_the_reboot_phases_are_bounded() -> None:
    with pytest.raises(ValueError):
        RebootSettings(boot_s=0)
    assert RebootSettings().boot_s > 10  # sonic-mgmt's wait_for_shutdown looks for the switch down 10 s on


def test_a_boot_that_fails_still_brings_the_management_port_back(monkeypatch: pytest.MonkeyPatch) -> None:
    reboot, events = _recording(monkeypatch, RebootSettings(shutdown_s=1, boot_s=1))

    def fail(*args: object) -> None:
        raise RuntimeError("FRR rejected frr.conf")

    monkeypatch.setattr(reboot, "boot", fail)
    with pytest.raises(RuntimeError):
        reboot.reboot("COLD")
    assert events[-1] == "management_up default via x"
