"""The fabric as one self-contained HTML page: the SVG inline, the data as JSON, a little vanilla JavaScript.

Nothing is fetched when the page is viewed (no CDN, no npm bundle: assets/graph.js, inlined, is all of
it), so the file works offline and from `file://`. The script lets a reader click a node or a link for
its details (every link of a node, with its state and BGP sessions on a running lab), find a node by
name (also one a summarised drawing folds into a group), show one rail, and zoom. The page opens fitted
to the fabric (every switch in view, centred); `page.html#leaf3` opens centred on leaf3 at full size
(or on the group it is drawn in), as does following a `#node` link later. With `refresh` > 0
(`twin graph --name LAB -o FILE.html --watch S`, which rewrites the file from the lab's fresh state every
S seconds) the page reloads itself every S seconds, keeping the reader's zoom, scroll, filter and
selection, and says when the file has stopped changing (the watcher ended). Pure: the page is returned as text.
"""

from __future__ import annotations

import json
import time
from html import escape
from importlib import resources
from typing import Any

from twin.design.fabric_graph import FabricGraph
from twin.design.layout import Layout
from twin.design.live_state import LiveState
from twin.design.svg import render_svg


def _asset(name: str) -> str:
    return (resources.files("twin.design") / "assets" / name).read_text()



def page_data(graph: FabricGraph, live: LiveState | None, refresh: float, generated: float) -> dict[str, Any]:
    """What the page's script reads: every node and link of the fabric (also those a summary folds away)."""
    nodes = [{"name": n.name, "role": n.role, "pod": n.pod, "rail": n.rail,
              "state": live.nodes.get(n.name, "unknown") if live else None} for n in graph.nodes]
    links = []
    for lk in graph.links:
        sessions = {}
        if live is not None:
            for end in (f"{lk.a}:{lk.a_iface}", f"{lk.b}:{lk.b_iface}"):
                if end in live.sessions:
                    sessions[end] = live.sessions[end]
        links.append({"key": lk.key, "a": lk.a, "a_iface": lk.a_iface, "b": lk.b, "b_iface": lk.b_iface,
                      "state": live.links.get(lk.key, "unknown") if live else None, "sessions": sessions})
    return {"lab": graph.name, "kind": graph.kind, "generated": generated, "refresh": refresh, "nodes": nodes,
            "links": links,
            "live": live.model_dump(include={"healthy", "bgp", "problems", "taken_at"}) if live else None}


def _with_member_names(svg: str, layout: Layout) -> str:
    """Group boxes carry their members' names (for the script's search), added after rendering."""
    for box in layout.nodes:
        if box.members:
            marker = f'data-name="{escape(box.name, quote=True)}"'
            svg = svg.replace(marker, f'{marker} data-member-names="{escape(" ".join(box.members), quote=True)}" '
                                      f'data-member-count="{len(box.members)}"', 1)
    return svg


def render_html(graph: FabricGraph, layout: Layout, live: LiveState | None = None, refresh: float = 0,
                generated: float | None = None) -> str:
    generated = time.time() if generated is None else generated
    data = json.dumps(page_data(graph, live, refresh, generated), separators=(",", ":")).replace("<", "\\u003c")
    rails = sorted({n.rail for n in graph.nodes if n.rail is not None})
    options = "".join(f'<option value="{r}">rail {r}</option>' for r in rails)
    if live is None:
        status, status_class = "topology (not running)", "static"
    else:
        status = f"lab {live.lab}: {'healthy' if live.healthy else 'not healthy'}"
        status_class = "healthy" if live.healthy else "unhealthy"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(generated))
    refresh_text = f"; refreshes every {refresh:g} s from the running lab" if refresh > 0 else ""
    svg = _with_member_names(render_svg(layout, live), layout)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="twin graph">
<title>twin graph: {escape(graph.name)}</title>
<style>{_asset("graph.css")}</style>
</head>
<body data-ready="0">
<header>
<h1>{escape(graph.name)}</h1>
<span id="status" class="{status_class}">{escape(status)}</span>
<span id="meta">written {when}{escape(refresh_text)} · <span id="age"></span></span>
<span id="stale">stale: the file stopped changing (is twin graph --watch still running?)</span>
<span id="controls">
<input id="search" list="node-names" placeholder="find a node" size="14">
<select id="rail-filter"{'' if rails else ' disabled'}><option value="">all rails</option>{options}</select>
<button id="zoom-out" title="zoom out">&minus;</button><button id="zoom-in" title="zoom in">+</button>
<button id="zoom-fit" title="fit the switches in view">fit</button>
</span>
</header>
<div id="layout">
<main id="canvas">
{svg}
</main>
<aside id="details">
<div id="details-body"><h2>Details</h2><p>Click a node or a link. Nodes: <span id="node-count"></span>.</p></div>
<ul id="problems"></ul>
<h2>Nodes</h2>
<ul id="node-index"></ul>
</aside>
</div>
<datalist id="node-names">{''.join(f'<option value="{escape(n.name, quote=True)}">' for n in graph.nodes)}</datalist>
<script type="application/json" id="twin-data">{data}</script>
<script>{_asset("graph.js")}</script>
</body>
</html>
"""
