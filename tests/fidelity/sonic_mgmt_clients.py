"""The clients sonic-mgmt's tests/gnmi drive a SONiC switch with, re-expressed over Python's gRPC: the
requests they build and the text they print, so that sonic-mgmt's helpers can read that text as they do.

- `PyGnmicli`: google/gnxi's gnmi_cli_py/py_gnmicli.py (gnxi 208acfa8 with sonic-buildimage's
  dockers/docker-ptf/gnxi-patches), which the PTF image runs for Get, Set and STREAM Subscribe: its xpath
  splitting and key parsing, a prefix that always carries `--xpath_origin` and `--xpath_target`,
  values (`@file` as JSON_IETF, `$file` as proto bytes, "" as a delete, else a typed scalar), Subscribe's
  SubscriptionList (interval in ms, submode, mode, encoding), and what it prints.
- `GnmiCli`: sonic-gnmi's gnmi_cli (openconfig/gnmi's cmd/gnmi_cli with sonic-gnmi's patches), which
  sonic-mgmt runs in the gnmi container for Capabilities and POLL: a POLL SubscriptionList whose prefix
  carries `-origin`, one poll per `-count` after the initial sync, each followed by the cache's JSON.
- `Grpcurl`: grpcurl 1.9 as tests/common/ptf_grpc.py runs it, without -proto files: services and
  messages learnt from the server's reflection, the request given as JSON, answers printed as jsonpb
  (camelCase names, 64-bit integers as strings, defaults left out), a failure as `ERROR:` with Go's code
  name; `PtfGrpcError` and its subclasses as PtfGrpc raises them.

sonic-mgmt authenticates with a client certificate; a twin switch authenticates by password, so every
client here sends `username` and `password` metadata, as py_gnmicli's `-user`/`-pass` and grpcurl's
`-H` send them (the switch's server certificate is the trusted root, as `-rcert` or `-cacert` give it).
"""

from __future__ import annotations

import datetime
import json
import queue
import re
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory, text_format
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

DASHES = "-" * 25
GET_MARK = "The GetResponse is below\n" + DASHES + "\n"
# Go's names of the gRPC codes (google.golang.org/grpc/codes), as grpcurl and gnmi_cli print them
GO_CODES = {
    "OK": "OK", "CANCELLED": "Canceled", "UNKNOWN": "Unknown", "INVALID_ARGUMENT": "InvalidArgument",
    "DEADLINE_EXCEEDED": "DeadlineExceeded", "NOT_FOUND": "NotFound", "ALREADY_EXISTS": "AlreadyExists",
    "PERMISSION_DENIED": "PermissionDenied", "RESOURCE_EXHAUSTED": "ResourceExhausted",
    "FAILED_PRECONDITION": "FailedPrecondition", "ABORTED": "Aborted", "OUT_OF_RANGE": "OutOfRange",
    "UNIMPLEMENTED": "Unimplemented", "INTERNAL": "Internal", "UNAVAILABLE": "Unavailable",
    "DATA_LOSS": "DataLoss", "UNAUTHENTICATED": "Unauthenticated",
}


@dataclass(frozen=True)
class Target:
    """A switch's gNMI/gNOI port, its credentials, and the certificate it shows (None: plaintext)."""

    host: str
    port: int
    username: str
    password: str
    tls: bool = True

    def channel(self) -> grpc.Channel:
        address = f"{self.host}:{self.port}"
        if not self.tls:
            return grpc.insecure_channel(address)
        cert = ssl.get_server_certificate((self.host, self.port)).encode()
        return grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=cert))

    @property
    def metadata(self) -> list[tuple[str, str]]:
        return [("username", self.username), ("password", self.password)]


@dataclass
class Run:
    """What a command-line client left: its exit status and what it printed."""

    rc: int
    stdout: str
    stderr: str = ""


# -- py_gnmicli ---------------------------------------------------------------------------------------------

def xpath_names(xpath: str) -> list[str]:
    """py_gnmicli's _path_names: split on '/' that is neither escaped nor inside [...]; escapes dropped."""
    xpath = xpath.strip().strip("/")
    if not xpath:
        return []
    names: list[str] = []
    current = ""
    depth_open = False
    previous = ""
    for char in xpath + "/":
        if char == "/" and previous != "\\" and not depth_open:
            if current:
                names.append(current.replace("\\", ""))
            current = ""
        else:
            if char == "[" and previous != "\\":
                depth_open = True
            elif char == "]" and previous != "\\":
                depth_open = False
            current += char
        previous = char
    return [] if depth_open else names


def xpath_path(names: list[str]) -> gnmi_pb2.Path:
    """py_gnmicli's _parse_path: `name[k=v][k2=v2]` becomes an element with keys."""
    elems = []
    for word in names:
        name, bracket, _ = word.partition("[")
        keys = {}
        if bracket:
            for pair in re.findall(r"\[([^]]*)\]", word):
                keys[pair.split("=")[0]] = pair.split("=")[-1]
        elems.append(gnmi_pb2.PathElem(name=name, key=keys))
    return gnmi_pb2.Path(elem=elems)


def typed_value(value: str, files: Path) -> gnmi_pb2.TypedValue | None:
    """py_gnmicli's _get_val: '@FILE' JSON_IETF, '$FILE' proto bytes, '' a delete (None), else a scalar."""
    if "@" in value:
        data = json.loads((files / value.strip("@").lstrip("/")).read_bytes())
        return gnmi_pb2.TypedValue(json_ietf_val=json.dumps(data).encode())
    if "$" in value:
        return gnmi_pb2.TypedValue(proto_bytes=(files / value.strip("$").lstrip("/")).read_bytes())
    if value == "":
        return None
    if value.lstrip("-").isdigit():
        return gnmi_pb2.TypedValue(int_val=int(value))
    if value[0].isdigit() or (value.startswith("-") and value[1:2].isdigit()):
        return gnmi_pb2.TypedValue(float_val=float(value))
    if value.capitalize() in ("True", "False"):
        return gnmi_pb2.TypedValue(bool_val=value.capitalize() == "True")
    return gnmi_pb2.TypedValue(string_val=value)


class PyGnmicli:
    """py_gnmicli.py against one switch (`-t HOST -p PORT -user U -pass P -rcert CERT`). Files named in
    values (`@/root/port.txt`) are read under `files` (the PTF's /root)."""

    def __init__(self, target: Target, files: Path) -> None:
        self.target, self.files = target, files

    def _stub(self) -> tuple[grpc.Channel, Any]:
        channel = self.target.channel()
        return channel, gnmi_pb2_grpc.gNMIStub(channel)

    @staticmethod
    def _prefix(origin: str | None, target: str | None) -> gnmi_pb2.Path:
        return gnmi_pb2.Path(origin=origin or "", target=target or "")

    def get(self, xpaths: list[str], origin: str | None = None, target: str | None = None,
            encoding: int = 0, timeout: float = 30) -> Run:
        """`-m get`: one GetRequest; each JSON_IETF value printed indented, then a line of dashes."""
        paths = [xpath_path(xpath_names(x)) for x in xpaths]
        out = [f"Performing GetRequest, encoding=JSON_IETF to {self.target.host}  with the following gNMI Path\n"
               f" {DASHES} \n {[text_format.MessageToString(p, as_one_line=True) for p in paths]}\n"]
        channel, stub = self._stub()
        try:
            response = stub.Get(gnmi_pb2.GetRequest(prefix=self._prefix(origin, target), path=paths,
                                                    encoding=encoding),  # type: ignore[arg-type]
                                metadata=self.target.metadata, timeout=timeout)
        except grpc.RpcError as err:
            return Run(1, "".join(out) + f"GRPC error\n {err.details()}\n")
        finally:
            channel.close()
        out.append(GET_MARK + "\n")
        first = response.notification[0].update[0].val if response.notification and \
            response.notification[0].update else None
        if first is None:
            return Run(1, "".join(out), "IndexError: list index (out of range)\n")
        if first.json_ietf_val:
            for notification in response.notification:
                for update in notification.update:
                    out.append(json.dumps(json.loads(update.val.json_ietf_val), indent=2) + "\n")
                    out.append(DASHES + "\n\n")
        elif first.string_val:
            out.append(first.string_val + "\n")
        else:
            out.append("JSON Format specified, but gNMI Response was not json_ietf_val\n" + str(response) + "\n")
        return Run(0, "".join(out))

    def set(self, mode: str, xpaths: list[str], values: list[str], origin: str | None = None,
            target: str | None = None, timeout: float = 30) -> Run:
        """`-m set-update|set-replace|set-delete`: a path with value "" is a delete, the others the mode's."""
        delete, update, replace = [], [], []
        for xpath, value in zip(xpaths, values, strict=False):
            path = xpath_path(xpath_names(xpath))
            val = typed_value(value, self.files)
            if val is None:
                delete.append(path)
            elif mode == "set-update":
                update.append(gnmi_pb2.Update(path=path, val=val))
            elif mode == "set-replace":
                replace.append(gnmi_pb2.Update(path=path, val=val))
        out = f"Performing SetRequest {mode}, encoding=JSON_IETF  to  {self.target.host}\n"
        channel, stub = self._stub()
        try:
            response = stub.Set(gnmi_pb2.SetRequest(prefix=self._prefix(origin, target), delete=delete,
                                                    update=update, replace=replace),
                                metadata=self.target.metadata, timeout=timeout)
        except grpc.RpcError as err:
            return Run(1, out + f"GRPC error\n {err.details()}\n")
        finally:
            channel.close()
        return Run(0, out + f"The SetRequest response is below\n{DASHES}\n {response}\n")

    def subscribe(self, xpaths: list[str], origin: str | None = None, target: str | None = None,
                  encoding: int = 0, subscribe_mode: int = 0, submode: int = 2, interval_ms: int = 10000,
                  update_count: int = 0, timeout: float | None = None) -> Run:
        """`-m subscribe`: the request printed, then every response with 'response received', counting
        updates up to `--update_count`; an error ends it with 'GRPC error'."""
        subscriptions = [gnmi_pb2.Subscription(path=xpath_path(xpath_names(x)), mode=submode,  # type: ignore[arg-type]
                                               sample_interval=interval_ms * 1000000, heartbeat_interval=0,
                                               suppress_redundant=False) for x in xpaths]
        request = gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(
            prefix=self._prefix(origin, target), mode=subscribe_mode, allow_aggregation=False,  # type: ignore[arg-type]
            encoding=encoding, subscription=subscriptions))  # type: ignore[arg-type]
        out = ["Sending SubscribeRequest\n" + str(request) + "\n"]
        done = threading.Event()

        def requests() -> Iterator[gnmi_pb2.SubscribeRequest]:
            yield request
            done.wait()

        channel, stub = self._stub()
        call = stub.Subscribe(requests(), timeout, metadata=self.target.metadata)
        updates = 0
        try:
            for response in call:
                out.append(f"{datetime.datetime.now()} response received: \n")
                if response.HasField("sync_response"):
                    out.append(str(response) + "\n")
                elif response.HasField("update"):
                    out.append(str(response) + "\n")
                    updates += 1
                else:
                    out.append("Unknown response received:\n" + str(response) + "\n")
                if update_count and updates == update_count:
                    out.append(f"Max update count reached {updates}\n")
                    break
        except grpc.RpcError as err:
            out.append(f"Received an exception from server side and error message is: '{err}'.\n")
            code = err.code()
            if code == grpc.StatusCode.UNAVAILABLE:
                out.append(f"Client receives an exception '{err.details()}' indicating gNMI server is shut "
                           "down and Exiting ...\n")
                return Run(2, "".join(out))
            out.append(f"GRPC error\n {err.details()}\n")
            return Run(1, "".join(out))
        finally:
            done.set()
            call.cancel()
            channel.close()
        return Run(0, "".join(out))


# -- gnmi_cli -----------------------------------------------------------------------------------------------

def _json_value(val: gnmi_pb2.TypedValue) -> Any:
    kind = val.WhichOneof("value")
    if kind in ("json_ietf_val", "json_val"):
        return json.loads(getattr(val, kind))
    return getattr(val, kind) if kind else None


class GnmiCli:
    """gnmi_cli -client_types=gnmi -a HOST:PORT (with `-with_user_pass`'s credentials, -ca_crt the
    switch's certificate)."""

    def __init__(self, target: Target) -> None:
        self.target = target

    def capabilities(self, timeout: float = 30) -> Run:
        """`-capabilities`: the CapabilityResponse as text; a failure logged to stderr."""
        channel = self.target.channel()
        try:
            response = gnmi_pb2_grpc.gNMIStub(channel).Capabilities(gnmi_pb2.CapabilityRequest(),
                                                                     metadata=self.target.metadata, timeout=timeout)
        except grpc.RpcError as err:
            return Run(1, "", f"E gnmi_cli.go] could not get capabilities: rpc error: code = "
                              f"{GO_CODES[err.code().name]} desc = {err.details()}\n")
        finally:
            channel.close()
        return Run(0, text_format.MessageToString(response))

    def poll(self, queries: list[str], origin: str, count: int, interval_s: float, timeout: float = 30) -> Run:
        """`-query_type=polling -polling_interval Ns -count C -origin O -q PATH...`: subscribe, read the
        initial round to its sync, then C times: Poll, read to the sync, print the cache as JSON."""
        paths = [gnmi_pb2.Path(elem=[gnmi_pb2.PathElem(name=n) for n in q.strip("/").split("/")]) for q in queries]
        request = gnmi_pb2.SubscribeRequest(subscribe=gnmi_pb2.SubscriptionList(
            prefix=gnmi_pb2.Path(target="", origin=origin), mode=gnmi_pb2.SubscriptionList.POLL,
            subscription=[gnmi_pb2.Subscription(path=p, mode=gnmi_pb2.SubscriptionMode.TARGET_DEFINED)
                          for p in paths]))
        polls: queue.Queue[bool] = queue.Queue()

        def requests() -> Iterator[gnmi_pb2.SubscribeRequest]:
            yield request
            while polls.get():
                yield gnmi_pb2.SubscribeRequest(poll=gnmi_pb2.Poll())

        channel = self.target.channel()
        call = gnmi_pb2_grpc.gNMIStub(channel).Subscribe(requests(), metadata=self.target.metadata, timeout=timeout)
        cache: dict[str, Any] = {}
        out: list[str] = []
        try:
            responses = iter(call)
            self._to_sync(responses, cache)
            for i in range(count):
                polls.put(True)
                self._to_sync(responses, cache)
                out.append(json.dumps(cache, indent=2) + "\n")
                if i < count - 1:
                    time.sleep(interval_s)
        except grpc.RpcError as err:
            return Run(1, "".join(out), f"E gnmi_cli.go] cli.QueryDisplay:\n\tsendQueryAndDisplay: rpc error: "
                                        f"code = {GO_CODES[err.code().name]} desc = {err.details()}\n")
        except StopIteration:
            return Run(1, "".join(out), "E gnmi_cli.go] cli.QueryDisplay: stream ended before a sync\n")
        finally:
            polls.put(False)
            call.cancel()
            channel.close()
        return Run(0, "".join(out))

    @staticmethod
    def _to_sync(responses: Iterator[gnmi_pb2.SubscribeResponse], cache: dict[str, Any]) -> None:
        while True:
            response = next(responses)
            if response.HasField("sync_response"):
                return
            notification = response.update
            base = [e.name for e in notification.prefix.elem]
            for update in notification.update:
                node = cache
                names = [*base, *(e.name for e in update.path.elem)]
                for name in names[:-1]:
                    node = node.setdefault(name, {})
                node[names[-1]] = _json_value(update.val)


# -- grpcurl and sonic-mgmt's PtfGrpc around it -------------------------------------------------------------

class PtfGrpcError(Exception):
    """tests/common/ptf_grpc.py's errors, by what grpcurl printed."""


class GrpcConnectionError(PtfGrpcError):
    pass


class GrpcCallError(PtfGrpcError):
    pass


class GrpcTimeoutError(PtfGrpcError):
    pass


def ptf_grpc_error(run: Run) -> PtfGrpcError:
    """PtfGrpc._execute_grpcurl's reading of a failed grpcurl."""
    text = (run.stderr or run.stdout).strip()
    low = text.lower()
    if any(t in low for t in ("connection refused", "no such host", "network is unreachable", "dial tcp",
                              "connection failed")):
        return GrpcConnectionError(f"Connection failed: {text}")
    if any(t in low for t in ("timeout", "deadline exceeded")):
        return GrpcTimeoutError(f"Operation timed out: {text}")
    if any(t in low for t in ("unknown service", "unknown method", "not found", "unimplemented",
                              "service not found")):
        return GrpcCallError(f"Service or method not found: {text}")
    return PtfGrpcError(f"grpcurl failed: rc={run.rc} stdout='{run.stdout.strip()}' stderr='{run.stderr.strip()}'")


class Grpcurl:
    """grpcurl -cacert CERT -H 'username: U' -H 'password: P' -connect-timeout 10 -format json ADDRESS ..."""

    def __init__(self, target: Target, connect_timeout: float = 10) -> None:
        self.target, self.timeout = target, connect_timeout

    def list(self) -> Run:
        channel = self.target.channel()
        try:
            services = list(ProtoReflectionDescriptorDatabase(channel).get_services())
        except grpc.RpcError as err:
            return Run(1, "", f"Failed to list services: rpc error: code = {GO_CODES[err.code().name]} "
                              f"desc = {err.details()}\n")
        finally:
            channel.close()
        return Run(0, "".join(f"{s}\n" for s in services))

    def call(self, service_method: str, request: str = "{}", max_time: float | None = None) -> Run:
        """`grpcurl ... SERVICE/METHOD -d REQUEST`: the method and its messages from reflection, the
        request parsed as jsonpb parses it, each answer printed as jsonpb prints it."""
        service, _, method = service_method.rpartition("/")
        channel = self.target.channel()
        try:
            pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
            try:
                found = pool.FindServiceByName(service).FindMethodByName(method)
            except KeyError:
                found = None
            if found is None:
                return Run(1, "", f"Error invoking method \"{service_method}\": target server does not expose "
                                  f"service \"{service}\"\n")
            inputs = message_factory.GetMessageClass(found.input_type)
            output = message_factory.GetMessageClass(found.output_type)
            try:
                messages = [json_format.Parse(part, inputs()) for part in _json_documents(request)] or [inputs()]
            except json_format.ParseError as exc:
                return Run(1, "", f"Error invoking method \"{service_method}\": error getting request data: "
                                  f"{exc}\n")
            full = f"/{service}/{method}"
            kind = {(False, False): channel.unary_unary, (False, True): channel.unary_stream,
                    (True, False): channel.stream_unary, (True, True): channel.stream_stream}[
                        (found.client_streaming, found.server_streaming)]
            stub = kind(full, request_serializer=lambda m: m.SerializeToString(),
                        response_deserializer=output.FromString)
            arg: Any = iter(messages) if found.client_streaming else messages[0]
            answer = stub(arg, metadata=self.target.metadata, timeout=max_time)
            answers = list(answer) if found.server_streaming else [answer]
        except grpc.RpcError as err:
            return Run(1, "", f"ERROR:\n  Code: {GO_CODES[err.code().name]}\n  Message: {err.details()}\n")
        finally:
            channel.close()
        return Run(0, "".join(json_format.MessageToJson(a, indent=2) + "\n" for a in answers))


def _json_documents(text: str) -> list[str]:
    """Concatenated JSON values, as grpcurl's decoder reads them from -d."""
    decoder, at, out = json.JSONDecoder(), 0, []
    text = text.strip()
    while at < len(text):
        _, end = decoder.raw_decode(text, at)
        out.append(text[at:end])
        at = end
        while at < len(text) and text[at].isspace():
            at += 1
    return out


class PtfGrpc:
    """tests/common/ptf_grpc.py's call_unary (JSON in, the parsed answer out, errors as its exceptions)."""

    def __init__(self, grpcurl: Grpcurl) -> None:
        self.grpcurl = grpcurl
        self.max_time: float | None = None

    def list_services(self) -> list[str]:
        run = self.grpcurl.list()
        if run.rc != 0:
            raise ptf_grpc_error(run)
        return [line.strip() for line in run.stdout.splitlines() if line.strip() and not line.startswith("grpc.")]

    def call_unary(self, service: str, method: str, request: dict[str, Any] | None = None) -> dict[str, Any]:
        run = self.grpcurl.call(f"{service}/{method}", json.dumps(request) if request else "{}", self.max_time)
        if run.rc != 0:
            raise ptf_grpc_error(run)
        try:
            answer: dict[str, Any] = json.loads(run.stdout.strip())
        except json.JSONDecodeError as exc:
            raise GrpcCallError(f"Failed to parse response from {service}/{method}: {exc}") from exc
        return answer


class PtfGnoi:
    """tests/common/ptf_gnoi.py's methods the gNOI tests call, over PtfGrpc."""

    def __init__(self, grpc_client: PtfGrpc) -> None:
        self.grpc = grpc_client

    def system_time(self) -> dict[str, Any]:
        answer = self.grpc.call_unary("gnoi.system.System", "Time")
        if "time" in answer:
            answer["time"] = int(answer["time"])
        return answer

    def file_stat(self, remote_file: str) -> dict[str, Any]:
        try:
            answer = self.grpc.call_unary("gnoi.file.File", "Stat", {"path": remote_file})
        except Exception as exc:
            if "not found" in str(exc).lower() or "no such file" in str(exc).lower():
                raise FileNotFoundError(f"File not found: {remote_file}") from exc
            raise
        for stat in answer.get("stats", []):
            for field in ("last_modified", "permissions", "size", "umask"):
                if field in stat:
                    stat[field] = int(stat[field])
        return answer

    def kill_process(self, name: str, restart: bool = False, signal: Any = "SIGNAL_TERM") -> dict[str, Any]:
        term = signal == 1 if isinstance(signal, int) else (
            isinstance(signal, str) and signal.strip().lower() in ("sigterm", "term", "signal_term", "1"))
        if term:
            signal = "SIGNAL_TERM"
        return self.grpc.call_unary("gnoi.system.System", "KillProcess",
                                    {"name": name, "restart": restart, "signal": signal})

    def file_transfer_to_remote(self, url: str, local_path: str, protocol: str | None = None) -> dict[str, Any]:
        scheme = url.split(":", 1)[0].lower()
        protocol = (protocol or {"http": "HTTP", "https": "HTTPS"}[scheme]).upper()
        self.grpc.max_time = 3600
        return self.grpc.call_unary("gnoi.file.File", "TransferToRemote",
                                    {"local_path": local_path, "remote_download": {"path": url, "protocol": protocol}})

    def system_reboot(self, method: str, message: str | None = None) -> dict[str, Any]:
        request: dict[str, Any] = {"method": method}
        if message:
            request["message"] = message
        return self.grpc.call_unary("gnoi.system.System", "Reboot", request)

    def reboot_status(self) -> dict[str, Any]:
        return self.grpc.call_unary("gnoi.system.System", "RebootStatus")
