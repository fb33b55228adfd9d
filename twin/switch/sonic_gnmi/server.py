"""The gNMI service of one switch, routed and authenticated as sonic-gnmi's server.go does.

- Get: request types other than ALL and encodings other than JSON, JSON_IETF and PROTO are
  UNIMPLEMENTED. A prefix target naming a database goes to the legacy, read-only handler; origin
  `sonic-db` (prefix, else the paths') to the native handler; anything else is translib's
  (openconfig and SONiC models through translib), which twin does not run: UNIMPLEMENTED, saying
  so. A handler that cannot be made for the paths is NOT_FOUND. One notification per path.
- Set: native origin only (else translib: UNIMPLEMENTED); CONFIG_DB through GCU
  (sonic_gnmi.patch, sonic_gnmi.gcu), APPL_DB as ProducerStateTable writes, any other database
  refused. Failures are UNKNOWN, as sonic-gnmi returns plain errors.
- Subscribe: client_subscribe.go's routing (no origin and no target: UNIMPLEMENTED "Empty target
  data not supported"), then ONCE, POLL or STREAM (sonic_gnmi.stream).
- Authentication: gRPC metadata `username` and `password`; any failure is UNAUTHENTICATED
  "Unauthenticated" (authenticate drops basicAuth.go's own codes, such as PERMISSION_DENIED
  "Invalid Password", when password is the only method enabled). The agent's server checks it
  before a call runs (twin.switch.access.grpc_guard: before a thread or a Subscribe's first message,
  where server.go routes first); the checks here, after routing as server.go places them, stay
  for a servicer served without that guard.
- Capabilities: the models (SONiC's YANG modules, then sonic-db), JSON, JSON_IETF and PROTO,
  gNMI 0.7.0 and the SupportedBundleVersions extension (id 701).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import NoReturn

import grpc
from pygnmi.spec.v080 import gnmi_ext_pb2, gnmi_pb2, gnmi_pb2_grpc

from twin.switch.access.auth import PasswordAuth
from twin.switch.config.yang_check import YangCheck
from twin.switch.endpoint_protocol import SwitchEndpoint
from twin.switch.sonic_gnmi import appl
from twin.switch.sonic_gnmi.gcu import Gcu
from twin.switch.sonic_gnmi.legacy import LegacyClient
from twin.switch.sonic_gnmi.legacy_db import is_target_db
from twin.switch.sonic_gnmi.native import NativeClient
from twin.switch.sonic_gnmi.patch import set_plan
from twin.switch.sonic_gnmi.paths import ORIGIN, not_found, path_origin
from twin.switch.sonic_gnmi.status import GnmiStatus, unknown
from twin.switch.sonic_gnmi.stream import DataClient, Fatal, Sink

GNMI_VERSION = "0.7.0"
ENCODINGS = [gnmi_pb2.Encoding.JSON, gnmi_pb2.Encoding.JSON_IETF, gnmi_pb2.Encoding.PROTO]
SUPPORTED_VERSIONS_EXT = 701  # sonic-gnmi proto/constants.go
BUNDLE_VERSION = "1.0.0"  # translib's YANG bundle and base version, as a SONiC build reports them
NO_TRANSLIB = ("twin runs no translib: openconfig and other models are not served; use origin "
               "'sonic-db' (/sonic-db:CONFIG_DB/localhost/...) or a prefix target naming a database")
NOT_EMULATED_TARGETS = frozenset({"OPERATIONAL", "OTHERS", "SHOW", "EVENTS"})


def _bundle_versions() -> bytes:
    """SupportedBundleVersions{bundle_version = 1, base_version = 2} as protobuf bytes."""
    out = b""
    for number, text in ((1, BUNDLE_VERSION), (2, BUNDLE_VERSION)):
        data = text.encode()
        out += bytes([number << 3 | 2, len(data)]) + data
    return out


MAX_STATUS_MESSAGE = 1024  # gRPC clients refuse trailers over 16 KiB ("metadata size exceeds hard limit")


def _abort(context: grpc.ServicerContext, status: GnmiStatus) -> NoReturn:
    message = status.message
    if len(message) > MAX_STATUS_MESSAGE:
        message = message[:MAX_STATUS_MESSAGE] + f"... ({len(status.message)} characters)"
    context.abort(status.code, message)
    raise AssertionError("unreachable")  # context.abort raises


class SonicGnmiServicer(gnmi_pb2_grpc.gNMIServicer):  # type: ignore[misc]
    """gNMI for one switch, over its SONiC databases."""

    def __init__(self, endpoint: SwitchEndpoint, username: str, password: str,
                 yang: YangCheck | None = None) -> None:
        self.ep = endpoint
        self.auth = PasswordAuth(username, password)
        self.yang = yang
        self.gcu = Gcu(endpoint, yang, endpoint.workdir)

    # -- authentication -----------------------------------------------------------------------

    def authenticate(self, context: grpc.ServicerContext) -> None:
        """server.go authenticate (twin.switch.access.auth)."""
        self.auth.require(context)

    def _translib(self, context: grpc.ServicerContext) -> NoReturn:
        """Where sonic-gnmi makes a translib client (which authenticates first): twin has none."""
        self.authenticate(context)
        raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, NO_TRANSLIB)

    # -- routing ------------------------------------------------------------------------------

    def _data_client(self, prefix: gnmi_pb2.Path | None, paths: list[gnmi_pb2.Path], encoding: int,
                     for_get: bool, context: grpc.ServicerContext) -> DataClient:
        """Get's routing in server.go: legacy target, native origin, else translib."""
        target = prefix.target if prefix is not None else ""
        if target in NOT_EMULATED_TARGETS:
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, f"twin does not serve the {target} target")
        if is_target_db(target)[1]:
            try:
                legacy = LegacyClient(self.ep.db, prefix, paths)
                if for_get:
                    legacy.validate_paths()
            except GnmiStatus as exc:
                raise not_found(exc) from None
            return legacy
        if path_origin(prefix, paths) != ORIGIN:
            self._translib(context)
        try:
            return NativeClient(self.ep.db, prefix, paths, encoding)
        except GnmiStatus as exc:
            raise not_found(exc) from None

    # -- RPCs ---------------------------------------------------------------------------------

    def Capabilities(self, request: gnmi_pb2.CapabilityRequest,
                     context: grpc.ServicerContext) -> gnmi_pb2.CapabilityResponse:
        self.authenticate(context)
        models = [gnmi_pb2.ModelData(name=m, organization="SONiC", version=v)
                  for m, v in (self.yang.module_versions() if self.yang is not None else [])]
        models.append(gnmi_pb2.ModelData(name="sonic-db", organization="SONiC", version="0.1.0"))
        extension = gnmi_ext_pb2.Extension(registered_ext=gnmi_ext_pb2.RegisteredExtension(
            id=SUPPORTED_VERSIONS_EXT, msg=_bundle_versions()))
        return gnmi_pb2.CapabilityResponse(supported_models=models, supported_encodings=ENCODINGS,
                                           gNMI_version=GNMI_VERSION, extension=[extension])

    def Get(self, request: gnmi_pb2.GetRequest, context: grpc.ServicerContext) -> gnmi_pb2.GetResponse:
        try:
            if request.type != gnmi_pb2.GetRequest.DataType.ALL:
                raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "unsupported request type: "
                                 + gnmi_pb2.GetRequest.DataType.Name(request.type))
            if request.encoding not in ENCODINGS:
                raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "unsupported encoding: "
                                 + gnmi_pb2.Encoding.Name(request.encoding))
            prefix = request.prefix if request.HasField("prefix") else None
            client = self._data_client(prefix, list(request.path), request.encoding, True, context)
            self.authenticate(context)
            try:
                notifications = client.get()
            except GnmiStatus as exc:
                if exc.code == grpc.StatusCode.UNKNOWN:
                    raise GnmiStatus(grpc.StatusCode.NOT_FOUND, exc.message) from None
                raise
        except GnmiStatus as exc:
            _abort(context, exc)
        return gnmi_pb2.GetResponse(notification=notifications)

    def Set(self, request: gnmi_pb2.SetRequest, context: grpc.ServicerContext) -> gnmi_pb2.SetResponse:
        prefix = request.prefix if request.HasField("prefix") else None
        paths = [*request.delete, *(u.path for u in request.replace), *(u.path for u in request.update)]
        try:
            if path_origin(prefix, paths) != ORIGIN:
                self._translib(context)
            try:
                client = NativeClient(self.ep.db, prefix, paths)
            except GnmiStatus as exc:
                raise not_found(exc) from None
            self.authenticate(context)
            self._set(client, prefix, request)
        except GnmiStatus as exc:
            _abort(context, exc)
        results = [gnmi_pb2.UpdateResult(path=p, op=gnmi_pb2.UpdateResult.DELETE) for p in request.delete]
        results += [gnmi_pb2.UpdateResult(path=u.path, op=gnmi_pb2.UpdateResult.REPLACE) for u in request.replace]
        results += [gnmi_pb2.UpdateResult(path=u.path, op=gnmi_pb2.UpdateResult.UPDATE) for u in request.update]
        return gnmi_pb2.SetResponse(prefix=prefix, response=results)

    def _set(self, client: NativeClient, prefix: gnmi_pb2.Path | None, request: gnmi_pb2.SetRequest) -> None:
        """MixedDbClient.Set: CONFIG_DB through GCU, APPL_DB as a producer writes it."""
        delete, replace, update = list(request.delete), list(request.replace), list(request.update)
        if client.target == "CONFIG_DB":
            with self.ep.lock:
                self.gcu.forget_full()
                current = self.ep.config()  # read once: the whole Set runs under the lock
                plan = set_plan(prefix, delete, replace, update, current)
                if plan.kind == "full-validate":
                    self.gcu.validate_full(plan.config)
                elif plan.kind == "replace":
                    self.gcu.replace(plan.config, current)
                elif plan.patch:
                    self.gcu.apply_patch(plan.patch, current=current)
        elif client.target == "APPL_DB":
            appl.set_db(client, delete, replace, update)
        else:
            raise unknown(f"Set RPC does not support {client.target}")

    def Subscribe(self, request_iterator: Iterator[gnmi_pb2.SubscribeRequest],
                  context: grpc.ServicerContext) -> Iterator[gnmi_pb2.SubscribeResponse]:
        try:
            first = next(request_iterator)
        except StopIteration:
            _abort(context, GnmiStatus(grpc.StatusCode.ABORTED, "stream EOF received before init"))
        if not first.HasField("subscribe"):
            _abort(context, GnmiStatus(grpc.StatusCode.INVALID_ARGUMENT,
                                       f"first message must be SubscriptionList: {first}"))
        slist = first.subscribe
        try:
            client = self._subscribe_client(slist)
        except GnmiStatus as exc:
            _abort(context, exc)
        self.authenticate(context)
        yield from _run(client, slist, request_iterator, context)

    def _subscribe_client(self, slist: gnmi_pb2.SubscriptionList) -> DataClient:
        """client_subscribe.go Run's routing."""
        prefix = slist.prefix if slist.HasField("prefix") else None
        paths = [s.path for s in slist.subscription]
        origin = prefix.origin if prefix is not None else ""
        target = prefix.target if prefix is not None else ""
        path_only = path_origin(None, paths)
        if not origin:
            origin = path_only
        elif path_only and path_only != origin:
            raise GnmiStatus(grpc.StatusCode.INVALID_ARGUMENT, "Origin conflict between prefix and paths")
        if origin == ORIGIN:
            try:
                return NativeClient(self.ep.db, prefix, paths, gnmi_pb2.Encoding.JSON_IETF)
            except GnmiStatus as exc:
                raise GnmiStatus(grpc.StatusCode.NOT_FOUND, exc.message) from None
        if origin == "openconfig":
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, NO_TRANSLIB)
        if origin:
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, f"Unsupported origin: {origin}")
        if not target:
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "Empty target data not supported")
        if target == "SHOW":
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, "SHOW does not support subscribe operations")
        if target in NOT_EMULATED_TARGETS:
            raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, f"twin does not serve the {target} target")
        if is_target_db(target)[1]:
            try:
                return LegacyClient(self.ep.db, prefix, paths)
            except GnmiStatus as exc:
                raise GnmiStatus(grpc.StatusCode.NOT_FOUND, exc.message) from None
        raise GnmiStatus(grpc.StatusCode.UNIMPLEMENTED, NO_TRANSLIB)


def _run(client: DataClient, slist: gnmi_pb2.SubscriptionList, requests: Iterator[gnmi_pb2.SubscribeRequest],
         context: grpc.ServicerContext) -> Iterator[gnmi_pb2.SubscribeResponse]:
    """client_subscribe.go Run after routing: start the mode's work, send what the sink gets."""
    sink = Sink()
    stop = threading.Event()
    context.add_callback(stop.set)
    mode = slist.mode
    if mode == gnmi_pb2.SubscriptionList.STREAM:
        threading.Thread(target=client.stream, args=(slist, sink, stop), daemon=True).start()
    elif mode == gnmi_pb2.SubscriptionList.ONCE:
        threading.Thread(target=client.once, args=(sink,), daemon=True).start()
    elif mode == gnmi_pb2.SubscriptionList.POLL:
        threading.Thread(target=_polls, args=(client, requests, sink, stop), daemon=True).start()
    else:
        _abort(context, GnmiStatus(grpc.StatusCode.INVALID_ARGUMENT, f"Unkown subscription mode: {slist}"))
    try:
        while context.is_active() and not stop.is_set():
            item = sink.next(timeout=0.5)
            if item is None:
                continue
            if isinstance(item, Fatal):
                _abort(context, GnmiStatus(item.code, item.message))
            yield item
            if mode == gnmi_pb2.SubscriptionList.ONCE and item.sync_response:
                return
    finally:
        stop.set()


def _polls(client: DataClient, requests: Iterator[gnmi_pb2.SubscribeRequest], sink: Sink,
           stop: threading.Event) -> None:
    """POLL: one round now, one per Poll request; any other request ends the stream."""
    client.poll(sink)
    try:
        for req in requests:
            if stop.is_set() or not req.HasField("poll"):
                break
            client.poll(sink)
    except grpc.RpcError:
        pass
    finally:
        stop.set()

