"""Design tools on real labs: a sized, scaled-down fabric comes up healthy; the HTML graph of a running lab shows
every node in headless Chromium, and `--watch` rewrites it as the lab's state changes."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labtools import REPO, TWIN, chromium, leftovers, needs_chromium, twin, twin_json, unique, until


@pytest.fixture(scope="module")
def default_lab() -> Iterator[str]:
    """The default lab, up and healthy under a unique name, removed afterwards whatever happened."""
    name = unique("dz")
    try:
        assert twin_json("up", "labs/default.yaml", "--name", name)["healthy"]
        yield name
    finally:
        twin("down", "--name", name, check=False)
        assert leftovers(name) == []


def page_data(path: Path) -> Any:
    text = path.read_text()
    return json.loads(text.split('id="twin-data">', 1)[1].split("</script>", 1)[0])


def test_sized_fabric_scaled_down_comes_up_healthy(tmp_path: Path) -> None:
    """DESIGN §12c's 32 servers x 4 x 400G on 64-port leaves and 32-port spines, 4x fewer servers."""
    topology = tmp_path / "sized.yaml"
    sized = twin_json("size", "--gpus", "128", "--gpus-per-server", "4", "--nics-per-server", "4", "--nic-speed",
                      "400G", "--leaf-ports", "64", "--spine-ports", "32", "--port-speed", "400G", "-o", str(topology),
                      "--scale-down", "4")
    assert (sized["leaves"], sized["spines"], sized["links_per_pair"]) == (4, 4, 8)
    assert sized["written"]["servers"] == 8 and sized["written"]["spines"] == 4
    name = unique("dz")
    try:
        up = twin_json("up", str(topology), "--name", name, timeout=400)
        assert up["healthy"], up
        assert up["bgp"] == {"established": 256, "total": 256}        # 4 leaves x 4 spines x 8 links, both ends
        # every rail leaf has the design's ECMP width: 4 spines x 8 parallel links
        assert {leaf: (w["min"], w["max"]) for leaf, w in up["ecmp"].items()} == {
            f"pod1-rail{r}": (32, 32) for r in range(1, 5)}
        status = twin_json("status", "--name", name)
        assert status["healthy"]
        assert sorted(n["name"] for n in status["nodes"] if n["role"] == "server") == [
            f"pod1-server{s}" for s in range(1, 9)]
    finally:
        twin("down", "--name", name, check=False)
        assert leftovers(name) == []


@needs_chromium
def test_html_graph_in_headless_chromium(default_lab: str, tmp_path: Path) -> None:
    page = tmp_path / "default.html"
    drawn = twin_json("graph", "--name", default_lab, "-o", str(page))
    assert drawn["live"]["healthy"] and drawn["live"]["links_up"] == drawn["live"]["links"] == 48
    nodes = [n["name"] for n in twin_json("status", "--name", default_lab)["nodes"]]
    assert len(nodes) == 28
    dom = chromium("--virtual-time-budget=3000", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    html = dom.stdout
    assert 'data-ready="1"' in html                  # the page's script ran to its end
    svg_nodes = re.findall(r'<g class="node [^"]*" data-name="([^"]+)"', html)
    listed = re.findall(r'<li data-node="([^"]+)"', html)     # built by the script from the page's data
    assert sorted(svg_nodes) == sorted(nodes)
    assert sorted(listed) == sorted(nodes)
    assert re.search(r'id="node-count">28<', html)
    assert len(re.findall(r'class="link (?:fabric|server) state-up"', html)) == 48
    assert len(re.findall(r'class="session state-established"', html)) == 64
    assert f"lab {default_lab}: healthy" in html
    # the page opens on the node its address names: leaf1's six links up, its four BGP sessions Established
    picked = chromium("--virtual-time-budget=3000", "--dump-dom", page.as_uri() + "#leaf1").stdout
    details = picked.split('id="details-body">', 1)[1].split("</div>", 1)[0]
    assert "<h2>leaf1</h2>" in details
    assert len(re.findall(r'<span class="st-up">up</span>', details)) == 6   # 4 spines, 2 servers
    assert len(re.findall(r'BGP <span class="st-Established">Established</span>', details)) == 4
    screenshot = tmp_path / "default-lab.png"
    shot = chromium("--virtual-time-budget=3000", f"--screenshot={screenshot}", "--window-size=1600,600",
                    page.as_uri())
    assert shot.returncode == 0, shot.stderr
    import matplotlib.image

    pixels = matplotlib.image.imread(str(screenshot))
    assert pixels.shape[:2] == (600, 1600)
    coloured = (abs(pixels[:, :, 0] - pixels[:, :, 1]) + abs(pixels[:, :, 1] - pixels[:, :, 2])) > 0.15
    assert coloured.sum() > 5000                    # the fabric is drawn in colour, not a blank page
    print(f"screenshot kept as a test artefact: {screenshot}")


def test_watch_rewrites_the_page_as_the_lab_changes(default_lab: str, tmp_path: Path) -> None:
    page = tmp_path / "watch.html"
    proc = subprocess.Popen([*TWIN, "graph", "--name", default_lab, "-o", str(page), "--watch", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    link = "leaf1:Ethernet128--spine1:Ethernet0"
    try:
        assert until(lambda: page.exists() and page_data(page)["refresh"] == 1, timeout=60)
        first = page_data(page)
        assert next(lk for lk in first["links"] if lk["key"] == link)["state"] == "up"
        subprocess.run(["ip", "-n", f"tw.{default_lab}.leaf1", "link", "set", "Ethernet128", "down"], check=True)

        def shows_down() -> bool:
            data = page_data(page)
            seen = next(lk for lk in data["links"] if lk["key"] == link)
            return bool(seen["state"] == "down" and seen["sessions"].get("leaf1:Ethernet128") != "Established"
                        and data["live"]["healthy"] is False)

        assert until(shows_down, timeout=60, every=0.5)
        assert page_data(page)["generated"] > first["generated"]
    finally:
        subprocess.run(["ip", "-n", f"tw.{default_lab}.leaf1", "link", "set", "Ethernet128", "up"], check=False)
        proc.terminate()
        proc.wait(timeout=30)
    assert until(lambda: twin_json("status", "--name", default_lab, check=False)["healthy"], timeout=60, every=1)
    assert list(tmp_path.iterdir()) == [page]      # rewritten in place, no temporary file left behind
