"""gNOI File as sonic-gnmi answers it (gnmi_server/gnoi_file.go, pkg/gnoi/file/file.go), on a local
grpc server over a switch's run directory, which plays `/` and which no path may leave."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from twin.switch.gnoi.file import CHUNK, add_file_servicer
from twin.switch.gnoi.gnoi_pb.common import common_pb2
from twin.switch.gnoi.gnoi_pb.file import file_pb2, file_pb2_grpc
from twin.switch.gnoi.gnoi_pb.types import types_pb2
from twin.switch.gnoi.switch_files import SwitchFiles, go_clean

AUTH = (("username", "admin"), ("password", "YourPaSsWoRd"))
CONFIG = b'{"DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}}\n'


@pytest.fixture
def rundir(tmp_path: Path) -> Path:
    """A switch's run directory beside a folder of the machine's that it must not reach."""
    root = tmp_path / "leaf1"
    root.mkdir()
    (root / "config_db.json").write_bytes(CONFIG)
    (root / "config_db.json").chmod(0o640)
    (root / "frr.conf").write_text("hostname leaf1\n")
    (root / "logs").mkdir(mode=0o750)
    (root / "logs").chmod(0o750)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("the machine's own file\n")
    (root / "escape").symlink_to(outside)                  # a directory link out
    (root / "secret-link").symlink_to(outside / "secret")  # a file link out
    return root


def _serve(files: SwitchFiles | None) -> Iterator[file_pb2_grpc.FileStub]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    add_file_servicer(server, files, "admin", "YourPaSsWoRd")
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield file_pb2_grpc.FileStub(channel)
    finally:
        channel.close()
        server.stop(grace=None)


@pytest.fixture
def stub(rundir: Path) -> Iterator[file_pb2_grpc.FileStub]:
    yield from _serve(SwitchFiles(rundir))


def _error(call: Any, *args: Any, **kwargs: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as raised:
        answer = call(*args, metadata=AUTH, **kwargs)
        if not isinstance(answer, file_pb2.StatResponse | file_pb2.PutResponse | file_pb2.RemoveResponse |
                          file_pb2.TransferToRemoteResponse):
            list(answer)  # a stream fails as it is read
    return raised.value


def _stat(stub: file_pb2_grpc.FileStub, path: str) -> list[file_pb2.StatInfo]:
    return list(stub.Stat(file_pb2.StatRequest(path=path), metadata=AUTH).stats)


def _get(stub: file_pb2_grpc.FileStub, path: str) -> list[file_pb2.GetResponse]:
    return list(stub.Get(file_pb2.GetRequest(remote_file=path), metadata=AUTH))


def _put_messages(path: str, data: bytes, permissions: int = 0,
                  digest: bytes | None = None) -> list[file_pb2.PutRequest]:
    messages = [file_pb2.PutRequest(open=file_pb2.PutRequest.Details(remote_file=path, permissions=permissions))]
    messages += [file_pb2.PutRequest(contents=data[i:i + CHUNK]) for i in range(0, len(data), CHUNK)]
    md5 = hashlib.md5(data).digest() if digest is None else digest
    messages.append(file_pb2.PutRequest(hash=types_pb2.HashType(method=types_pb2.HashType.MD5, hash=md5)))
    return messages


def _put(stub: file_pb2_grpc.FileStub, messages: list[file_pb2.PutRequest]) -> file_pb2.PutResponse:
    answer: file_pb2.PutResponse = stub.Put(iter(messages), metadata=AUTH)
    return answer


# -- paths: cleaned as Go cleans them ---------------------------------------------------------------

@pytest.mark.parametrize(("path", "clean"), [
    ("/", "/"), ("/etc/sonic/", "/etc/sonic"), ("//tmp//x/", "/tmp/x"), ("/../../etc/passwd", "/etc/passwd"),
    ("/tmp/a/../b", "/tmp/b"), ("/./tmp/.", "/tmp"), ("", "."), ("etc/x", "etc/x"),
])
def test_paths_are_cleaned_as_go_cleans_them(path: str, clean: str) -> None:
    assert go_clean(path) == clean


def test_the_run_directory_is_slash_and_etc_sonic_too(rundir: Path) -> None:
    files = SwitchFiles(rundir)
    assert files.parts("/") == files.parts("/etc/sonic") == []
    assert files.parts("/config_db.json") == files.parts("/etc/sonic/config_db.json") == ["config_db.json"]
    assert files.parts("/tmp/x") == ["tmp", "x"]
    assert files.parts("/etc/sonicx") == ["etc", "sonicx"]  # only the directory itself is an alias


# -- Stat ---------------------------------------------------------------------------------------

def test_stat_of_a_missing_path_is_not_found(stub: file_pb2_grpc.FileStub) -> None:
    """sonic-mgmt test_gnoi_file_stat_not_found."""
    error = _error(stub.Stat, file_pb2.StatRequest(path="/etc/this_path_does_not_exist_gnoi_test"))
    assert (error.code(), error.details()) == (grpc.StatusCode.NOT_FOUND,
                                               "path not found: /etc/this_path_does_not_exist_gnoi_test")


@pytest.mark.parametrize(("path", "message"), [
    ("", "path cannot be empty"),
    ("etc/hostname", "path must be absolute, got: etc/hostname"),
    ("/mnt/host/etc/hostname",
     "path must be host-visible, not container-internal: /mnt/host/etc/hostname (drop the /mnt/host prefix)"),
])
def test_stat_refuses_what_sonic_gnmi_refuses(stub: file_pb2_grpc.FileStub, path: str, message: str) -> None:
    """sonic-mgmt test_gnoi_file_stat_invalid_argument."""
    error = _error(stub.Stat, file_pb2.StatRequest(path=path))
    assert (error.code(), error.details()) == (grpc.StatusCode.INVALID_ARGUMENT, message)


def test_stat_of_a_file_is_one_stat_info(stub: file_pb2_grpc.FileStub, rundir: Path) -> None:
    """sonic-mgmt test_gnoi_file_stat_regular_file and _permissions_decimal_octal, on config_db.json."""
    (info,) = _stat(stub, "/etc/sonic/config_db.json")
    assert info.path == "/etc/sonic/config_db.json"
    assert info.size == len(CONFIG)
    assert info.permissions == 640            # mode 0640 as decimal digits
    assert info.umask == 18                   # 0022
    assert info.last_modified == (rundir / "config_db.json").stat().st_mtime_ns


def test_stat_of_a_directory_lists_its_children_only(stub: file_pb2_grpc.FileStub) -> None:
    """sonic-mgmt test_gnoi_file_stat_directory: children with the asked path, the directory not among them."""
    stats = _stat(stub, "/etc/sonic")
    assert [s.path for s in stats] == ["/etc/sonic/config_db.json", "/etc/sonic/escape", "/etc/sonic/frr.conf",
                                       "/etc/sonic/logs", "/etc/sonic/secret-link"]
    logs = next(s for s in stats if s.path.endswith("/logs"))
    assert (logs.size, logs.permissions) == (0, 750)
    assert all(s.umask == 18 and s.last_modified > 0 for s in stats)
    assert [s.path for s in _stat(stub, "/")][:1] == ["/config_db.json"]


# -- nothing leads out of the run directory ---------------------------------------------------

def test_dot_dot_never_climbs_above_the_run_directory(stub: file_pb2_grpc.FileStub) -> None:
    error = _error(stub.Stat, file_pb2.StatRequest(path="/../outside/secret"))
    assert error.code() == grpc.StatusCode.NOT_FOUND            # /outside/secret of the switch: none
    assert _error(stub.Get, file_pb2.GetRequest(remote_file="/../../../etc/passwd")).code() == \
        grpc.StatusCode.NOT_FOUND                               # the machine's /etc/passwd is not the switch's
    (info,) = _stat(stub, "/../frr.conf")
    assert info.path == "/frr.conf"


def test_a_directory_link_is_not_followed(stub: file_pb2_grpc.FileStub) -> None:
    for call, request in ((stub.Stat, file_pb2.StatRequest(path="/escape/secret")),
                          (stub.Get, file_pb2.GetRequest(remote_file="/escape/secret"))):
        error = _error(call, request)
        assert (error.code(), error.details()) == (grpc.StatusCode.PERMISSION_DENIED,
                                                   "permission denied: /escape/secret")
    (link,) = _stat(stub, "/escape")  # the link itself, not the listing of where it points
    assert link.path == "/escape"


def test_a_file_link_is_not_read(stub: file_pb2_grpc.FileStub) -> None:
    error = _error(stub.Get, file_pb2.GetRequest(remote_file="/secret-link"))
    assert (error.code(), error.details()) == (grpc.StatusCode.FAILED_PRECONDITION,
                                               "remote_file is not a regular file: /secret-link")


def test_put_through_a_link_writes_nothing_outside(stub: file_pb2_grpc.FileStub, rundir: Path) -> None:
    outside = rundir.parent / "outside"
    (rundir / "tmp").mkdir()
    (rundir / "tmp" / "out").symlink_to(outside)
    error = _error(stub.Put, iter(_put_messages("/tmp/out/planted", b"x")))
    assert (error.code(), error.details()) == (grpc.StatusCode.INTERNAL, "failed to create parent dir: mkdir "
                                               "/mnt/host/tmp/out: permission denied")
    (rundir / "tmp" / "f.tmp").symlink_to(outside / "secret")  # a planted temporary name
    error = _error(stub.Put, iter(_put_messages("/tmp/f", b"x")))
    assert error.code() == grpc.StatusCode.INTERNAL and error.details().startswith("failed to create temp file: ")
    (rundir / "tmp" / "f.tmp").unlink()
    (rundir / "tmp" / "g").symlink_to(outside / "secret")      # a link at the name itself is replaced
    _put(stub, _put_messages("/tmp/g", b"new"))
    assert (rundir / "tmp" / "g").read_bytes() == b"new" and not (rundir / "tmp" / "g").is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert (outside / "secret").read_text() == "the machine's own file\n"


def test_remove_of_a_link_removes_the_link(stub: file_pb2_grpc.FileStub, rundir: Path) -> None:
    (rundir / "tmp").mkdir()
    (rundir / "tmp" / "link").symlink_to(rundir.parent / "outside" / "secret")
    stub.Remove(file_pb2.RemoveRequest(remote_file="/tmp/link"), metadata=AUTH)
    assert not os.path.lexists(rundir / "tmp" / "link")
    assert (rundir.parent / "outside" / "secret").exists()


def test_an_absolute_path_is_under_the_run_directory(stub: file_pb2_grpc.FileStub, rundir: Path) -> None:
    name = f"twin-gnoi-file-{os.getpid()}"
    _put(stub, _put_messages(f"/tmp/{name}", b"data"))
    assert (rundir / "tmp" / name).read_bytes() == b"data"
    assert not Path("/tmp", name).exists()


# -- Get ----------------------------------------------------------------------------------------

def test_get_streams_the_file_then_its_md5(stub: file_pb2_grpc.FileStub, rundir: Path) -> None:
    data = os.urandom(2 * CHUNK + 100)
    (rundir / "logs" / "big").write_bytes(data)
    answers = _get(stub, "/logs/big")
    assert [len(a.contents) for a in answers[:-1]] == [CHUNK, CHUNK, 100]
    assert b"".join(a.contents for a in answers[:-1]) == data
    assert answers[-1].hash == types_pb2.HashType(method=types_pb2.HashType.MD5, hash=hashlib.md5(data).digest())
    (empty,) = _get(stub, "/etc/sonic/logs/../config_db.json")[-1:]
    assert empty.hash.hash == hashlib.md5(CONFIG).digest()


@pytest.mark.parametrize(("path", "code", "message"), [
    ("/etc/sonic/missing", grpc.StatusCode.NOT_FOUND, "file not found: /etc/sonic/missing"),
    ("/etc/sonic", grpc.StatusCode.FAILED_PRECONDITION, "remote_file is a directory: /etc/sonic"),
    ("", grpc.StatusCode.INVALID_ARGUMENT, "remote_file cannot be empty"),
    ("frr.conf", grpc.StatusCode.INVALID_ARGUMENT, "remote_file must be absolute, got: frr.conf"),
    ("/mnt/host", grpc.StatusCode.INVALID_ARGUMENT,
     "remote_file must be host-visible, not container-internal: /mnt/host (drop the /mnt/host prefix)"),
])
def test_get_refuses_as_sonic_gnmi(stub: file_pb2_grpc.FileStub, path: str, code: grpc.StatusCode,
                                   message: str) -> None:
    error = _error(stub.Get, file_pb2.GetRequest(remote_file=path))
    assert (error.code(), error.details()) == (code, message)


# -- Put ----------------------------------------------------------------------------------------

def test_put_writes_the_file_with_its_mode_and_makes_its_directories(stub: file_pb2_grpc.FileStub,
                                                                      rundir: Path) -> None:
    data = os.urandom(CHUNK + 1)
    assert _put(stub, _put_messages("/var/tmp/new/dir/file.bin", data, permissions=0o600)) == file_pb2.PutResponse()
    written = rundir / "var" / "tmp" / "new" / "dir" / "file.bin"
    assert written.read_bytes() == data and written.stat().st_mode & 0o777 == 0o600
    _put(stub, _put_messages("/host/x", b"y"))  # permissions 0: 0644
    assert (rundir / "host" / "x").stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in (rundir / "var" / "tmp" / "new" / "dir").iterdir()) == ["file.bin"]


@pytest.mark.parametrize(("messages", "code", "message"), [
    (_put_messages("/etc/sonic/config_db.json", b"{}"), grpc.StatusCode.INVALID_ARGUMENT,
     "invalid remote_file: path must be under /tmp/, /var/tmp/, or /host/, got: /etc/sonic/config_db.json"),
    (_put_messages("tmp/x", b"{}"), grpc.StatusCode.INVALID_ARGUMENT,
     "invalid remote_file: path must be absolute, got: tmp/x"),
    (_put_messages("/tmp/../etc/x", b"{}"), grpc.StatusCode.INVALID_ARGUMENT,
     "invalid remote_file: path must be under /tmp/, /var/tmp/, or /host/, got: /etc/x"),
    (_put_messages("/tmp/a..b", b"{}"), grpc.StatusCode.INVALID_ARGUMENT,
     "invalid remote_file: path traversal not allowed: /tmp/a..b"),
    (_put_messages("", b"{}"), grpc.StatusCode.INVALID_ARGUMENT, "remote_file cannot be empty"),
    (_put_messages("/tmp/x", b"{}")[1:], grpc.StatusCode.INVALID_ARGUMENT, "first message must be Open"),
    ([], grpc.StatusCode.INTERNAL, "failed to receive first message: EOF"),
    (_put_messages("/tmp/x", b"{}")[:-1], grpc.StatusCode.INVALID_ARGUMENT, "unexpected end of stream before hash"),
    (_put_messages("/tmp/x", b"{}", digest=b"0" * 16), grpc.StatusCode.DATA_LOSS,
     "hash mismatch: file corrupted during transfer"),
    (_put_messages("/tmp/x", b"{}")[:1] * 2, grpc.StatusCode.INVALID_ARGUMENT, "message must contain contents or hash"),
])
def test_put_refuses_as_sonic_gnmi_and_leaves_nothing(stub: file_pb2_grpc.FileStub, rundir: Path,
                                                      messages: list[file_pb2.PutRequest], code: grpc.StatusCode,
                                                      message: str) -> None:
    error = _error(stub.Put, iter(messages))
    assert (error.code(), error.details()) == (code, message)
    assert not (rundir / "tmp" / "x").exists() and not (rundir / "tmp" / "x.tmp").exists()
    assert (rundir / "config_db.json").read_bytes() == CONFIG


def test_a_failed_put_keeps_the_file_it_would_have_replaced(stub: file_pb2_grpc.FileStub, rundir: Path) -> None:
    _put(stub, _put_messages("/tmp/keep", b"old"))
    _error(stub.Put, iter(_put_messages("/tmp/keep", b"new", digest=b"0" * 16)))
    assert (rundir / "tmp" / "keep").read_bytes() == b"old"
    assert sorted(p.name for p in (rundir / "tmp").iterdir()) == ["keep"]


# -- Remove -------------------------------------------------------------------------------------

def test_remove_removes_a_file_under_tmp(stub: file_pb2_grpc.FileStub, rundir: Path) -> None:
    _put(stub, _put_messages("/tmp/gone", b"x"))
    assert stub.Remove(file_pb2.RemoveRequest(remote_file="/tmp/gone"), metadata=AUTH) == file_pb2.RemoveResponse()
    assert not (rundir / "tmp" / "gone").exists()


@pytest.mark.parametrize(("path", "code", "message"), [
    ("/tmp/nothing", grpc.StatusCode.NOT_FOUND, "remove /mnt/host/tmp/nothing: no such file or directory"),
    ("/etc/sonic/config_db.json", grpc.StatusCode.PERMISSION_DENIED, "only files in /tmp/ or /var/tmp/ can be removed"),
    ("/tmp/../config_db.json", grpc.StatusCode.PERMISSION_DENIED, "only files in /tmp/ or /var/tmp/ can be removed"),
    ("", grpc.StatusCode.INVALID_ARGUMENT, "Invalid request: remote_file field is empty."),
    ("/tmp/full", grpc.StatusCode.INTERNAL, "remove /mnt/host/tmp/full: directory not empty"),
])
def test_remove_refuses_as_sonic_gnmi(stub: file_pb2_grpc.FileStub, rundir: Path, path: str,
                                      code: grpc.StatusCode, message: str) -> None:
    (rundir / "tmp" / "full").mkdir(parents=True)
    (rundir / "tmp" / "full" / "x").write_text("x")
    error = _error(stub.Remove, file_pb2.RemoveRequest(remote_file=path))
    assert (error.code(), error.details()) == (code, message)
    assert (rundir / "config_db.json").exists()


# -- TransferToRemote, a fronted switch, authentication -----------------------------------------

def _transfer(path: str, url: str = "http://10.0.0.1/x", protocol: Any = common_pb2.RemoteDownload.HTTP,
              remote: bool = True) -> file_pb2.TransferToRemoteRequest:
    request = file_pb2.TransferToRemoteRequest(local_path=path)
    if remote:
        request.remote_download.CopyFrom(common_pb2.RemoteDownload(path=url, protocol=protocol))
    return request


@pytest.mark.parametrize(("request_", "code", "message"), [
    (_transfer("/tmp/x", remote=False), grpc.StatusCode.INVALID_ARGUMENT, "remote_download cannot be nil"),
    (_transfer(""), grpc.StatusCode.INVALID_ARGUMENT, "local_path cannot be empty"),
    (_transfer("/etc/x"), grpc.StatusCode.INVALID_ARGUMENT,
     "invalid local_path: path must be under /tmp/, /var/tmp/, or /host/, got: /etc/x"),
    (_transfer("/tmp/x", protocol=common_pb2.RemoteDownload.SFTP), grpc.StatusCode.UNIMPLEMENTED,
     "only HTTP protocol is supported, got protocol SFTP"),
    (_transfer("/tmp/x", url=""), grpc.StatusCode.INVALID_ARGUMENT, "remote download path (URL) cannot be empty"),
])
def test_transfer_to_remote_is_validated_as_sonic_gnmi(stub: file_pb2_grpc.FileStub,
                                                       request_: file_pb2.TransferToRemoteRequest,
                                                       code: grpc.StatusCode, message: str) -> None:
    error = _error(stub.TransferToRemote, request_)
    assert (error.code(), error.details()) == (code, message)


class _Files(http.server.SimpleHTTPRequestHandler):
    """Serves the web folder; /moved redirects to a file:// URL."""

    def do_GET(self) -> None:
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "file:///etc/passwd")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def web(tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / "web"
    folder.mkdir()
    (folder / "image.bin").write_bytes(b"firmware" * 10_000)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Files, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_transfer_to_remote_downloads_into_the_switch(stub: file_pb2_grpc.FileStub, rundir: Path, web: str) -> None:
    """sonic-mgmt test_file_transfer_to_remote: the file fetched into the switch, its MD5 answered."""
    answer = stub.TransferToRemote(_transfer("/tmp/fw/image.bin", url=f"{web}/image.bin"), metadata=AUTH)
    data = (rundir / "tmp" / "fw" / "image.bin").read_bytes()
    assert data == b"firmware" * 10_000
    assert answer.hash == types_pb2.HashType(method=types_pb2.HashType.MD5, hash=hashlib.md5(data).digest())
    assert (rundir / "tmp" / "fw" / "image.bin").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(("url", "message"), [
    ("/missing", "download failed: HTTP error 404: 404 File not found"),
    ("file:///etc/passwd", 'download failed: HTTP request failed: Get "file:///etc/passwd": '
                           'unsupported protocol scheme "file"'),
    ("/moved", 'download failed: HTTP request failed: Get "file:///etc/passwd": unsupported protocol scheme "file"'),
    ("http://127.0.0.1:1/x", 'download failed: HTTP request failed: Get "http://127.0.0.1:1/x": '),
])
def test_a_failed_download_leaves_nothing(stub: file_pb2_grpc.FileStub, rundir: Path, web: str, url: str,
                                          message: str) -> None:
    error = _error(stub.TransferToRemote, _transfer("/tmp/x", url=web + url if url.startswith("/") else url))
    assert error.code() == grpc.StatusCode.INTERNAL
    assert error.details().startswith(message), error.details()
    assert sorted(p.name for p in (rundir / "tmp").iterdir()) == []


def test_a_fronted_switch_answers_unimplemented() -> None:
    for stub in _serve(None):
        error = _error(stub.Stat, file_pb2.StatRequest(path="/etc/sonic"))
        assert error.code() == grpc.StatusCode.UNIMPLEMENTED and "docker-sonic-vs" in error.details()


def test_every_rpc_is_authenticated(stub: file_pb2_grpc.FileStub) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        stub.Stat(file_pb2.StatRequest(path="/"), metadata=(("username", "admin"), ("password", "no")))
    assert (raised.value.code(), raised.value.details()) == (grpc.StatusCode.UNAUTHENTICATED, "Unauthenticated")
