"""An HTTP download made from inside a switch, as sonic-gnmi's TransferToRemote makes it
(internal/download/download.go: DownloadHTTP, with Go's http.Client).

The request leaves from the switch's network namespace (twin.host.netns_thread), so it reaches
what the switch's management address reaches. Only http and https are spoken, redirects followed
only to them (Go's client speaks nothing else: `unsupported protocol scheme`); no file:// or ftp://
URL reads anything. The whole download has one deadline, as the caller's context gives Go's.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.client import HTTPException
from typing import Any
from urllib.parse import urljoin, urlsplit

from twin.host.netns_thread import run_in_netns

SCHEMES = ("http", "https")
READ = 64 * 1024


class DownloadError(Exception):
    """The download failed; the message is DownloadHTTP's error."""


def _unsupported(url: str) -> DownloadError:
    return DownloadError(f'HTTP request failed: Get "{url}": unsupported protocol scheme "{urlsplit(url).scheme}"')


class _HttpRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects followed to http and https only, refused as Go's client refuses another scheme."""

    def http_error_302(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                       headers: Any) -> Any:
        location = headers.get("location") or headers.get("uri")
        if location and urlsplit(urljoin(req.full_url, location)).scheme not in SCHEMES:
            raise _unsupported(urljoin(req.full_url, location))
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _opener() -> urllib.request.OpenerDirector:
    """A urllib opener with the HTTP handlers only (build_opener would add file:// and ftp://)."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    _HttpRedirects(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.HTTPDefaultErrorHandler()):
        opener.add_handler(handler)
    return opener


def download(url: str, write: Callable[[bytes], None], max_bytes: int, timeout_s: float) -> int:
    """GET `url`, each piece of the body given to `write`; the bytes written. DownloadError with
    DownloadHTTP's message when it fails."""
    if urlsplit(url).scheme not in SCHEMES:
        raise _unsupported(url)
    deadline = time.monotonic() + timeout_s
    try:
        response = _opener().open(url, timeout=timeout_s)
    except urllib.error.HTTPError as error:
        raise DownloadError(f"HTTP error {error.code}: {error.code} {error.reason}") from None
    except (urllib.error.URLError, HTTPException, OSError, ValueError) as error:
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        raise DownloadError(f'HTTP request failed: Get "{url}": {reason}') from None
    with response:
        declared = response.length
        if declared is not None and declared > max_bytes:
            raise DownloadError(f"file size {declared} bytes exceeds maximum allowed size {max_bytes} bytes")
        written = 0
        while True:
            if time.monotonic() > deadline:
                raise DownloadError("failed to write file: context deadline exceeded")
            try:
                piece = response.read(READ)
            except (HTTPException, OSError) as error:
                raise DownloadError(f"failed to write file: {error}") from None
            if not piece:
                return written
            written += len(piece)
            if written > max_bytes:
                raise DownloadError(f"downloaded file size {written} bytes exceeds maximum allowed size "
                                    f"{max_bytes} bytes")
            write(piece)


def download_in(netns: str | None, url: str, write: Callable[[bytes], None], max_bytes: int,
                timeout_s: float) -> int:
    """`download` from inside the network namespace `netns` (None: where the caller is)."""
    def fetch() -> int:
        return download(url, write, max_bytes, timeout_s)
    return run_in_netns(netns, fetch) if netns else fetch()
