"""The `twin graph` page's first view in headless Chromium: it opens fitted to the fabric (every switch in
view, not scrolled to the servers), and `page.html#node` opens centred on that node. No lab is needed: the
pages are drawn from topology files; a probe script added to a copy of each page measures, after the page's
own script ran, which nodes lie wholly inside the visible part of the canvas."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from labtools import REPO, twin

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(scripts/install-deps.sh installs it; apt-get install chromium)")

CLAB = REPO / "tests/unit/data/clab/sonic-clos.clab.yml"
SWITCH_ROLES = ("spine", "leaf", "router")

PROBE = (Path(__file__).parent / "data/graph_probe.js").read_text()


def _page(tmp_path: Path, topology: Path, *extra: str) -> Path:
    page = tmp_path / f"{topology.stem}.html"
    twin("graph", str(topology), "-o", str(page), *extra)
    return page


def _view(page: Path, fragment: str = "", size: str = "1280,720", then: str = "") -> dict[str, Any]:
    """What the canvas shows once the page opened `page` + `fragment` in a window of `size`."""
    assert CHROMIUM is not None
    probe = page.with_name(f"{page.stem}-probe.html")
    script = "<script>" + PROBE.replace("var then = __THEN__", f"var then = {json.dumps(then)}") + "</script>"
    probe.write_text(page.read_text().replace("</body>", script + "</body>", 1))
    with tempfile.TemporaryDirectory(prefix="dz-chromium-") as profile:
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--disable-background-networking", "--disable-component-update", "--disable-sync",
                              f"--user-data-dir={profile}", f"--window-size={size}", "--virtual-time-budget=3000",
                              "--dump-dom", probe.as_uri() + fragment], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    import html

    view: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return view


def _in_view(view: dict[str, Any], roles: tuple[str, ...] | None = None) -> set[str]:
    return {name for name, n in view["nodes"].items() if n["inView"] and (roles is None or n["role"] in roles)}


def _centred(view: dict[str, Any], name: str) -> bool:
    """The node is in the middle of the view, or as near as scrolling can bring it (the canvas is
    scrolled to its end on the side the node lies off centre)."""
    node, limits = view["nodes"][name], view["limits"]
    x_ok = abs(node["dx"]) < 2 or (limits["right"] if node["dx"] > 0 else limits["left"])
    y_ok = abs(node["dy"]) < 2 or (limits["bottom"] if node["dy"] > 0 else limits["top"])
    return bool(node["inView"] and x_ok and y_ok)


def _switches(view: dict[str, Any]) -> set[str]:
    return {name for name, n in view["nodes"].items() if n["role"] in SWITCH_ROLES}


@pytest.mark.parametrize(("topology", "size"), [
    (REPO / "topologies/clos-4x8.yaml", "1280,720"),       # 4 spines, 8 leaves, 16 servers: wider than the canvas
    (REPO / "topologies/rail-2x8.yaml", "1280,720"),
    (REPO / "topologies/rail-2x8.yaml", "900,500"),
    (REPO / "topologies/fabric-64x128.yaml", "1280,720"),  # summarised: 64 spine dots, 16 leaves, 7 groups
    (CLAB, "1024,600"),
])
def test_first_view_shows_every_switch(tmp_path: Path, topology: Path, size: str) -> None:
    view = _view(_page(tmp_path, topology), size=size)
    switches = _switches(view)
    assert switches and _in_view(view, SWITCH_ROLES) == switches
    assert 0.05 <= view["zoom"] <= 1


def test_a_fabric_that_fits_opens_at_full_size(tmp_path: Path) -> None:
    view = _view(_page(tmp_path, CLAB), size="1600,900")
    assert view["zoom"] == 1
    assert _in_view(view) == set(view["nodes"])       # spines, leaves and both hosts


@pytest.mark.parametrize("node", ["pod1-server2", "pod2-rail2", "pod2-rail8", "pod1-rail1", "spine3"])
def test_fragment_opens_centred_on_the_node(tmp_path: Path, node: str) -> None:
    view = _view(_page(tmp_path, REPO / "topologies/rail-2x8.yaml"), f"#{node}")
    assert view["zoom"] == 1
    assert _centred(view, node) and view["nodes"][node]["picked"]
    assert f"<h2>{node}</h2>" in view["details"]


def test_fragment_centres_a_node_away_from_the_first_view(tmp_path: Path) -> None:
    """pod1-server2 lies right of the middle of a drawing wider than the canvas: truly centred, not clamped."""
    view = _view(_page(tmp_path, REPO / "topologies/rail-2x8.yaml"), "#pod1-server2")
    assert abs(view["nodes"]["pod1-server2"]["dx"]) < 2


def test_fragment_of_a_node_inside_a_group_centres_the_group(tmp_path: Path) -> None:
    view = _view(_page(tmp_path, REPO / "topologies/fabric-64x128.yaml"), "#leaf100")
    group = "group:leaf97 … leaf112"
    assert _centred(view, group) and view["nodes"][group]["picked"]
    assert "<h2>leaf100</h2>" in view["details"]
    assert "spine1" not in _in_view(view)              # scrolled away from the first view


def test_following_a_node_link_on_the_page_centres_it(tmp_path: Path) -> None:
    view = _view(_page(tmp_path, REPO / "topologies/rail-2x8.yaml"), then="#pod2-rail5")
    assert _centred(view, "pod2-rail5") and view["nodes"]["pod2-rail5"]["picked"]
    assert "<h2>pod2-rail5</h2>" in view["details"]
