"""`twin drill KIND` killed by SIGTERM or SIGHUP while its fault is in place: the fault is taken back, the
fabric is at its baseline again (links and MTUs, nftables and iptables, CONFIG_DB's running values, every
switch's config_db.json byte for byte, BGP and ECMP), the drill exits 128 + the signal and no drill or probe
process is left. Killed by SIGKILL (nothing can restore then), its probe still dies with it and `twin down`
ends whatever the lab started.

One lab for all (each case must leave it at its baseline, which the next one checks first).
"""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from labtools import DATA, REPO, TWIN, leftovers, mgmt_limited, netns_exec, twin, twin_json, unique, until

pytestmark = pytest.mark.needs_root

RUN = Path("/run/twin")

# every kind, its target and options that hold the fault long enough to be interrupted in place
KINDS: dict[str, list[str]] = {
    "spine-loss": ["--target", "spine1", "--hold-ms", "30000"],
    "spine-silent": ["--target", "spine2", "--hold-ms", "30000"],
    "leaf-loss": ["--target", "leaf3", "--hold-ms", "30000"],
    "link-down": ["--target", "leaf1:spine1", "--hold-ms", "30000"],
    "link-flap": ["--target", "leaf2:spine2", "--flaps", "2", "--period-ms", "40000", "--hold-ms", "30000"],
    "link-gray": ["--target", "leaf1:spine1", "--loss-pct", "5", "--hold-ms", "30000"],
    "session-reset": ["--target", "leaf1:spine2", "--hold-ms", "30000"],
    "mtu-mismatch": ["--target", "leaf2:spine1", "--hold-ms", "30000"],
}


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    name = unique("ds")
    try:
        status = twin_json("up", str(DATA / "drill.yaml"), "--name", name)
        assert status["healthy"]
        nodes = twin_json("status", "--name", name)["nodes"]
        assert mgmt_limited(name)   # the agent's management limits (nftables) are part of the baseline
        yield {"name": name, "nodes": nodes, "baseline": fabric(name, nodes), "health": health(name)}
    finally:
        twin("down", "--name", name, check=False)
    assert leftovers(name) == []


def fabric(lab: str, nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """What any drill may change, node by node: every interface's admin state, carrier and MTU, nftables
    rules, iptables rules; on switches also CONFIG_DB's PORT and BGP_NEIGHBOR rows and config_db.json."""
    out: dict[str, Any] = {}
    for node in nodes:
        ns, here = node["netns"], {}
        links = json.loads(subprocess.run(["ip", "-n", ns, "-j", "link"], capture_output=True, text=True,
                                          check=True).stdout)
        here["links"] = {i["ifname"]: (i["mtu"], "UP" in i["flags"], "LOWER_UP" in i["flags"]) for i in links}
        ruleset = json.loads(netns_exec(lab, node["name"], "nft", "-j", "list", "ruleset").stdout or "{}")
        # rules, not tables: iptables-nft keeps a table it once used (link-gray's raw and mangle), empty
        here["nft"] = [json.dumps(o["rule"], sort_keys=True) for o in ruleset.get("nftables", []) if "rule" in o]
        here["iptables"] = [r for r in netns_exec(lab, node["name"], "iptables-save").stdout.splitlines()
                            if r.startswith("-A")]
        if node["kind"] == "switch":
            rundir = RUN / lab / "nodes" / node["name"]
            db = redis.Redis(unix_socket_path=str(rundir / "redis.sock"), db=4, decode_responses=True)
            try:
                here["config_db"] = {k: db.hgetall(k) for k in sorted(db.keys("PORT|*") + db.keys("BGP_NEIGHBOR|*"))}
            finally:
                db.close()
            here["config_db.json"] = hashlib.sha256((rundir / "config_db.json").read_bytes()).hexdigest()
        out[node["name"]] = here
    return out


def health(lab: str) -> dict[str, Any]:
    doc = twin_json("status", "--name", lab, check=False)
    return {"healthy": doc["healthy"], "bgp": doc["bgp"], "ecmp": doc["ecmp"]}


def difference(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [f"{n}.{k}: {a[n].get(k)} != {b[n].get(k)}" for n in a for k in a[n] if a[n].get(k) != b[n].get(k)]


def drill_processes(lab: str) -> list[str]:
    """`twin drill` and its probe, for this lab."""
    out = subprocess.run(["pgrep", "-af", f"twin.drills.observe.probe|twin drill .*--name {lab}( |$)"],
                         capture_output=True, text=True).stdout.splitlines()
    return [line for line in out if lab in line and "pgrep" not in line]


def start_drill(lab: str, kind: str) -> subprocess.Popen[str]:
    # the signals' default dispositions, whatever this test runner inherited (nohup ignores SIGHUP)
    def defaults() -> None:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)

    return subprocess.Popen([*TWIN, "drill", kind, *KINDS[kind], "--name", lab], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, preexec_fn=defaults)


CASES = [(k, s) for s in (signal.SIGTERM, signal.SIGHUP) for k in KINDS]


# Kinds with nothing to take back: an interrupted warm-reboot drill leaves the switch to finish the reboot
# it asked for over gNOI, as a SONiC switch would (the reboot brings it back to its own config).
NOTHING_TO_RESTORE = {"warm-reboot"}


def test_every_kind_is_interrupted_here() -> None:
    from twin.drills.faults.registry import fault_kind
    from twin.model.drill import KINDS as ALL

    assert sorted(KINDS) == sorted(k for k in ALL if k not in NOTHING_TO_RESTORE)
    for kind in NOTHING_TO_RESTORE:
        assert not fault_kind(kind).changes_topology


@pytest.mark.parametrize(("kind", "signum"), CASES, ids=[f"{k}-{s.name}" for k, s in CASES])
def test_a_signal_restores_the_baseline_and_leaves_no_process(lab: dict[str, Any], kind: str,
                                                              signum: signal.Signals) -> None:
    name, nodes, baseline = lab["name"], lab["nodes"], lab["baseline"]
    assert difference(fabric(name, nodes), baseline) == [], "the previous case left the lab off its baseline"
    proc = start_drill(name, kind)
    try:
        changed: list[str] = []

        def injected() -> bool:
            changed[:] = difference(fabric(name, nodes), baseline)
            return bool(changed) or proc.poll() is not None

        assert until(injected, timeout=60, every=0.02) and proc.poll() is None, proc.communicate()
        time.sleep(0.5)  # the fault is held 30 s: still in place, and never saved
        changed = difference(fabric(name, nodes), baseline)
        assert changed and not any("config_db.json" in c for c in changed), changed
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signum, stderr
    assert f"interrupted by {signum.name}" in stderr, stderr
    assert drill_processes(name) == []
    left: list[str] = []

    def back() -> bool:
        left[:] = difference(fabric(name, nodes), baseline)
        return not left

    assert until(back, timeout=30), left
    assert until(lambda: health(name) == lab["health"], timeout=60), health(name)


def test_sigkill_leaves_no_probe_and_down_ends_what_the_lab_started(tmp_path: Path) -> None:
    """SIGKILL cannot restore, but the probe dies with the drill; a process the lab started in the host's
    namespaces (one naming the lab's folder) is ended by `twin down`."""
    name = unique("dk")
    try:
        assert twin_json("up", str(DATA / "drill.yaml"), "--name", name)["healthy"]
        proc = start_drill(name, "link-down")
        assert until(lambda: any("twin.drills.observe.probe" in p for p in drill_processes(name)), timeout=60)
        proc.kill()
        proc.communicate()
        assert until(lambda: drill_processes(name) == [], timeout=5), drill_processes(name)
        stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                                  str(RUN / name / "drill" / "helper.json")], start_new_session=True)
        time.sleep(0.1)
        twin("down", "--name", name)
        assert stray.wait(timeout=10) is not None
    finally:
        twin("down", "--name", name, check=False)
    assert leftovers(name) == []


def held_drill_lab(tmp_path: Path) -> Path:
    """The drills' 2 x 3 fabric with one drill, spine2 silent for 30 s, for `twin ci` and `twin rehearse`.
    Without BFD: these tests are about the signal, and the verify that precedes the drill sometimes still
    sees a BFD session coming up after `twin ci`'s push."""
    topology = tmp_path / "fabric.yaml"
    topology.write_text("name: held\nkind: clos\nclos: {spines: 2, leaves: 3, servers_per_leaf: 1}\n")
    scenario = tmp_path / "held.yaml"
    scenario.write_text("name: held\nsteps:\n  - {kind: spine-silent, target: spine2, hold_ms: 30000}\n")
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(f"name: held\ntopology: {topology}\nhealth: {{timeout_s: 20}}\n"
                        f"drills:\n  - scenario: {scenario}\n")
    return lab_file


def silent(lab: str) -> bool:
    return "twin_drill_silent" in netns_exec(lab, "spine2", "nft", "list", "tables").stdout


def test_sigterm_during_a_rehearsal_restores_its_drill_and_rolls_the_change_back(tmp_path: Path) -> None:
    name = unique("dr")
    try:
        assert twin_json("up", str(held_drill_lab(tmp_path)), "--name", name)["healthy"]
        nodes = twin_json("status", "--name", name)["nodes"]
        baseline = fabric(name, nodes)
        saved = json.loads((RUN / name / "nodes" / "leaf3" / "config_db.json").read_text())
        change = tmp_path / "change.yaml"
        change.write_text("leaf3:\n  PORT:\n    Ethernet0: {description: rack 7}\n")
        proc = subprocess.Popen([*TWIN, "rehearse", str(change), "--name", name], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO)
        try:
            assert until(lambda: silent(name) or proc.poll() is not None, timeout=120) and proc.poll() is None
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 143, stderr
        assert not silent(name) and drill_processes(name) == []
        # rehearse applies and rolls back over gNMI, which saves: the saved config is the old one again
        assert json.loads((RUN / name / "nodes" / "leaf3" / "config_db.json").read_text()) == saved
        left: list[str] = []

        def back() -> bool:
            left[:] = [d for d in difference(fabric(name, nodes), baseline) if ".config_db.json" not in d]
            return not left

        assert until(back, timeout=30), left
        assert until(lambda: twin_json("status", "--name", name, check=False)["healthy"], timeout=60)
    finally:
        twin("down", "--name", name, check=False)
    assert leftovers(name) == []


def test_sighup_during_ci_removes_its_lab(tmp_path: Path) -> None:
    name = unique("dc")
    proc = subprocess.Popen([*TWIN, "ci", str(held_drill_lab(tmp_path)), "--name", name], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert until(lambda: ((RUN / name).exists() and silent(name)) or proc.poll() is not None, timeout=180)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGHUP)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        twin("down", "--name", name, check=False)
    assert proc.returncode == 129, stderr
    assert "interrupted by SIGHUP" in stderr
    assert leftovers(name) == []


def test_sigterm_during_traffic_with_a_fault_restores_it(tmp_path: Path) -> None:
    """`twin traffic --fault`: spine2 silent (no BFD here, so the fabric takes the 9 s hold time to notice and
    the fault is in place that long), SIGTERM: the fault goes, exit 143."""
    name = unique("dt")
    try:
        assert twin_json("up", str(held_drill_lab(tmp_path)), "--name", name)["healthy"]
        proc = subprocess.Popen([*TWIN, "traffic", "ring-allreduce", "--fault", "spine-silent:spine2", "--name", name],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        try:
            assert until(lambda: silent(name) or proc.poll() is not None, timeout=60) and proc.poll() is None
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 143, stderr
        assert not silent(name)
        assert until(lambda: twin_json("status", "--name", name, check=False)["healthy"], timeout=60)
    finally:
        twin("down", "--name", name, check=False)
    assert leftovers(name) == []


def test_a_set_during_the_fault_leaves_the_change_saved_not_the_fault() -> None:
    """Another client's gNMI Set while leaf2's MTU is faulted: twin's switch saves the whole running CONFIG_DB
    after a Set, the fault included. Restored (here by SIGTERM), config_db.json keeps the client's change and
    has the old MTU again."""
    from twin.gnmi.client import SwitchClient
    from twin.lab.running import RunningLab

    name = unique("dm")
    saved_file = RUN / name / "nodes" / "leaf2" / "config_db.json"

    def saved() -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(saved_file.read_text())
        return doc

    try:
        assert twin_json("up", str(DATA / "drill.yaml"), "--name", name)["healthy"]
        ports = saved()["PORT"]
        port = next(p for p, row in ports.items() if row.get("description", "").startswith("spine1:"))
        mtu = ports[port]["mtu"]
        proc = start_drill(name, "mtu-mismatch")
        try:
            db = redis.Redis(unix_socket_path=str(RUN / name / "nodes" / "leaf2" / "redis.sock"), db=4,
                             decode_responses=True)
            assert until(lambda: db.hget(f"PORT|{port}", "mtu") == "1500", timeout=60), proc.poll()
            db.close()
            with SwitchClient.of(RunningLab.load(name), "leaf2") as sw:
                sw.set_field("PORT", "Ethernet0", "description", "rack 7")
            assert saved()["PORT"][port]["mtu"] == "1500"  # the hazard: the Set saved the fault
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 143, stderr
        assert saved()["PORT"][port]["mtu"] == mtu
        assert saved()["PORT"]["Ethernet0"]["description"] == "rack 7"
    finally:
        twin("down", "--name", name, check=False)
    assert leftovers(name) == []
