"""nftables commands committed by libnftables, the library the `nft` program is a front end of, in
many network namespaces from one small helper process (`python -m twin.host.libnft`).

`nft -f -` started once per switch cost a 64 x 128 lab's agent about 20 ms of CPU a switch under
the bring-up's load (a process made and its libraries loaded, for a 2 ms commit). The helper is
started once for all of them and commits each namespace's buffer from a thread that entered it
(twin.host.netns_thread). It is a process of its own, not the agent, because libnftables waits on
its netlink socket with select(), which aborts the process when the socket's descriptor is 1024 or
more: the agent of a 192-switch lab holds thousands. The calls are those of nftables' own Python
binding (py/nftables.py in the nftables sources, Debian's python3-nftables), which the project's
virtualenv cannot import: a context, its output and errors buffered, one buffer run, the context freed.
"""

from __future__ import annotations

import ctypes
import functools
import json
import subprocess
import sys
from collections.abc import Sequence
from typing import NamedTuple

from twin.host.netns_thread import run_in_netns

NFT_CTX_DEFAULT = 0
SONAME = "libnftables.so.1"   # Debian 12's libnftables1
HELPER_TIMEOUT_S = 300.0


class NftResult(NamedTuple):
    returncode: int   # 0: the whole buffer was committed (it is one transaction)
    stderr: str       # what `nft` would have printed on its standard error


@functools.cache
def _library() -> ctypes.CDLL | None:
    try:   # by its soname: ctypes.util.find_library runs ldconfig, then gcc and ld, to look for it
        lib = ctypes.CDLL(SONAME)
    except OSError:
        return None
    lib.nft_ctx_new.restype = ctypes.c_void_p
    lib.nft_ctx_new.argtypes = [ctypes.c_uint32]
    lib.nft_ctx_free.argtypes = [ctypes.c_void_p]
    lib.nft_ctx_buffer_output.argtypes = [ctypes.c_void_p]
    lib.nft_ctx_buffer_error.argtypes = [ctypes.c_void_p]
    lib.nft_ctx_get_error_buffer.restype = ctypes.c_char_p
    lib.nft_ctx_get_error_buffer.argtypes = [ctypes.c_void_p]
    lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return lib


def available() -> bool:
    """Whether libnftables can be loaded (Debian's libnftables1, which the nftables package needs)."""
    return _library() is not None


def run(text: str) -> NftResult:
    """`nft -f -` of `text`, in the calling thread's network namespace. Only in a process whose
    descriptors stay below 1024 (see the module's docstring): the helper, or a test."""
    lib = _library()
    if lib is None:
        return NftResult(1, "libnftables is not installed")
    ctx = lib.nft_ctx_new(NFT_CTX_DEFAULT)
    if not ctx:
        return NftResult(1, "libnftables: no context")
    try:
        lib.nft_ctx_buffer_output(ctx)
        lib.nft_ctx_buffer_error(ctx)
        rc = lib.nft_run_cmd_from_buffer(ctx, text.encode())
        error = lib.nft_ctx_get_error_buffer(ctx) or b""
        return NftResult(0 if rc == 0 else 1, error.decode(errors="replace"))
    finally:
        lib.nft_ctx_free(ctx)


def run_in_each(namespaces: Sequence[str], text: str) -> dict[str, NftResult]:
    """`text` committed in each of `namespaces`, by the helper process: netns -> its result. A helper
    that failed as a whole gives every namespace its reason."""
    if not namespaces:
        return {}
    request = json.dumps({"text": text, "namespaces": list(namespaces)})
    try:
        proc = subprocess.run([sys.executable, "-m", "twin.host.libnft"], input=request, capture_output=True,
                              text=True, timeout=HELPER_TIMEOUT_S, check=False)
        answer = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        answer, reason = None, str(exc)
    else:
        reason = proc.stderr.strip() or f"the nftables helper exited with {proc.returncode}"
    if not isinstance(answer, dict):
        return {ns: NftResult(1, reason) for ns in namespaces}
    return {ns: NftResult(*answer[ns]) if ns in answer else NftResult(1, "not answered by the nftables helper")
            for ns in namespaces}


def _serve() -> None:
    request = json.load(sys.stdin)
    text = str(request["text"])
    out: dict[str, tuple[int, str]] = {}
    for netns in request["namespaces"]:
        try:
            result = run_in_netns(str(netns), functools.partial(run, text))
        except OSError as exc:   # the namespace is gone
            result = NftResult(1, str(exc))
        out[netns] = (result.returncode, result.stderr)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    _serve()
