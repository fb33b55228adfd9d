"""Debian's Prometheus for one lab: its config (scrape the lab's collector), its command line (data
under the lab's run directory, listening on 127.0.0.1 only), and its HTTP API, read for the status,
the tests and a drill's counter plots."""

from __future__ import annotations

import json
import shutil
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from twin.model.errors import TwinError

BINARY = "prometheus"
SCRAPE_S = 5


def config_text(lab: str, collector_port: int, scrape_s: float = SCRAPE_S) -> str:
    """prometheus.yml: one job scraping the collector, every sample labelled with the lab."""
    return (f"global:\n  scrape_interval: {scrape_s:g}s\n  evaluation_interval: {scrape_s:g}s\n"
            "scrape_configs:\n  - job_name: twin\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{collector_port}']\n        labels: {{lab: {lab}}}\n")


def argv(folder: Path, port: int) -> list[str]:
    """Prometheus's command line; each path a word of its own, so that `twin down`, which ends the
    processes naming the lab's folder, ends it too."""
    binary = shutil.which(BINARY)
    if binary is None:
        raise TwinError("prometheus is not installed: apt-get install prometheus "
                        "(scripts/install-deps.sh, which make lab-up runs, installs it)")
    return [binary, "--config.file", str(folder / "prometheus.yml"), "--storage.tsdb.path", str(folder / "data"),
            "--storage.tsdb.retention.time", "2d", "--web.listen-address", f"127.0.0.1:{port}",
            "--web.enable-lifecycle"]


def get(url: str, timeout: float = 5.0) -> Any:
    """A GET of Prometheus's HTTP API, its JSON `data`; TwinError when it is not a success."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            doc = json.loads(response.read())
    except (OSError, ValueError) as exc:
        raise TwinError(f"Prometheus at {url.split('/api/')[0]} did not answer: {exc}") from None
    if doc.get("status") != "success":
        raise TwinError(f"Prometheus refused {url}: {doc.get('error', doc)}")
    return doc.get("data")


def ready(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def query(base: str, expr: str) -> list[dict[str, Any]]:
    """An instant query's result vector."""
    data = get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    return list(data.get("result", []))


def query_range(base: str, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
    """A range query's result matrix: each series' labels and [t, value] pairs."""
    data = get(f"{base}/api/v1/query_range?" + urllib.parse.urlencode(
        {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}))
    return list(data.get("result", []))
