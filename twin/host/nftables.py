"""Run an nftables script in a network namespace through libnftables, the library `nft` itself is built on.

`ip netns exec NS nft -f -` costs two programs started per call (about 9 ms of CPU); from a large,
busy process such as the lab's agent, each start also stops the thread that forks until the child
runs. libnftables parses the same script and talks to the same netlink socket in about 2 ms, from
a thread that has entered the namespace (twin.host.netns_thread): the library opens its netlink
socket in the calling thread's namespace. Its messages are nft's own.
"""

from __future__ import annotations

import ctypes
import functools

from twin.host.netns_thread import run_in_netns

LIBRARY = "libnftables.so.1"


class NftError(RuntimeError):
    """nftables refused a script, or libnftables is not installed."""


@functools.cache
def _library() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL(LIBRARY)
    except OSError as exc:
        raise NftError(f"{LIBRARY} is not installed (Debian's nftables package): {exc}") from exc
    lib.nft_ctx_new.restype = ctypes.c_void_p
    lib.nft_ctx_new.argtypes = [ctypes.c_uint32]
    for name in ("nft_ctx_buffer_output", "nft_ctx_buffer_error", "nft_ctx_free"):
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    lib.nft_run_cmd_from_buffer.restype = ctypes.c_int
    lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nft_ctx_get_error_buffer.restype = ctypes.c_char_p
    lib.nft_ctx_get_error_buffer.argtypes = [ctypes.c_void_p]
    return lib


def available() -> bool:
    try:
        _library()
    except NftError:
        return False
    return True


def run_script(script: str) -> None:
    """`nft -f -` of `script` in the calling thread's network namespace; NftError with nft's message."""
    lib = _library()
    ctx = lib.nft_ctx_new(0)
    if not ctx:
        raise NftError("libnftables could not make a context")
    try:
        lib.nft_ctx_buffer_output(ctx)   # kept from the caller's stdout and stderr, as nft -f - prints nothing
        lib.nft_ctx_buffer_error(ctx)
        if lib.nft_run_cmd_from_buffer(ctx, script.encode()) != 0:
            error = lib.nft_ctx_get_error_buffer(ctx) or b""
            raise NftError(error.decode(errors="replace").strip() or "nftables refused the script")
    finally:
        lib.nft_ctx_free(ctx)


def run_in(netns: str, script: str) -> None:
    """`ip netns exec NETNS nft -f -` of `script`, with no process started."""
    run_in_netns(netns, lambda: run_script(script))
