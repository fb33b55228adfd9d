"""gNOI File on a twin switch, answering as sonic-gnmi answers (gnmi_server/gnoi_file.go, whose RPCs
are pkg/gnoi/file/file.go's handlers).

sonic-gnmi registers gnoi.file.File beside gNMI and gNOI System (gnmi_server/server.go:
registerAllServices) and serves the host's files through the gnmi container's /mnt/host. A twin
switch's files are its run directory, which plays `/` (twin.switch.gnoi.switch_files: no path leads
out of it). Every RPC is authenticated as sonic-gnmi's authenticate() does (twin.switch.access.auth).
- Stat: one StatInfo for a file, one per immediate child for a directory (the directory itself
  not listed); permissions as octal digits read as a decimal number (0644 is 644), umask 0022,
  a directory's size 0. A symbolic link is reported as the link: twin does not follow it.
- Get: the file in 64 KiB messages, then a message with its MD5; a directory, a link or another
  file that is not regular is refused with FAILED_PRECONDITION, as is one over 4 GiB.
- Put: Open (the path, under /tmp/, /var/tmp/ or /host/ as validatePath allows, its permissions
  taken as a mode, 0 meaning 0644), contents, then the MD5 of what was sent; written to NAME.tmp and
  renamed over NAME once the hash matches. twin refuses a file over PUT_MAX_BYTES (the run
  directory is on /run, in memory), where sonic-gnmi has no limit.
- Remove: a file (or an empty directory, as Go's os.Remove removes one) under /tmp/, /var/tmp/ or /host/.
- TransferToRemote: validated as sonic-gnmi validates it, then the URL (http or https) fetched from
  inside the switch's network namespace (twin.switch.gnoi.http_download) into the file, written as
  Put writes one, and answered with its MD5; within 5 minutes and PUT_MAX_BYTES.
The error messages are sonic-gnmi's; where they quote Go's own error (`remove /mnt/host/tmp/x: no
such file or directory`), the path is the one SONiC's gnmi container would name.
A switch twin only fronts (docker-sonic-vs) answers UNIMPLEMENTED: its files are its container's.
"""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import ExitStack
from typing import NoReturn

import grpc

from twin.switch.access.auth import PasswordAuth
from twin.switch.gnoi.gnoi_pb.common import common_pb2
from twin.switch.gnoi.gnoi_pb.file import file_pb2, file_pb2_grpc
from twin.switch.gnoi.gnoi_pb.types import types_pb2
from twin.switch.gnoi.http_download import DownloadError, download_in
from twin.switch.gnoi.switch_files import ParentError, ReplacedFile, SwitchFiles, errno_text, go_clean

HOST_ROOT = "/mnt/host"            # where sonic-gnmi's gnmi container sees the host's `/`
CHUNK = 64 * 1024                  # Get's messages, as the proto asks
GET_MAX_BYTES = 4 * 1024 ** 3      # sonic-gnmi's maxFileSize
PUT_MAX_BYTES = 256 * 1024 ** 2    # twin's own limit on a written file (the module's docstring)
DOWNLOAD_TIMEOUT_S = 300           # sonic-gnmi's downloadTimeout
DEFAULT_MODE = 0o644
UMASK = 0o022                      # sonic-gnmi's defaultUmask
WRITABLE = ("/tmp/", "/var/tmp/", "/host/")  # validatePath's allowed prefixes
SONIC_VS_FILES = ("twin fronts this docker-sonic-vs switch over its redis; its files are the container's "
                  "own business (docker cp), not twin's")


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    context.abort(code, message)
    raise AssertionError("context.abort returns only by raising")


def go_path_error(op: str, clean: str, error: OSError) -> str:
    """Go's *PathError text for `op` on the host path `clean` as SONiC's gnmi container names it."""
    return f"{op} {HOST_ROOT}{clean}: {errno_text(error.errno or errno.EIO)}"


def validate_path(path: str) -> str | None:
    """file.go: validatePath, for what may be written or removed; the problem, or None."""
    clean = go_clean(path)
    if not clean.startswith("/"):
        return f"path must be absolute, got: {path}"
    if ".." in clean:
        return f"path traversal not allowed: {path}"
    if any(clean.startswith(prefix) for prefix in WRITABLE):
        return None
    return f"path must be under /tmp/, /var/tmp/, or /host/, got: {clean}"


def decimal_octal(mode: int) -> int:
    """statInfoFromFileInfo's permissions: the mode's octal digits read as a decimal number."""
    return int(format(stat.S_IMODE(mode) & 0o777, "o"))


def stat_info(path: str, info: os.stat_result) -> file_pb2.StatInfo:
    """file.go: statInfoFromFileInfo."""
    size = 0 if stat.S_ISDIR(info.st_mode) else max(info.st_size, 0)
    return file_pb2.StatInfo(path=path, last_modified=info.st_mtime_ns, permissions=decimal_octal(info.st_mode),
                             size=size, umask=UMASK)


def _visible_path(context: grpc.ServicerContext, path: str, field: str) -> str:
    """HandleStat's and HandleGet's checks of a path; its cleaned form."""
    if not path:
        _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{field} cannot be empty")
    if not path.startswith("/"):
        _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{field} must be absolute, got: {path}")
    clean = go_clean(path)
    if clean == HOST_ROOT or clean.startswith(HOST_ROOT + "/"):
        _abort(context, grpc.StatusCode.INVALID_ARGUMENT,
               f"{field} must be host-visible, not container-internal: {path} (drop the /mnt/host prefix)")
    return clean


class FileServicer(file_pb2_grpc.FileServicer):
    """gnoi.file.File of one switch, whose downloads leave from `netns`; `files` None for a switch
    twin only fronts."""

    def __init__(self, files: SwitchFiles | None, username: str, password: str, netns: str | None = None) -> None:
        self.files, self.netns = files, netns
        self.auth = PasswordAuth(username, password)

    def _files(self, context: grpc.ServicerContext) -> SwitchFiles:
        """server.go authenticate, then the switch's files."""
        self.auth.require(context)
        if self.files is None:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED, SONIC_VS_FILES)
        return self.files

    def Stat(self, request: file_pb2.StatRequest, context: grpc.ServicerContext) -> file_pb2.StatResponse:
        """file.go: HandleStat."""
        files = self._files(context)
        path = request.path
        clean = _visible_path(context, path, "path")
        parts = files.parts(clean)
        try:
            info = files.lstat(parts)
        except OSError as error:
            _abort(context, *_stat_error(error, path, clean))
        if not stat.S_ISDIR(info.st_mode):
            return file_pb2.StatResponse(stats=[stat_info(clean, info)])
        try:
            entries = files.listing(parts)
        except OSError as error:
            if error.errno == errno.ENOENT:
                _abort(context, grpc.StatusCode.NOT_FOUND, f"path not found: {path}")
            if error.errno in (errno.EACCES, errno.EPERM):
                _abort(context, grpc.StatusCode.PERMISSION_DENIED, f"permission denied reading directory: {path}")
            _abort(context, grpc.StatusCode.INTERNAL,
                   f"failed to read directory {path}: {go_path_error('open', clean, error)}")
        return file_pb2.StatResponse(stats=[stat_info(_join(clean, e.name), e.info) for e in entries])

    def Get(self, request: file_pb2.GetRequest, context: grpc.ServicerContext) -> Iterator[file_pb2.GetResponse]:
        """file.go: HandleGet."""
        files = self._files(context)
        path = request.remote_file
        clean = _visible_path(context, path, "remote_file")
        parts = files.parts(clean)
        try:
            info = files.lstat(parts)
        except OSError as error:
            if error.errno == errno.ENOENT:
                _abort(context, grpc.StatusCode.NOT_FOUND, f"file not found: {path}")
            if error.errno in (errno.EACCES, errno.EPERM):
                _abort(context, grpc.StatusCode.PERMISSION_DENIED, f"permission denied: {path}")
            _abort(context, grpc.StatusCode.INTERNAL, f"failed to stat {path}: {go_path_error('stat', clean, error)}")
        if stat.S_ISDIR(info.st_mode):
            _abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"remote_file is a directory: {path}")
        if not stat.S_ISREG(info.st_mode):
            _abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"remote_file is not a regular file: {path}")
        if info.st_size > GET_MAX_BYTES:
            _abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                   f"file {path} exceeds maximum size of {GET_MAX_BYTES} bytes")
        try:
            handle = files.open_regular(parts)
        except OSError as error:
            if error.errno in (errno.EACCES, errno.EPERM):
                _abort(context, grpc.StatusCode.PERMISSION_DENIED,
                       f"permission denied opening {path}: {go_path_error('open', clean, error)}")
            if error.errno == errno.EINVAL:  # it became something else since the stat
                _abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"remote_file is not a regular file: {path}")
            _abort(context, grpc.StatusCode.INTERNAL, f"failed to open {path}: {go_path_error('open', clean, error)}")
        digest = hashlib.md5(usedforsecurity=False)
        with handle:
            while context.is_active():
                try:
                    chunk = handle.read(CHUNK)
                except OSError as error:
                    _abort(context, grpc.StatusCode.INTERNAL,
                           f"failed to read {path}: {go_path_error('read', clean, error)}")
                if not chunk:
                    break
                digest.update(chunk)
                yield file_pb2.GetResponse(contents=chunk)
            else:
                _abort(context, grpc.StatusCode.CANCELLED, "context canceled")
        yield file_pb2.GetResponse(hash=types_pb2.HashType(method=types_pb2.HashType.MD5, hash=digest.digest()))

    def Put(self, request_iterator: Iterator[file_pb2.PutRequest],
            context: grpc.ServicerContext) -> file_pb2.PutResponse:
        """file.go: HandlePut."""
        files = self._files(context)
        first = next(request_iterator, None)
        if first is None:
            _abort(context, grpc.StatusCode.INTERNAL, "failed to receive first message: EOF")
        if first.WhichOneof("request") != "open":
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "first message must be Open")
        path = first.open.remote_file
        if not path:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "remote_file cannot be empty")
        mode = first.open.permissions & 0o777 if first.open.permissions else DEFAULT_MODE  # Go: FileMode.Perm()
        problem = validate_path(path)
        if problem is not None:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"invalid remote_file: {problem}")
        clean = go_clean(path)
        with ExitStack() as stack:
            try:
                target = stack.enter_context(files.replacing(files.parts(clean)))
            except ParentError as error:
                _abort(context, grpc.StatusCode.INTERNAL,
                       f"failed to create parent dir: {go_path_error('mkdir', posixpath.dirname(clean), error)}")
            except OSError as error:
                _abort(context, grpc.StatusCode.INTERNAL,
                       f"failed to create temp file: {go_path_error('open', clean + '.tmp', error)}")
            _receive(context, request_iterator, target, path, clean)
            try:
                target.chmod(mode)
            except OSError as error:
                _abort(context, grpc.StatusCode.INTERNAL,
                       f"failed to set permissions: {go_path_error('chmod', clean + '.tmp', error)}")
            try:
                target.rename()
            except OSError as error:
                _abort(context, grpc.StatusCode.INTERNAL, f"failed to rename file: rename {HOST_ROOT}{clean}.tmp "
                       f"{HOST_ROOT}{clean}: {errno_text(error.errno or errno.EIO)}")
        return file_pb2.PutResponse()

    def Remove(self, request: file_pb2.RemoveRequest, context: grpc.ServicerContext) -> file_pb2.RemoveResponse:
        """file.go: HandleFileRemove."""
        files = self._files(context)
        path = request.remote_file
        if not path:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "Invalid request: remote_file field is empty.")
        if validate_path(path) is not None:
            _abort(context, grpc.StatusCode.PERMISSION_DENIED, "only files in /tmp/ or /var/tmp/ can be removed")
        clean = go_clean(path)
        try:
            files.remove(files.parts(clean))
        except OSError as error:
            message = go_path_error("remove", clean, error)
            if error.errno == errno.ENOENT:
                _abort(context, grpc.StatusCode.NOT_FOUND, message)
            if error.errno in (errno.EACCES, errno.EPERM):
                _abort(context, grpc.StatusCode.PERMISSION_DENIED, message)
            _abort(context, grpc.StatusCode.INTERNAL, message)
        return file_pb2.RemoveResponse()

    def TransferToRemote(self, request: file_pb2.TransferToRemoteRequest,
                         context: grpc.ServicerContext) -> file_pb2.TransferToRemoteResponse:
        """file.go: handleTransferToRemoteLocal: the URL fetched from the switch (its namespace) into
        the file, answered with the file's MD5."""
        files = self._files(context)
        if not request.HasField("remote_download"):
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "remote_download cannot be nil")
        path = request.local_path
        if not path:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "local_path cannot be empty")
        problem = validate_path(path)
        if problem is not None:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"invalid local_path: {problem}")
        protocol = request.remote_download.protocol
        if protocol != common_pb2.RemoteDownload.HTTP:
            _abort(context, grpc.StatusCode.UNIMPLEMENTED,
                   f"only HTTP protocol is supported, got protocol {common_pb2.RemoteDownload.Protocol.Name(protocol)}")
        url = request.remote_download.path
        if not url:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "remote download path (URL) cannot be empty")
        clean = go_clean(path)
        digest = hashlib.md5(usedforsecurity=False)
        with ExitStack() as stack:
            try:
                target = stack.enter_context(files.replacing(files.parts(clean)))
            except ParentError as error:
                _abort(context, grpc.StatusCode.INTERNAL, "download failed: failed to create output directory: "
                       f"{go_path_error('mkdir', posixpath.dirname(clean), error)}")
            except OSError as error:
                _abort(context, grpc.StatusCode.INTERNAL,
                       f"download failed: failed to create output file: {go_path_error('open', clean, error)}")

            def write(piece: bytes) -> None:
                target.file.write(piece)
                digest.update(piece)
            try:
                download_in(self.netns, url, write, PUT_MAX_BYTES, DOWNLOAD_TIMEOUT_S)
                target.chmod(DEFAULT_MODE)
                target.rename()
            except DownloadError as error:
                _abort(context, grpc.StatusCode.INTERNAL, f"download failed: {error}")
            except OSError as error:
                _abort(context, grpc.StatusCode.INTERNAL,
                       f"download failed: failed to write file: {go_path_error('write', clean, error)}")
        return file_pb2.TransferToRemoteResponse(hash=types_pb2.HashType(method=types_pb2.HashType.MD5,
                                                                         hash=digest.digest()))


def _receive(context: grpc.ServicerContext, requests: Iterator[file_pb2.PutRequest], target: ReplacedFile,
             path: str, clean: str) -> None:
    """HandlePut's loop: contents written to the temporary file until the hash, which must be the
    MD5 of what came."""
    written = 0
    digest = hashlib.md5(usedforsecurity=False)
    for message in requests:
        kind = message.WhichOneof("request")
        if kind == "hash":
            if digest.digest() != message.hash.hash:
                _abort(context, grpc.StatusCode.DATA_LOSS, "hash mismatch: file corrupted during transfer")
            return
        if kind != "contents":
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "message must contain contents or hash")
        written += len(message.contents)
        if written > PUT_MAX_BYTES:
            _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                   f"file {path} exceeds twin's maximum size of {PUT_MAX_BYTES} bytes")
        try:
            target.file.write(message.contents)
        except OSError as error:
            _abort(context, grpc.StatusCode.INTERNAL,
                   f"failed to write chunk: {go_path_error('write', clean + '.tmp', error)}")
        digest.update(message.contents)
    if not context.is_active():
        _abort(context, grpc.StatusCode.CANCELLED, "stream canceled: context canceled")
    _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "unexpected end of stream before hash")


def _stat_error(error: OSError, path: str, clean: str) -> tuple[grpc.StatusCode, str]:
    if error.errno == errno.ENOENT:
        return grpc.StatusCode.NOT_FOUND, f"path not found: {path}"
    if error.errno in (errno.EACCES, errno.EPERM):
        return grpc.StatusCode.PERMISSION_DENIED, f"permission denied: {path}"
    return grpc.StatusCode.INTERNAL, f"failed to stat {path}: {go_path_error('stat', clean, error)}"


def _join(directory: str, name: str) -> str:
    """Go's filepath.Join of a cleaned directory and a name."""
    return f"/{name}" if directory == "/" else f"{directory}/{name}"


def add_file_servicer(server: grpc.Server, files: SwitchFiles | None, username: str, password: str,
                      netns: str | None = None) -> None:
    """Serve gnoi.file.File on `server` (the switch's gNMI server, as sonic-gnmi does), its downloads
    made from `netns`; `files` None for a docker-sonic-vs switch."""
    file_pb2_grpc.add_FileServicer_to_server(FileServicer(files, username, password, netns), server)
