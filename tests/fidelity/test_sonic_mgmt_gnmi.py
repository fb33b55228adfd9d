"""Independent fidelity test of a twin switch's management plane: sonic-mgmt's own gNMI and gNOI tests
(tests/gnmi), translated case by case and run against leaf1 of one lab.

tests/fidelity/sonic_mgmt_gnmi/*.json hold one case per sonic-mgmt test (and parametrization), at the
sonic-mgmt commit each file names: its source (file:function[params]), what it asks, the result its own
assertions expect, and either its steps or the reason it cannot apply to a twin switch (a SmartSwitch's
DPU, a CRL server, client-certificate roles, an OS image install...), which is a skipped test here.

Steps go through the clients sonic-mgmt drives, with their request shapes and printed output
(sonic_mgmt_clients: py_gnmicli, gnmi_cli, grpcurl by reflection) and sonic-mgmt's helpers reading that
output (sonic_mgmt_helpers); what the tests do on the DUT over ansible goes through the switch's SSH
shell. Cases that change a database put it back afterwards (sonic-mgmt rolls back a checkpoint); the
reboot cases run last, with the lab file's short reboot phases.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
import sonic_mgmt_helpers as mgmt
from labtools import clos_lab_file, queue_maps_written, running_lab, twin_json
from sonic_mgmt_helpers import Dut

from twin.host.rundir import node_dir

CASES_DIR = Path(__file__).parent / "sonic_mgmt_gnmi"
LAB_SETTINGS = "reboot: {shutdown_s: 3, boot_s: 15}\n"   # down from 3 s to 18 s: inside wait_for_shutdown's window

_missing = [what for what, ok in (("root", os.geteuid() == 0), ("FRR (apt-get install frr)",
                                                                Path("/usr/lib/frr/zebra").exists())) if not ok]
pytestmark = [pytest.mark.needs_root,
              pytest.mark.skipif(bool(_missing), reason="needs " + " and ".join(_missing))]


def load_cases() -> list[dict[str, Any]]:
    """Every case of every file, those marked `last` (they reboot the switch) at the end."""
    cases = []
    for path in sorted(CASES_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        cases += [{"switch": doc["switch"], "file": path.name, **case} for case in doc["cases"]]
    return sorted(cases, key=lambda c: bool(c.get("last")))


CASES = load_cases()


# Where the twin answers otherwise than SONiC today (docs/reference/sonic-mgmt-gnmi.md, docs/differences.md):
# strict, so that each flips to a failure the day the twin answers as SONiC does.
# Cases where the twin answers otherwise than SONiC, each with why: they run as strict expected failures, so
# the day the twin answers as SONiC does, the mark must go.
TWIN_DIFFERS: dict[str, str] = {}


def _param(case: dict[str, Any]) -> Any:
    marks = []
    if "not_applicable" in case:
        marks.append(pytest.mark.skip(reason=f"not applicable to a twin switch: {case['not_applicable']}"))
    if case["id"] in TWIN_DIFFERS:
        marks.append(pytest.mark.xfail(strict=True, reason=f"the twin differs: {TWIN_DIFFERS[case['id']]}"))
    return pytest.param(case, id=case["id"], marks=marks)


# -- the lab ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dut(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dut]:
    folder = tmp_path_factory.mktemp("sonic-mgmt")
    lab_file = clos_lab_file(folder, "spines: 2, leaves: 2, servers_per_leaf: 1", LAB_SETTINGS)
    with running_lab(lab_file, "sm") as name:
        queue_maps_written(name)
        status = twin_json("status", "--name", name)
        ptf_root = folder / "ptf"
        ptf_root.mkdir()
        switch = Dut(status, CASES[0]["switch"], node_dir(name, CASES[0]["switch"]), ptf_root)
        try:
            yield switch
        finally:
            switch.close()


# -- the test -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_sonic_mgmt_case(dut: Dut, case: dict[str, Any]) -> None:
    saved = {db: snapshot(dut, db) for db in case.get("restore", [])}
    try:
        run_steps(dut, case["steps"], {})
    finally:
        for db, before in saved.items():
            restore(dut, db, before)


def snapshot(dut: Dut, db: str) -> dict[str, dict[str, str]]:
    client = dut.redis(db)
    return {k: client.hgetall(k) for k in client.keys("*") if client.type(k) == "hash"}


def restore(dut: Dut, db: str, before: dict[str, dict[str, str]]) -> None:
    """Put back what a case changed, key by key (sonic-mgmt rolls back a checkpoint), and wait for BGP
    when CONFIG_DB changed."""
    client = dut.redis(db)
    now = snapshot(dut, db)
    changed = False
    for key in set(now) - set(before):
        client.delete(key)
        changed = True
    for key, fields in before.items():
        if now.get(key) != fields:
            gone = set(now.get(key, {})) - set(fields)
            if gone:
                client.hdel(key, *gone)
            client.hset(key, mapping=fields)
            changed = True
    if changed and db == "CONFIG_DB":
        assert mgmt.wait_until(120, 2, 0, lambda: mgmt.all_established(dut)), "BGP not back after the restore"


def subst(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: names.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [subst(v, names) for v in value]
    if isinstance(value, dict):
        return {k: subst(v, names) for k, v in value.items()}
    return value


def run_steps(dut: Dut, steps: list[dict[str, Any]], names: dict[str, str]) -> None:
    for raw in steps:
        step = subst(raw, names)
        kind = step["do"]
        if kind == "repeat":
            for _ in range(step["times"]):
                run_steps(dut, step["steps"], names)
            continue
        expect = step.get("expect", {})
        try:
            result = STEPS[kind](dut, step, names)
        except Exception as exc:
            if "raises" not in expect:
                raise
            pattern = expect["raises"].get("match")
            assert pattern is None or re.search(pattern, str(exc)), f"{kind}: raised {exc!r}, not /{pattern}/"
            continue
        assert "raises" not in expect, f"{kind} succeeded where sonic-mgmt expects it to fail: {result!r}"
        check(kind, result, expect)


# -- steps --------------------------------------------------------------------------------------------------

def _ptf_file(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> None:
    path = dut.ptf_root / step["path"].lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(step["text"])


def _let_first_interface(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str:
    interface = mgmt.first_admin_up_interface(dut, step.get("exclude", []))
    assert interface is not None, "Invalid interface"
    names["interface"] = interface
    return interface


def _let_first_config_port(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str:
    interface = mgmt.first_config_port(dut)
    assert interface is not None, "No valid interface found"
    names["interface"] = interface
    return interface


def _let_port_oid(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str:
    oid = dut.shell.shell(f"sonic-db-cli COUNTERS_DB hget COUNTERS_PORT_NAME_MAP {step['port']}").strip()
    assert "oid" in oid, f"Invalid oid: {oid}."
    names["oid"] = oid
    return oid


def _gnmi_set(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> None:
    mgmt.gnmi_set(dut, step.get("delete", []), step.get("update", []), step.get("replace", []))


def _gnmi_get(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> list[str]:
    return mgmt.gnmi_get(dut, step["paths"])


def _gnmi_get_last_of(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str | None:
    """test_gnmi_appldb_01: each path read alone, a failure only logged; the last answer counts."""
    output = None
    for path in step["paths"]:
        try:
            output = mgmt.gnmi_get(dut, [path])[0]
        except RuntimeError:
            continue
    return output


def _dut(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str:
    return dut.shell.shell(step["command"])


def _subscribe_sample(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str:
    return mgmt.gnmi_subscribe_streaming_sample(dut, step["paths"], step["interval_ms"], step["count"],
                                                origin=step.get("origin"), target=step.get("target"))[0]


def _subscribe_polling(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str:
    return mgmt.gnmi_subscribe_polling(dut, step["paths"], step["interval_ms"], step["count"])[0]


def _subscribe_onchange(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> str:
    """The subscription while a worker runs the writer's commands on the DUT, one every pause_s, with
    {1000+i} the round's number plus 1000 (sonic-mgmt's multiprocessing worker)."""
    writer, stop = step["writer"], threading.Event()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(100):
                for command in writer["commands"]:
                    if stop.wait(writer["pause_s"]):
                        return
                    dut.shell.run(command["command"].replace("{1000+i}", str(1000 + i)))
        except BaseException as exc:  # the worker's failure is reported, not lost with its thread
            errors.append(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        output = mgmt.gnmi_subscribe_streaming_onchange(dut, step["paths"], step["count"])[0]
    finally:
        stop.set()
        thread.join(30)
    assert not errors, f"the DUT writer failed: {errors[0]!r}"
    return output


def _gnmi_capabilities(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> tuple[int, str]:
    return mgmt.gnmi_capabilities(dut)


def _gnoi(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> Any:
    return getattr(dut.gnoi, step["call"])(**step["args"])


def _pygnmi(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> Any:
    if step["call"] == "subscribe":
        return mgmt.pygnmi_subscribe(dut, **step["args"])
    with mgmt.pygnmi_client(dut) as gc:
        return getattr(gc, step["call"])(**step["args"])


def _wait_bgp_neighbors(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> None:
    """wait_bgp_neighbor: every BGP neighbor Established within the timeout, checked every 10 s."""
    assert mgmt.wait_until(step["timeout_s"], 10, 0, lambda: mgmt.all_established(dut)), \
        "Not all BGP sessions are established on DUT"


def _wait_critical_processes(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> None:
    """wait_critical_processes: the switch's services back, which on a twin switch are its FRR (every BGP
    session Established) and its gNMI server (Capabilities answered)."""
    def up() -> bool:
        return mgmt.all_established(dut) and mgmt.gnmi_capabilities(dut)[0] == 0
    assert mgmt.wait_until(step["timeout_s"], 5, 0, up), "critical processes of the DUT are not all running"


def _procedure(dut: Dut, step: dict[str, Any], names: dict[str, str]) -> None:
    PROCEDURES[step["name"]](dut, step)


STEPS = {"ptf_file": _ptf_file, "let_first_interface": _let_first_interface,
         "let_first_config_port": _let_first_config_port, "let_port_oid": _let_port_oid,
         "gnmi_set": _gnmi_set, "gnmi_get": _gnmi_get, "gnmi_get_last_of": _gnmi_get_last_of, "dut": _dut,
         "subscribe_sample": _subscribe_sample, "subscribe_polling": _subscribe_polling,
         "subscribe_onchange": _subscribe_onchange, "gnmi_capabilities": _gnmi_capabilities, "gnoi": _gnoi,
         "pygnmi": _pygnmi, "wait_bgp_neighbors": _wait_bgp_neighbors,
         "wait_critical_processes": _wait_critical_processes, "procedure": _procedure}


# -- expectations -------------------------------------------------------------------------------------------

def check(kind: str, result: Any, expect: dict[str, Any]) -> None:
    """Every rule `expect` names must hold for what the step gave."""
    text = result if isinstance(result, str) else json.dumps(result, default=str)
    if "rc" in expect:
        assert result[0] == expect["rc"], f"{kind} failed: {result[1]}"
        text = result[1]
    if "equals" in expect:
        assert result == expect["equals"], f"{kind}: {result!r}, sonic-mgmt expects {expect['equals']!r}"
    if "stdout" in expect:
        assert result.strip() == expect["stdout"], f"{kind}: {result!r}"
    if "first_contains" in expect:
        assert result and expect["first_contains"] in result[0], f"{kind}: {expect['first_contains']} not in {result}"
    for word in expect.get("contains", []):
        assert word in text, f"{kind}: {word!r} not in {text}"
    if "count" in expect:
        rule, n = expect["count"], text.count(expect["count"]["of"])
        said = f"{kind}: {rule['of']!r} {n} times, sonic-mgmt expects"
        if "exactly" in rule:
            assert n == rule["exactly"], f"{said} {rule['exactly']}\n{text}"
        else:
            assert n >= rule["at_least"], f"{said} >= {rule['at_least']}\n{text}"
    if "json_ietf_values" in expect:
        rule = expect["json_ietf_values"]
        found = re.findall('json_ietf_val: "({.*?})"', text)
        assert len(found) >= rule["at_least"], f"{kind}: {len(found)} json_ietf_val in {text}"
        for match in found:
            node = json.loads(match)
            for key in rule["each_at"]:
                assert isinstance(node, dict) and key in node, f"{kind}: {key} not in {match}"
                node = node[key]
    if "len" in expect:
        assert len(result) == expect["len"], f"{kind}: {len(result)} items, sonic-mgmt expects {expect['len']}: " \
            f"{result}"
    if "keys_contain" in expect:
        keys = subscribed_keys(result)
        for word in expect["keys_contain"]:
            assert any(word in k for k in keys), f"{kind}: no key with {word} in {sorted(keys)}"
    for rule in expect.get("checks", []):
        check_at(kind, result, rule)


def subscribed_keys(notifications: list[Any]) -> set[str]:
    """test_pygnmi_subscribe_sample_queue_counters: every key of every update's value, and its path."""
    keys: set[str] = set()

    def walk(obj: Any) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                keys.add(str(k))
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    for notification in notifications:
        container = notification.get("update") if isinstance(notification, dict) else None
        if isinstance(container, dict):
            for update in container.get("update", []):
                walk(update.get("val"))
                if update.get("path"):
                    keys.add(str(update["path"]))
    return keys


def values_at(obj: Any, path: str) -> list[Any]:
    """Values at a dotted path: `*` every item, `a|b` the first of two names present (None if absent)."""
    nodes = [obj]
    for part in path.split("."):
        nxt: list[Any] = []
        for node in nodes:
            if part == "*":
                nxt += list(node.values()) if isinstance(node, dict) else list(node)
            elif isinstance(node, list):
                nxt.append(node[int(part)] if int(part) < len(node) else None)
            elif isinstance(node, dict):
                nxt.append(next((node[p] for p in part.split("|") if p in node), None))
            else:
                nxt.append(None)
        nodes = nxt
    return nodes


def check_at(kind: str, result: Any, rule: dict[str, Any]) -> None:
    for value in values_at(result, rule["at"]):
        where = f"{kind}: {rule['at']} = {value!r} in {result}"
        if rule.get("present"):
            assert value is not None, where
        if "eq" in rule:
            assert value == rule["eq"], where
        if "ne" in rule:
            assert value != rule["ne"], where
        if "int_eq" in rule:
            assert value is not None and int(value) == rule["int_eq"], where
        if "int_gt" in rule:
            assert value is not None and int(value) > rule["int_gt"], where
        if "len" in rule:
            assert value is not None and len(value) == rule["len"], where
        if "len_ge" in rule:
            assert value is not None and len(value) >= rule["len_ge"], where
        if "startswith" in rule:
            assert isinstance(value, str) and value.startswith(rule["startswith"]), where
        if "contains" in rule:
            assert value is not None and rule["contains"] in value, where
        if "has" in rule:
            assert isinstance(value, dict) and rule["has"] in value, where


# -- procedures: cases whose logic is more than a list of calls ---------------------------------------------

def full_replace(dut: Dut, step: dict[str, Any]) -> None:
    """test_gnmi_configdb_full_replace_01."""
    interface = mgmt.first_admin_up_interface(dut, step["exclude"])
    assert interface is not None, "Invalid interface"
    dic = mgmt.running_config(dut)
    assert "PORT" in dic, "Failed to read running config"
    assert interface in dic["PORT"] and "admin_status" in dic["PORT"][interface], f"Failed to get interface {interface}"

    def admin_status() -> str:
        return dut.shell.shell(f'sonic-db-cli CONFIG_DB hget "PORT|{interface}" admin_status').strip()

    assert admin_status() == "up", "Unexpected port status"
    dic["PORT"][interface]["admin_status"] = "down"
    (dut.ptf_root / "root").mkdir(exist_ok=True)
    (dut.ptf_root / "root" / "full.txt").write_text(json.dumps(dic))
    mgmt.gnmi_set(dut, [], [], ["/sonic-db:CONFIG_DB/localhost/:@/root/full.txt"])
    assert mgmt.wait_until(30, 2, 0, lambda: admin_status() == "down"), \
        f"Full config failed to toggle interface {interface} status"
    dut.shell.shell(f"sudo config interface startup {interface}")
    dut.shell.shell("sudo config save -y")
    _wait_bgp_neighbors(dut, {"timeout_s": 60}, {})


def queue_buffer_cnt(dut: Dut, step: dict[str, Any]) -> None:
    """test_gnmi_queue_buffer_cnt."""
    iface = step["port"]
    name_map = "/sonic-db:COUNTERS_DB/localhost/COUNTERS_QUEUE_NAME_MAP"
    uc_list = re.findall(r"UC(\d+)", dut.shell.run(f"show queue counters {iface}")[1])
    for i in uc_list:
        result = mgmt.gnmi_get(dut, [f"{name_map}/{iface}:{i}"])[0]
        assert "oid" in result, f"OID not found in result. Result: {result}"
    try:
        mgmt.gnmi_get(dut, [f"{name_map}/{iface}:abc"])
    except RuntimeError as exc:
        assert "GRPC error" in str(exc), f"Expected GRPC error, but got: {exc}. "
    else:
        pytest.fail(f"Should fail for invalid path: {name_map}/{iface}:abc")

    def count(port: str) -> int:
        try:
            answer = mgmt.gnmi_get(dut, [name_map])
        except RuntimeError:
            return 0
        return len(re.findall(rf"{re.escape(port)}:\d+", str(answer)))

    status = _interfaces_status(dut)
    admin_up = [i for i, s in status.items() if re.match(r"^Ethernet[0-9]{1,3}$", i)
                and s["admin"] == "up" and s["oper"] == "up"]
    original = mgmt.running_config(dut)
    data = json.loads(json.dumps(original))
    if not data.get("BUFFER_QUEUE"):
        pytest.skip("Skipping test as BUFFER_QUEUE table is not present in config db")
    queues = list(data["BUFFER_QUEUE"])
    check_port = next((q.split("|")[0] for q in queues if q.split("|")[0] in admin_up), None)
    if check_port is None:
        pytest.skip("Skipping test as there are no admin-up interfaces with buffer queues to check")
    own = [q for q in queues if q.split("|")[0] == check_port]
    single, entry = False, own[0]
    if len(own) == 1:
        port, span = entry.split("|")
        if "-" in span:
            start, end = map(int, span.split("-"))
            profile = data["BUFFER_QUEUE"].pop(entry)["profile"]
            data["BUFFER_QUEUE"][f"{port}|{start + 1}-{end}"] = {"profile": profile}
            entry = f"{port}|{start}"
            data["BUFFER_QUEUE"][entry] = {"profile": profile}
        else:
            single = True
    try:
        data["DEVICE_METADATA"]["localhost"]["create_only_config_db_buffers"] = "true"
        _load_new_cfg(dut, data)
        assert mgmt.wait_until(120, 20, 0, lambda: count(check_port) > 0), \
            "Unable to get count of buffer queues from COUNTERS_QUEUE_NAME_MAP"
        before = count(check_port)
        del data["BUFFER_QUEUE"][entry]
        _load_new_cfg(dut, data)
        if not single:
            assert mgmt.wait_until(120, 20, 0, lambda: count(check_port) > 0), \
                "Unable to get count of buffer queues from COUNTERS_QUEUE_NAME_MAP"
        after = count(check_port)
        assert before > after, f"Number of queue counters count differs from expected ({before} -> {after})"
    finally:
        _load_new_cfg(dut, original)


def _interfaces_status(dut: Dut) -> dict[str, dict[str, str]]:
    """duthost.get_interfaces_status: `show interface status` as a table by interface."""
    lines = dut.shell.shell("show interface status").splitlines()
    header = [h.lower() for h in re.split(r"\s{2,}", lines[0].strip())]
    rows = {}
    for line in lines[2:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) == len(header):
            rows[cells[0]] = dict(zip(header, cells, strict=True))
    return rows


def _load_new_cfg(dut: Dut, data: dict[str, Any]) -> None:
    """config_reload(config_source='config_db', safe_reload=True, wait_for_bgp=True): the file copied to
    the DUT's /etc/sonic/config_db.json, `config reload -y`, the services, BGP and the ports back."""
    (dut.rundir / "config_db.json").write_text(json.dumps(data, indent=4))
    dut.shell.shell("sudo config reload -y", timeout=600)
    _wait_critical_processes(dut, {"timeout_s": 300}, {})


def transfer_to_remote(dut: Dut, step: dict[str, Any]) -> None:
    """test_file_transfer_to_remote: the PTF is this machine, on the lab's management network."""
    served = dut.ptf_root / "tmp"
    served.mkdir(exist_ok=True)
    (served / "test.txt").write_text(step["content"] + "\n")                 # echo '...' > /tmp/test.txt
    ptf_ip = _management_address(dut)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer((ptf_ip, step["port"]), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    local = dut.rundir / step["local_path"].lstrip("/")
    try:
        result = dut.gnoi.file_transfer_to_remote(url=f"http://{ptf_ip}:{step['port']}/test.txt",
                                                  local_path=step["local_path"], protocol="HTTP")
        assert "hash" in result, "TransferToRemote response missing hash field"
        assert local.exists(), f"File {step['local_path']} not found on DUT after transfer"
        got = local.read_text().strip()
        assert step["content"] in got, f"Content mismatch. Expected: '{step['content']}', Got: '{got}'"
    finally:
        server.shutdown()
        server.server_close()
        local.unlink(missing_ok=True)


def _management_address(dut: Dut) -> str:
    """This machine's address on the lab's management network (its bridge), where a PTF would be."""
    out = subprocess.run(["ip", "-j", "-4", "addr", "show", "dev", f"tw-{dut.lab}"], capture_output=True,
                         text=True, check=True).stdout
    return str(json.loads(out)[0]["addr_info"][0]["local"])


def permissions_decimal_octal(dut: Dut, step: dict[str, Any]) -> None:
    """test_gnoi_file_stat_permissions_decimal_octal: `stat -c %a PATH` on the DUT is the mode of the
    switch's own file (its run directory is its /)."""
    on_dut = dut.rundir / step["path"].lstrip("/")
    assert on_dut.exists(), f"stat: cannot statx '{step['path']}': No such file or directory (on the DUT)"
    actual_octal = format(on_dut.stat().st_mode & 0o7777, "o")
    stats = dut.gnoi.file_stat(step["path"]).get("stats", [])
    assert len(stats) == 1, f"Expected exactly 1 StatInfo for {step['path']}"
    permissions = int(stats[0].get("permissions", -1))
    assert permissions == int(actual_octal), f"Expected permissions={int(actual_octal)}, got {permissions}"
    assert all(d in "01234567" for d in str(permissions)), f"permissions '{permissions}' contains 8 or 9"


def reboot(dut: Dut, step: dict[str, Any]) -> None:
    """test_gnoi_system_reboot_cold / _warm; the boot time read as sonic-mgmt's get_up_time(utc_timezone=True)
    reads it, through the switch's SSH shell."""
    if step["uptime_check"]:
        uptime_before = mgmt.get_up_time(dut.shell.shell)
    answer = dut.gnoi.system_reboot(method=step["method"], message=step["message"])
    status = dut.gnoi.reboot_status()
    for key in ("active", "when", "reason", "count", "method"):
        assert key in status, f"Missing '{key}' in RebootStatus: {status} (after Reboot answered {answer})"
    assert status["active"] is True, "'active' should be True after reboot"
    assert status["reason"] == step["message"], f"'reason' should be '{step['message']}'"
    assert status["method"] == step["method"], f"'method' should be '{step['method']}', got '{status['method']}'"
    assert int(status["when"]) > 0, "'when' should be a positive integer"
    assert int(status["count"]) >= 1, "'count' should be >= 1"
    down, up = step["shutdown"], step["startup"]
    assert mgmt.wait_until(down["timeout_s"], 1, down["delay_s"], lambda: not _port_open(dut.mgmt_ip, 22)), \
        f"DUT {dut.name} did not shutdown"
    # wait_for_startup's first try waits for a banner matching SONIC_SSH_REGEX; a server that answers with
    # another one never matches, so its answer is judged at once rather than after the 600 s
    assert mgmt.wait_until(up["timeout_s"], 1, up["delay_s"], lambda: mgmt.ssh_banner(dut.mgmt_ip) is not None), \
        f"DUT {dut.name} did not startup"
    banner = mgmt.ssh_banner(dut.mgmt_ip) or b""
    assert mgmt.SSH_BANNER.search(banner), \
        f"DUT {dut.name} did not startup at first try: SSH answers {banner!r}, not /{mgmt.SSH_BANNER.pattern.decode()}/"
    dut.shell.close()
    _wait_critical_processes(dut, {"timeout_s": step["critical_timeout_s"]}, {})
    assert mgmt.wait_until(120, 10, 0, lambda: mgmt.gnmi_capabilities(dut)[0] == 0), "gNMI is not running"
    if step["uptime_check"]:
        uptime_after = mgmt.get_up_time(dut.shell.shell)
        assert uptime_after > uptime_before, \
            f"Device did not reboot, uptime did not reset (up since {uptime_before} before, {uptime_after} after)"


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


PROCEDURES = {"full_replace": full_replace, "queue_buffer_cnt": queue_buffer_cnt,
              "transfer_to_remote": transfer_to_remote, "permissions_decimal_octal": permissions_decimal_octal,
              "reboot": reboot}
