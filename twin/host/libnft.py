"""nftables commands run by libnftables, the library the `nft` program is a front end of, in this
process: in the network namespace of the calling thread (twin.host.netns_thread.run_in_netns).

`nft -f -` started once per switch cost a 64 x 128 lab's agent about 20 ms of CPU a switch under
the bring-up's load (a process made and its libraries loaded, for a 2 ms commit); the same table
committed here costs 2 ms. The calls are those of nftables' own Python binding (py/nftables.py in
the nftables sources, Debian's python3-nftables), which the project's virtualenv cannot import:
a context, its output and errors buffered, one command buffer run, the context freed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import NamedTuple

NFT_CTX_DEFAULT = 0


class NftResult(NamedTuple):
    returncode: int   # 0: the whole buffer was committed (it is one transaction)
    stderr: str       # what `nft` would have printed on its standard error


@functools.cache
def _library() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("nftables") or "libnftables.so.1"
    try:
        lib = ctypes.CDLL(name)
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
    """`nft -f -` of `text`, in the calling thread's network namespace."""
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
