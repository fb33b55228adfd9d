"""Independent fidelity test of twin's gNMI agent: sonic-gnmi's own test cases, replayed against a twin switch.

tests/fidelity/gnmi_compat/*.json transcribe sonic-net/sonic-gnmi (commit 5ec1c20b) test data tables and
code paths as data: each case names its source line, the request, and what sonic-gnmi answers (status and
message, values, notifications, the JSON Patch it hands GCU and what a real switch's GCU then does). This
module brings up one lab (tests/integration/data/mini.yaml) and replays every case with pygnmi's connection
and raw gRPC stub (so request fields and TypedValue kinds are exact), one parametrized test per case id.

Checks read the switch's redis directly (its socket is in the switch's run directory) where sonic-gnmi's
answer is "whatever the database holds", and read gcu.patch / config_db.json.tmp from that directory, where
sonic-gnmi writes them to its work directory.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from pygnmi.client import gNMIclient
from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from labtools import running_lab, twin_json

from twin.host.rundir import node_dir

CASES_DIR = Path(__file__).parent / "gnmi_compat"
FILES = ["test_gnmi_capabilities.json", "sonic_gnmi_code.json", "server_test_paths.json",
         "test_gnmi_countersdb.json", "test_gnmi_configdb.json", "test_gnmi_appldb.json"]
DBS = {"APPL_DB": 0, "COUNTERS_DB": 2, "CONFIG_DB": 4, "STATE_DB": 6}
SEPARATORS = {"APPL_DB": ":", "COUNTERS_DB": ":", "CONFIG_DB": "|", "STATE_DB": "|"}
CDB = "/sonic-db:CONFIG_DB/localhost/"

_missing = [what for what, ok in (("root", os.geteuid() == 0), ("FRR (apt-get install frr)",
                                                                Path("/usr/lib/frr/zebra").exists())) if not ok]
pytestmark = [pytest.mark.needs_root,
              pytest.mark.skipif(bool(_missing), reason="needs " + " and ".join(_missing))]


def _load() -> list[dict[str, Any]]:
    cases = []
    for name in FILES:
        doc = json.loads((CASES_DIR / name).read_text())
        cases += [{"switch": doc["switch"], "file": name, **case} for case in doc["cases"]]
    return cases


CASES = _load()


# -- the switch ---------------------------------------------------------------------------------------------

class Switch:
    """One twin switch: its gNMI stub, credentials, redis databases and run directory."""

    def __init__(self, status: dict[str, Any], name: str) -> None:
        target = dict(next(n for n in status["nodes"] if n["name"] == name)["gnmi"])
        self.user, self.password = str(target["username"]), str(target["password"])
        self.gc = gNMIclient(**target)
        self.gc.__enter__()
        self.stub: Any = self.gc._gNMIclient__stub
        self.dir = node_dir(status["lab"], name)
        sock = str(self.dir / "redis.sock")
        self.dbs: dict[str, Any] = {db: redis.Redis(unix_socket_path=sock, db=n, decode_responses=True)
                                    for db, n in DBS.items()}

    def close(self) -> None:
        self.gc.__exit__(None, None, None)

    def subst(self, obj: Any) -> Any:
        """Placeholders of the case files: {oid:<port>}, {username}, {password}."""
        if isinstance(obj, str):
            names = self.dbs["COUNTERS_DB"].hgetall("COUNTERS_PORT_NAME_MAP") if "{oid:" in obj else {}
            obj = re.sub(r"\{oid:(Ethernet\d+)\}", lambda m: str(names[m.group(1)]), obj)
            return obj.replace("{username}", self.user).replace("{password}", self.password)
        if isinstance(obj, list):
            return [self.subst(x) for x in obj]
        if isinstance(obj, dict):
            return {k: self.subst(v) for k, v in obj.items()}
        return obj

    def metadata(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        given = request.get("metadata")
        return [(k, v) for k, v in given] if given is not None else [("username", self.user),
                                                                     ("password", self.password)]

    # what SONiC's databases hold, read as sonic-gnmi renders it (NULL dropped, 'f@' a list)
    def hash(self, db: str, key: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field, value in self.dbs[db].hgetall(key).items():
            if field == "NULL":
                continue
            if field.endswith("@"):
                out[field[:-1]] = value.split(",")
            else:
                out[field] = value
        return out

    def table(self, db: str, table: str) -> dict[str, Any]:
        sep = SEPARATORS[db]
        return {k.split(sep, 1)[1]: self.hash(db, k) for k in self.dbs[db].keys(f"{table}{sep}*")}

    def whole(self, db: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        sep = SEPARATORS[db]
        for key in self.dbs[db].keys(f"*{sep}*"):
            table, name = key.split(sep, 1)
            out.setdefault(table, {})[name] = self.hash(db, key)
        return out

    def raw(self, db: str) -> dict[str, Any]:
        client = self.dbs[db]
        return {k: client.hgetall(k) for k in client.keys("*") if client.type(k) == "hash"}

    def redis_cmd(self, cmd: list[str]) -> None:
        db, op, *args = self.subst(cmd)
        if op == "delpattern":
            keys = self.dbs[db].keys(args[0])
            if keys:
                self.dbs[db].delete(*keys)
        else:
            self.dbs[db].execute_command(op, *args)


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    with running_lab("tests/integration/data/mini.yaml", "gc") as name:
        yield twin_json("status", "--name", name)


@pytest.fixture(scope="module")
def switches(lab: dict[str, Any]) -> Iterator[dict[str, Switch]]:
    opened: dict[str, Switch] = {}

    class Lazy(dict[str, Switch]):
        def __missing__(self, name: str) -> Switch:
            opened[name] = self[name] = Switch(lab, name)
            return opened[name]

    yield Lazy()
    for sw in opened.values():
        sw.close()


# -- requests -----------------------------------------------------------------------------------------------

def mkpath(spec: Any) -> Any:
    if isinstance(spec, dict):
        return gnmi_pb2.Path(origin=spec.get("origin", ""), elem=[
            gnmi_pb2.PathElem(name=e) if isinstance(e, str) else gnmi_pb2.PathElem(name=e["name"], key=e["key"])
            for e in spec["elem"]])
    return gnmi_path_generator(spec)


def mkprefix(spec: dict[str, str]) -> Any:
    if not any(spec.values()):
        return None
    prefix = gnmi_path_generator(spec.get("path", ""))
    prefix.origin, prefix.target = spec.get("origin", "") or prefix.origin, spec.get("target", "")
    return prefix


def typed(update: dict[str, Any]) -> Any:
    if "json_ietf" in update:
        return gnmi_pb2.TypedValue(json_ietf_val=json.dumps(update["json_ietf"]).encode())
    if "json_ietf_raw" in update:
        return gnmi_pb2.TypedValue(json_ietf_val=update["json_ietf_raw"].encode())
    if "string_val" in update:
        return gnmi_pb2.TypedValue(string_val=update["string_val"])
    if "proto_bytes_b64" in update:
        return gnmi_pb2.TypedValue(proto_bytes=base64.b64decode(update["proto_bytes_b64"]))
    return None


def render_path(path: Any) -> str:
    return "/" + "/".join(e.name + "".join(f"[{k}={v}]" for k, v in sorted(e.key.items())) for e in path.elem)


def decode(tv: Any) -> tuple[str, Any]:
    kind = tv.WhichOneof("value")
    if kind in ("json_ietf_val", "json_val"):
        return kind, json.loads(getattr(tv, kind))
    if kind == "proto_bytes":
        return kind, base64.b64encode(tv.proto_bytes).decode()
    return str(kind), getattr(tv, kind) if kind else None


def rpc_error(err: grpc.RpcError) -> tuple[str, str]:
    code: Any = err.code()
    details: Any = err.details()
    return str(code.name), str(details or "")


def do_get(sw: Switch, req: dict[str, Any], paths: list[Any] | None = None,
           encoding: str | None = None) -> tuple[str, str, Any]:
    request = gnmi_pb2.GetRequest(prefix=mkprefix(req.get("prefix", {})),
                                  path=[mkpath(p) for p in (paths if paths is not None else req["paths"])],
                                  encoding=gnmi_pb2.Encoding.Value(encoding or req.get("encoding", "JSON_IETF")),
                                  type=gnmi_pb2.GetRequest.DataType.Value(req.get("type", "ALL")))
    try:
        return "OK", "", sw.stub.Get(request, metadata=sw.metadata(req), timeout=30)
    except grpc.RpcError as err:
        return (*rpc_error(err), None)


def do_set(sw: Switch, req: dict[str, Any]) -> tuple[str, str]:
    request = gnmi_pb2.SetRequest(
        prefix=mkprefix(req.get("prefix", {})), delete=[mkpath(p) for p in req.get("delete", [])],
        replace=[gnmi_pb2.Update(path=mkpath(u["path"]), val=typed(u)) for u in req.get("replace", [])],
        update=[gnmi_pb2.Update(path=mkpath(u["path"]), val=typed(u)) for u in req.get("update", [])])
    try:
        sw.stub.Set(request, metadata=sw.metadata(req), timeout=60)
        return "OK", ""
    except grpc.RpcError as err:
        return rpc_error(err)


def get_value(sw: Switch, path: Any, encoding: str = "JSON_IETF") -> tuple[str, str, tuple[str, Any] | None]:
    code, msg, resp = do_get(sw, {"paths": [path]}, encoding=encoding)
    if code != "OK" or not resp.notification or not resp.notification[0].update:
        return code, msg, None
    return code, msg, decode(resp.notification[0].update[0].val)


# -- expectations -------------------------------------------------------------------------------------------

def check_val(sw: Switch, rule: dict[str, Any], kind: str, val: Any) -> None:
    """Every check the rule names must hold for the value of TypedValue kind `kind`."""
    if "type" in rule:
        assert kind == rule["type"], f"value kind {kind}, sonic-gnmi answers {rule['type']}"
    if "equals" in rule:
        assert val == rule["equals"]
    if "bytes_b64" in rule:
        assert val == rule["bytes_b64"]
    if "redis_hash" in rule:
        assert val == sw.hash(**rule["redis_hash"])
    if "redis_hash_fields" in rule:
        assert isinstance(val, dict) and set(val) == set(sw.hash(**rule["redis_hash_fields"]))
    if "redis_table" in rule:
        assert val == sw.table(**rule["redis_table"])
    if "redis_table_keys" in rule:
        table = sw.table(**rule["redis_table_keys"])
        assert isinstance(val, dict) and set(val) == set(table)
        assert all(set(val[k]) == set(table[k]) for k in table)
    if "redis_db" in rule:
        assert val == sw.whole(**rule["redis_db"])
    if "redis_flat" in rule:
        assert val == sw.dbs[rule["redis_flat"]["db"]].hgetall(rule["redis_flat"]["key"])
    if "keys_from_redis_flat" in rule:
        flat = sw.dbs[rule["keys_from_redis_flat"]["db"]].hgetall(rule["keys_from_redis_flat"]["key"])
        assert isinstance(val, dict) and set(flat) <= set(val)
    if "each_has_fields" in rule:
        assert all(set(v) == set(rule["each_has_fields"]) for v in val.values())
    if "has_keys" in rule:
        assert isinstance(val, dict) and set(rule["has_keys"]) <= set(val)
    if "lacks_keys" in rule:
        assert isinstance(val, dict) and not set(rule["lacks_keys"]) & set(val)
    if "keys" in rule:
        assert isinstance(val, dict) and set(val) == set(rule["keys"])
    if "keys_are_port_aliases" in rule:
        ports = sw.dbs["COUNTERS_DB"].hgetall("COUNTERS_PORT_NAME_MAP")
        assert isinstance(val, dict) and set(val) == {sw.hash("CONFIG_DB", f"PORT|{p}").get("alias", p) for p in ports}
    if "numeric" in rule:
        assert isinstance(val, str) and val.isdigit()
    if "at" in rule:
        inner = val
        for k in rule["at"]:
            assert isinstance(inner, dict) and k in inner, f"{rule['at']} not in {val}"
            inner = inner[k]
        assert inner == rule["at_equals"]
    if "not_contains_text" in rule:
        assert rule["not_contains_text"] not in json.dumps(val)


def check_status(code: str, msg: str, expect: dict[str, Any]) -> None:
    assert code == expect["status"], f"status {code} ({msg}); sonic-gnmi answers {expect['status']}"
    if "message" in expect:
        assert expect["message"] in msg, f"message {msg!r} lacks {expect['message']!r}"


def check_get_response(sw: Switch, resp: Any, expect: dict[str, Any]) -> None:
    notifications = list(resp.notification)
    if "notifications" in expect:
        assert len(notifications) == expect["notifications"], f"{len(notifications)} notifications"
    assert all(len(n.update) == 1 for n in notifications), "sonic-gnmi sends one update per notification"
    for n, path in zip(notifications, expect.get("paths", []), strict=False):
        assert render_path(n.update[0].path) == path
    for n, rule in zip(notifications, expect.get("values", []), strict=False):
        check_val(sw, rule, *decode(n.update[0].val))


def check_set_effects(sw: Switch, expect: dict[str, Any], before: dict[str, Any]) -> None:
    patch_file = sw.dir / "gcu.patch"
    if "patch" in expect:
        if expect["patch"] is None:
            assert not patch_file.exists(), f"sonic-gnmi writes no patch here; got {patch_file.read_text()}"
        else:
            assert patch_file.exists(), "no gcu.patch in the switch's run directory"
            assert json.loads(patch_file.read_text()) == expect["patch"]
    if expect.get("config") == "unchanged":
        assert sw.raw("CONFIG_DB") == before, "CONFIG_DB changed"
    if "work_file" in expect:
        work = sw.dir / expect["work_file"]["name"]
        assert work.exists() and json.loads(work.read_text()) == expect["work_file"]["json"]
    for item in expect.get("config_after", []):
        code, msg, got = get_value(sw, item["path"])
        assert code == item.get("status", "OK"), f"Get {item['path']}: {code} {msg}"
        if "val" in item:
            assert got is not None
            check_val(sw, item["val"], *got)
    for item in expect.get("redis_after", []):
        if item.get("absent"):
            assert not sw.dbs[item["db"]].exists(item["key"]), f"{item['key']} still in {item['db']}"
        else:
            assert sw.dbs[item["db"]].hgetall(item["key"]) == item["equals"]
    if "get_after" in expect:
        after = expect["get_after"]
        code, msg, resp = do_get(sw, {"paths": after["paths"]}, encoding=after.get("encoding"))
        assert code == after.get("status", "OK"), f"read-back Get: {code} {msg}"
        if resp is not None:
            check_get_response(sw, resp, {"values": after.get("values", [])})


def restore(sw: Switch, before: dict[str, Any]) -> None:
    """Put CONFIG_DB back as a user would: a full replace (sonic-gnmi: GCU config replace)."""
    config: dict[str, Any] = {}
    for key, fields in before.items():
        if "|" in key:
            table, name = key.split("|", 1)
            config.setdefault(table, {})[name] = {
                (f[:-1] if f.endswith("@") else f): (v.split(",") if f.endswith("@") else v)
                for f, v in fields.items() if f != "NULL"}
    do_set(sw, {"replace": [{"path": CDB, "json_ietf": config}]})


# -- subscribe ----------------------------------------------------------------------------------------------

def render_response(resp: Any) -> Any:
    if resp.WhichOneof("response") == "sync_response":
        return "sync"
    n = resp.update
    if n.delete:
        return {"delete": [render_path(p) for p in n.delete], "n_updates": len(n.update)}
    assert len(n.update) == 1, f"{len(n.update)} updates in one notification; sonic-gnmi sends one"
    kind, val = decode(n.update[0].val)
    return {"update": {"path": render_path(n.update[0].path), "kind": kind, "val": val}}


def matches(sw: Switch, got: Any, want: Any) -> bool:
    try:
        check_item(sw, got, want)
        return True
    except AssertionError:
        return False


def check_item(sw: Switch, got: Any, want: Any) -> None:
    if want == "sync":
        assert got == "sync", f"{got} where sonic-gnmi sends sync_response"
    elif "delete" in want:
        assert isinstance(got, dict) and got.get("delete") == want["delete"] and got["n_updates"] == 0, \
            f"{got} where sonic-gnmi sends a notification whose delete is {want['delete']}"
    else:
        assert isinstance(got, dict) and "update" in got, f"{got} where sonic-gnmi sends an update"
        assert got["update"]["path"] == want["update"]["path"]
        check_val(sw, want["update"]["val"], got["update"]["kind"], got["update"]["val"])


def subscribe(sw: Switch, case: dict[str, Any]) -> tuple[list[Any], tuple[str, str] | None, float]:
    req, expect = case["request"], case["expect"]
    sublist = gnmi_pb2.SubscriptionList(
        prefix=mkprefix(req.get("prefix", {})), mode=gnmi_pb2.SubscriptionList.Mode.Value(req["mode"]),
        encoding=gnmi_pb2.Encoding.Value(req["encoding"]), updates_only=req.get("updates_only", False),
        subscription=[gnmi_pb2.Subscription(path=mkpath(s["path"]),
                                            mode=gnmi_pb2.SubscriptionMode.Value(s.get("mode", "TARGET_DEFINED")),
                                            sample_interval=s.get("sample_interval", 0))
                      for s in req["subscriptions"]])
    polls: queue.Queue[int | None] = queue.Queue()

    def requests() -> Iterator[Any]:
        yield gnmi_pb2.SubscribeRequest(subscribe=sublist)
        while polls.get() is not None:
            yield gnmi_pb2.SubscribeRequest(poll=gnmi_pb2.Poll())

    call = sw.stub.Subscribe(requests(), metadata=sw.metadata(req), timeout=60)
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()

    def read() -> None:
        try:
            for resp in call:
                inbox.put(("resp", resp))
            inbox.put(("end", None))
        except grpc.RpcError as err:
            inbox.put(("err", err))

    threading.Thread(target=read, daemon=True).start()
    got: list[Any] = []
    error = None
    start = time.monotonic()
    synced = 0
    budget = expect.get("min_updates", {}).get("within", 8.0)
    stop_at = start + expect.get("silent_for", 20)
    try:
        while time.monotonic() < stop_at:
            try:
                what, item = inbox.get(timeout=max(0.05, stop_at - time.monotonic()))
            except queue.Empty:
                break
            if what == "end":
                break
            if what == "err":
                error = rpc_error(item)
                break
            got.append(render_response(item))
            if got[-1] == "sync":
                synced += 1
                if req["mode"] == "POLL":
                    if synced > req.get("polls", 0):
                        break
                    polls.put(1)
                elif req["mode"] == "STREAM" and synced == 1:
                    for action in case.get("actions", []):
                        if "redis" in action:
                            sw.redis_cmd(action["redis"])
                        else:
                            time.sleep(action["sleep"])
                    stop_at = time.monotonic() + budget
            if req["mode"] == "STREAM" and synced and stream_done(sw, got, expect):
                break
    finally:
        polls.put(None)
        call.cancel()
    return got, error, time.monotonic() - start


def stream_done(sw: Switch, got: list[Any], expect: dict[str, Any]) -> bool:
    updates = [g for g in got if isinstance(g, dict)]
    if "min_updates" in expect:
        return bool(len(updates) >= expect["min_updates"]["count"])
    if "eventually" in expect:
        return any(matches(sw, g, expect["eventually"]) for g in got[len(expect["sequence"]):])
    return bool(len(got) >= len(expect.get("sequence", [])))


# -- the test -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_sonic_gnmi_case(switches: dict[str, Switch], case: dict[str, Any]) -> None:
    sw = switches[case["switch"]]
    case = sw.subst(case)
    rpc = case["request"]["rpc"]
    for cmd in case.get("setup_redis", []):
        sw.redis_cmd(cmd)
    try:
        if rpc == "capabilities":
            run_capabilities(sw, case)
        elif rpc == "get":
            code, msg, resp = do_get(sw, case["request"])
            check_status(code, msg, case["expect"])
            if resp is not None:
                check_get_response(sw, resp, case["expect"])
        elif rpc == "set":
            run_set(sw, case)
        else:
            run_subscribe(sw, case)
    finally:
        for cmd in case.get("cleanup_redis", []):
            sw.redis_cmd(cmd)


def run_capabilities(sw: Switch, case: dict[str, Any]) -> None:
    expect = case["expect"]
    code, msg, resp = "OK", "", None
    try:
        resp = sw.stub.Capabilities(gnmi_pb2.CapabilityRequest(), metadata=sw.metadata(case["request"]),
                                    timeout=30)
    except grpc.RpcError as err:
        code, msg = rpc_error(err)
    check_status(code, msg, expect)
    if resp is None:
        return
    assert resp.gNMI_version == expect["gnmi_version"]
    assert [gnmi_pb2.Encoding.Name(e) for e in resp.supported_encodings] == expect["encodings"]
    models = [{"name": m.name, "organization": m.organization, "version": m.version} for m in resp.supported_models]
    assert all(m in models for m in expect["models_include"]), models


def run_set(sw: Switch, case: dict[str, Any]) -> None:
    expect = case["expect"]
    before = sw.raw("CONFIG_DB")
    (sw.dir / "gcu.patch").unlink(missing_ok=True)
    try:
        code, msg = do_set(sw, case["request"])
        check_status(code, msg, expect)
        check_set_effects(sw, expect, before)
    finally:
        undone = [do_set(sw, undo) for undo in case.get("undo", [])]
        if sw.raw("CONFIG_DB") != before:
            restore(sw, before)
            raise AssertionError(f"CONFIG_DB differs from before the case after its undo {undone}; "
                                 f"restored by a full replace: {sw.raw('CONFIG_DB') == before}")


def run_subscribe(sw: Switch, case: dict[str, Any]) -> None:
    expect = case["expect"]
    got, error, took = subscribe(sw, case)
    if "error" in expect:
        assert error is not None, f"stream ended without error; got {got}"
        check_status(*error, expect["error"])
        assert not [g for g in got if g != "sync"], f"sonic-gnmi sends the error first; got {got}"
        return
    assert error is None, f"stream error {error} after {got}"
    sequence = expect["sequence"]
    assert len(got) >= len(sequence), f"got {got}, sonic-gnmi sends {sequence}"
    for i, want in enumerate(sequence):
        check_item(sw, got[i], want)
    if expect.get("exact"):
        assert len(got) == len(sequence), f"extra notifications {got[len(sequence):]}"
    if "within" in expect:
        assert took < expect["within"], f"took {took:.1f} s"
    if "min_updates" in expect:
        updates = [g for g in got if isinstance(g, dict) and "update" in g]
        assert len(updates) >= expect["min_updates"]["count"], f"{len(updates)} samples"
        for g in updates:
            check_val(sw, expect["min_updates"]["val"], g["update"]["kind"], g["update"]["val"])
    if "eventually" in expect:
        assert any(matches(sw, g, expect["eventually"]) for g in got[len(sequence):]), got
