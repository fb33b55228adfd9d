"""The gNMI agent: every switch of a lab answers gNMI on its own management address.

One process per lab (`python -m twin.switch.agent --run-dir /run/twin/<lab>`), one gRPC server
per switch, each bound inside that switch's network namespace, so endpoints stay separate.
It looks like SONiC's gNMI server: origin `sonic-db`, CONFIG_DB/APPL_DB/STATE_DB/COUNTERS_DB.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import jsonpatch
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from twin.gnmi.paths import DbPath, PathError, parse
from twin.switch import configdb, sshd
from twin.switch.cfgmgr import ConfigDaemon
from twin.switch.configdb import ConfigDb
from twin.switch.endpoint import Endpoint, SetRejected
from twin.switch.endpoint_protocol import SwitchEndpoint
from twin.switch.netns_socket import in_netns
from twin.switch.producers import SwitchProducers
from twin.switch.redis_server import socket_path
from twin.switch.sonic_redis import SonicEndpoint, SonicRedis
from twin.switch.switchd import SwitchDaemons

GNMI_VERSION = "0.7.0"
SwitchParts = tuple[ConfigDaemon, SwitchProducers]  # what twin runs for one of its own switches


def _now_ns() -> int:
    return time.time_ns()


def _lookup(tree: Any, p: DbPath) -> Any:
    """The subtree of one DB that `p` names; KeyError when it does not exist."""
    node = tree
    for part in (p.table, p.key, p.field):
        if part is None:
            break
        if not isinstance(node, dict) or part not in node:
            raise KeyError(str(p))
        node = node[part]
    return node


def _typed(value: Any, encoding: int) -> gnmi_pb2.TypedValue:
    data = json.dumps(value).encode()
    if encoding == gnmi_pb2.Encoding.JSON:
        return gnmi_pb2.TypedValue(json_val=data)
    if encoding == gnmi_pb2.Encoding.PROTO and not isinstance(value, dict):
        return gnmi_pb2.TypedValue(string_val=str(value))
    return gnmi_pb2.TypedValue(json_ietf_val=data)


def _decode(value: gnmi_pb2.TypedValue) -> Any:
    kind = value.WhichOneof("value")
    if kind in ("json_ietf_val", "json_val"):
        raw = getattr(value, kind)
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SetRejected(f"value is not JSON: {exc}") from None
    if kind in ("string_val", "ascii_val"):
        return getattr(value, kind)
    if kind in ("int_val", "uint_val"):
        return str(getattr(value, kind))
    if kind == "bool_val":
        return "true" if value.bool_val else "false"
    raise SetRejected("a Set value needs an encoding: send json_ietf_val (pygnmi: encoding='json_ietf')")


class GnmiServicer(gnmi_pb2_grpc.gNMIServicer):  # type: ignore[misc]
    def __init__(self, endpoint: SwitchEndpoint, username: str, password: str) -> None:
        self.ep = endpoint
        self.username, self.password = username, password

    # -- plumbing -----------------------------------------------------------------------------

    def _auth(self, context: grpc.ServicerContext) -> None:
        meta = dict(context.invocation_metadata())
        if meta.get("username") != self.username or meta.get("password") != self.password:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "wrong or missing username/password metadata")

    def _read(self, p: DbPath) -> Any:
        if p.db == "CONFIG_DB":
            return _lookup(self.ep.config(), p)
        readers = self.ep.state.tables()[p.db]
        if p.table is None:
            return {name: read() for name, read in readers.items()}
        if p.table not in readers:
            raise KeyError(str(p))
        return _lookup({p.table: readers[p.table]()}, p)

    def _notification(self, prefix: gnmi_pb2.Path | None, paths: list[gnmi_pb2.Path],
                      encoding: int) -> gnmi_pb2.Notification:
        updates = []
        for path in paths:
            p = parse(prefix, path)
            updates.append(gnmi_pb2.Update(path=path, val=_typed(self._read(p), encoding)))
        return gnmi_pb2.Notification(timestamp=_now_ns(), prefix=prefix, update=updates)

    # -- RPCs ---------------------------------------------------------------------------------

    def Capabilities(self, request: Any, context: grpc.ServicerContext) -> gnmi_pb2.CapabilityResponse:
        self._auth(context)
        return gnmi_pb2.CapabilityResponse(
            supported_models=[gnmi_pb2.ModelData(name="sonic-db", organization="SONiC", version="0.1.0")],
            supported_encodings=[gnmi_pb2.Encoding.JSON, gnmi_pb2.Encoding.JSON_IETF, gnmi_pb2.Encoding.PROTO],
            gNMI_version=GNMI_VERSION)

    def Get(self, request: gnmi_pb2.GetRequest, context: grpc.ServicerContext) -> gnmi_pb2.GetResponse:
        self._auth(context)
        prefix = request.prefix if request.HasField("prefix") else None
        try:
            note = self._notification(prefix, list(request.path), request.encoding)
        except PathError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except KeyError as exc:
            context.abort(grpc.StatusCode.NOT_FOUND, f"{exc.args[0]} does not exist")
        return gnmi_pb2.GetResponse(notification=[note])

    def Set(self, request: gnmi_pb2.SetRequest, context: grpc.ServicerContext) -> gnmi_pb2.SetResponse:
        self._auth(context)
        prefix = request.prefix if request.HasField("prefix") else None
        results = []
        try:
            new = self.ep.config()
            for path in request.delete:
                new = _delete(new, parse(prefix, path))
                results.append(gnmi_pb2.UpdateResult(path=path, op=gnmi_pb2.UpdateResult.DELETE))
            for upd in request.replace:
                new = _replace(new, parse(prefix, upd.path), _decode(upd.val))
                results.append(gnmi_pb2.UpdateResult(path=upd.path, op=gnmi_pb2.UpdateResult.REPLACE))
            for upd in request.update:
                new = _update(new, parse(prefix, upd.path), _decode(upd.val))
                results.append(gnmi_pb2.UpdateResult(path=upd.path, op=gnmi_pb2.UpdateResult.UPDATE))
            self.ep.commit(new)
        except (PathError, SetRejected) as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return gnmi_pb2.SetResponse(prefix=prefix, response=results, timestamp=_now_ns())

    def Subscribe(self, request_iterator: Iterator[gnmi_pb2.SubscribeRequest],
                  context: grpc.ServicerContext) -> Iterator[gnmi_pb2.SubscribeResponse]:
        self._auth(context)
        from twin.switch.subscribe import serve_subscription

        try:
            yield from serve_subscription(self, request_iterator, context)
        except PathError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except KeyError as exc:
            context.abort(grpc.StatusCode.NOT_FOUND, f"{exc.args[0]} does not exist")


# -- Set semantics over the CONFIG_DB tree (JSON patch underneath) ----------------------------

def _pointer(p: DbPath) -> str:
    parts = [x for x in (p.table, p.key, p.field) if x is not None]
    return "".join("/" + x.replace("~", "~0").replace("/", "~1") for x in parts)


def _check_db(p: DbPath) -> None:
    if p.db != "CONFIG_DB":
        raise SetRejected(f"{p.db} is read-only; Set writes CONFIG_DB")


def _apply_patch(db: ConfigDb, ops: list[dict[str, Any]]) -> ConfigDb:
    try:
        result: ConfigDb = jsonpatch.apply_patch(db, ops)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        raise SetRejected(f"cannot apply {ops[0]['op']} at {ops[0]['path'] or '/'}: {exc}") from None
    return result


def _delete(db: ConfigDb, p: DbPath) -> ConfigDb:
    _check_db(p)
    if p.table is None:
        return {}
    return _apply_patch(db, [{"op": "remove", "path": _pointer(p)}])


def _replace(db: ConfigDb, p: DbPath, value: Any) -> ConfigDb:
    _check_db(p)
    if p.table is None:
        if not isinstance(value, dict):
            raise SetRejected("a replace of the whole CONFIG_DB needs a JSON object of tables")
        stored: ConfigDb = _stringify(value)
        return stored
    ops = _ensure_parents(db, p)
    ops.append({"op": "add", "path": _pointer(p), "value": _stringify(value)})
    return _apply_patch(db, ops)


def _update(db: ConfigDb, p: DbPath, value: Any) -> ConfigDb:
    """gNMI update merges: every leaf of `value` is added or replaced, nothing else is removed."""
    _check_db(p)
    value = _stringify(value)
    if not isinstance(value, dict):
        return _replace(db, p, value)
    ops = _ensure_parents(db, p)
    here = _pointer(p)
    current: Any = db
    for part in (p.table, p.key, p.field):
        if part is None:
            break
        current = current.get(part) if isinstance(current, dict) else None
    if current is None:
        ops.append({"op": "add", "path": here, "value": value})
    elif not isinstance(current, dict):
        raise SetRejected(f"cannot merge an object into the leaf {p}")
    else:
        ops += _merge_ops(current, value, here)
    return _apply_patch(db, ops) if ops else configdb.copy_db(db)


def _merge_ops(current: dict[str, Any], value: dict[str, Any], base: str) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for k, v in value.items():
        ptr = base + "/" + k.replace("~", "~0").replace("/", "~1")
        if isinstance(v, dict) and isinstance(current.get(k), dict):
            ops += _merge_ops(current[k], v, ptr)
        else:
            ops.append({"op": "add", "path": ptr, "value": v})
    return ops


def _ensure_parents(db: ConfigDb, p: DbPath) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    node: Any = db
    path = ""
    parts = [x for x in (p.table, p.key, p.field) if x is not None][:-1]
    for part in parts:
        path += "/" + part.replace("~", "~0").replace("/", "~1")
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            ops.append({"op": "add", "path": path, "value": {}})
            node = {}
    return ops


def _stringify(value: Any) -> Any:
    """CONFIG_DB holds strings; numbers and booleans sent as JSON are stored as SONiC would."""
    if isinstance(value, dict):
        return {str(k): _stringify(v) for k, v in value.items()}
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):  # a leaf-list (route_map_in, ACL_TABLE ports): config_db.json keeps a list
        return [_stringify(v) for v in value]
    return value


# -- the process ------------------------------------------------------------------------------

def _add_port(server: grpc.Server, address: str, creds: grpc.ServerCredentials | None) -> int:
    port: int = server.add_secure_port(address, creds) if creds is not None else server.add_insecure_port(address)
    return port


def _endpoint(sw: dict[str, Any], templates: Path | None = None) -> tuple[SwitchEndpoint, SwitchParts | None]:
    """The switch behind one agent.json entry, and its daemons when twin runs them.

    A SONiC container (`"backend": "sonic-redis"`, with `redis_socket` or `redis_host`/`redis_port`)
    runs SONiC's own daemons; twin's switch has its databases on `redis.sock` in its run directory
    and its daemons run here."""
    if sw.get("backend") == "sonic-redis":
        return SonicEndpoint.from_settings(sw), None
    rundir = Path(sw["rundir"])
    db = SonicRedis(unix_socket=socket_path(rundir))
    daemon = ConfigDaemon(sw["name"], sw["netns"], rundir, db, ifmap=sw.get("ifmap"), templates=templates)
    producers = SwitchProducers(sw["name"], sw["netns"], rundir, db)
    return Endpoint(name=sw["name"], rundir=rundir, ports=sw["ports"], daemon=daemon), (daemon, producers)


def serve(run_dir: Path) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = json.loads((run_dir / "agent.json").read_text())
    creds = None
    if settings["tls"]:
        creds = grpc.ssl_server_credentials([((run_dir / "tls.key").read_bytes(), (run_dir / "tls.crt").read_bytes())])
    servers = []
    parts: list[SwitchParts] = []
    for sw in settings["switches"]:
        ep, own = _endpoint(sw, Path(settings["sonic_templates"]) if settings.get("sonic_templates") else None)
        ep.recover()
        if own is not None:
            parts.append(own)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        gnmi_pb2_grpc.add_gNMIServicer_to_server(GnmiServicer(ep, settings["username"], settings["password"]), server)
        address = f"{sw['mgmt']}:{settings['port']}"
        bind = functools.partial(_add_port, server, address, creds)
        if sw.get("netns"):
            in_netns(sw["netns"], bind)
        else:  # a container front may listen in the agent's own namespace
            bind()
        servers.append(server)
    daemons = SwitchDaemons([d for d, _ in parts], [p for _, p in parts])
    daemons.start()
    for server in servers:
        server.start()
    if settings.get("ssh_port"):
        sshd.start(settings["switches"], settings["username"], settings["password"], settings["ssh_port"],
                   run_dir / "ssh_host_key")
    (run_dir / "agent.ready").write_text(str(os.getpid()))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    for server in servers:
        server.stop(grace=0.5)
    daemons.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="twin's gNMI agent for the switches of one lab")
    parser.add_argument("--run-dir", type=Path, required=True)
    serve(parser.parse_args().run_dir)


if __name__ == "__main__":
    main()
