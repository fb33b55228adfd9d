"""A Layout as SVG text (the .svg file and the picture inside the HTML page), optionally coloured by a running
lab's state. Every node is a `<g class="node" data-name=...>` and every link a `.link` element with
`data-key`, so a page's script (and a test) finds them. Pure."""

from __future__ import annotations

import time
from html import escape

from twin.design.layout import EdgeLine, Layout, NodeBox
from twin.design.live_state import ESTABLISHED, LiveState

STATE_COLOR = {"up": "#2b9348", "down": "#d00000", "unknown": "#adb5bd", "partial": "#f48c06"}
SESSION_OK, SESSION_BAD = "#2b9348", "#d00000"
FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"

STYLE = f"""
svg.twin-graph {{ font-family: {FONT}; }}
.node text {{ font-size: 11px; pointer-events: none; }}
.node.group text {{ font-size: 12px; font-weight: bold; }}
.row-label {{ font-size: 12px; fill: #495057; }}
.title {{ font-size: 16px; font-weight: bold; fill: #212529; }}
.subtitle {{ font-size: 12px; fill: #495057; }}
.legend text {{ font-size: 11px; fill: #343a40; }}
.link {{ fill: none; stroke-linecap: round; }}
.bundle-label {{ font-size: 10px; fill: #343a40; }}
.node.state-failed rect, .node.state-failed circle {{ stroke: #d00000; stroke-width: 3; }}
"""


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def edge_state(edge: EdgeLine, live: LiveState | None) -> str | None:
    """up / down / unknown for a link; for a bundle, partial when some of its links are down."""
    if live is None:
        return None
    if edge.kind != "bundle":
        return live.links.get(edge.key, "unknown")
    states = [live.links.get(k, "unknown") for k in edge.members]
    if not states:
        return "unknown"
    if all(s == "up" for s in states):
        return "up"
    if all(s == "down" for s in states):
        return "down"
    return "partial" if any(s == "down" for s in states) else "unknown"


def _edge_svg(edge: EdgeLine, live: LiveState | None) -> str:
    state = edge_state(edge, live)
    color = STATE_COLOR[state] if state else edge.color
    classes = f"link {edge.kind}" + (f" state-{state}" if state else "")
    title = (f"{edge.a}:{edge.a_iface} — {edge.b}:{edge.b_iface}" if edge.kind != "bundle"
             else f"{len(edge.members):,} links ({edge.a} — {edge.b})")
    if state:
        title += f": {state}"
        if live is not None and edge.kind != "bundle":
            sessions = [f"{end}:{iface} BGP {live.sessions[f'{end}:{iface}']}"
                        for end, iface in ((edge.a, edge.a_iface), (edge.b, edge.b_iface))
                        if f"{end}:{iface}" in live.sessions]
            title += "".join(f"; {s}" for s in sessions)
        elif live is not None:
            down = sum(1 for k in edge.members if live.links.get(k) == "down")
            title += f" ({down} down)" if down else ""
    data = (f'data-key="{_attr(edge.key)}" data-a="{_attr(edge.a)}" data-b="{_attr(edge.b)}"'
            + (f' data-state="{state}"' if state else ""))
    if edge.bend:
        mx, my = (edge.x1 + edge.x2) / 2, min(edge.y1, edge.y2) - edge.bend
        shape = f'<path d="M{_f(edge.x1)},{_f(edge.y1)} Q{_f(mx)},{_f(my)} {_f(edge.x2)},{_f(edge.y2)}"'
    else:
        shape = f'<line x1="{_f(edge.x1)}" y1="{_f(edge.y1)}" x2="{_f(edge.x2)}" y2="{_f(edge.y2)}"'
    out = (f'{shape} class="{classes}" {data} stroke="{color}" stroke-width="{_f(edge.width)}">'
           f"<title>{escape(title)}</title></{'path' if edge.bend else 'line'}>")
    if edge.label:
        mx, my = edge.x1 + (edge.x2 - edge.x1) * 0.8, edge.y1 + (edge.y2 - edge.y1) * 0.8
        out += f'<text class="bundle-label" x="{_f(mx + 4)}" y="{_f(my)}">{escape(edge.label)}</text>'
    return out


def _sessions_svg(edge: EdgeLine, live: LiveState) -> str:
    """A dot near each switch end of a link that carries a BGP session: green when Established."""
    if edge.kind == "bundle" or edge.bend:
        return ""
    out = []
    for end, iface, (x, y), (ox, oy) in ((edge.a, edge.a_iface, (edge.x1, edge.y1), (edge.x2, edge.y2)),
                                         (edge.b, edge.b_iface, (edge.x2, edge.y2), (edge.x1, edge.y1))):
        state = live.sessions.get(f"{end}:{iface}")
        if state is None:
            continue
        # the dot sits on the link, 12 px from the end the session belongs to (ends are in drawing order)
        length = max(((ox - x) ** 2 + (oy - y) ** 2) ** 0.5, 1.0)
        cx, cy = x + (ox - x) * 12 / length, y + (oy - y) * 12 / length
        ok = state == ESTABLISHED
        out.append(f'<circle class="session state-{"established" if ok else "down"}" data-node="{_attr(end)}" '
                   f'data-iface="{_attr(iface)}" data-state="{_attr(state)}" cx="{_f(cx)}" cy="{_f(cy)}" r="3.2" '
                   f'fill="{SESSION_OK if ok else SESSION_BAD}"><title>{escape(end)}:{escape(iface)} BGP '
                   f"{escape(state)}</title></circle>")
    return "".join(out)


def _node_svg(box: NodeBox, live: LiveState | None) -> str:
    state = None
    if live is not None and box.kind != "group":
        state = live.nodes.get(box.name, "unknown")
    classes = f"node role-{box.role} {box.kind}" + (f" state-{state}" if state else "")
    data = (f'data-name="{_attr(box.name)}" data-role="{_attr(box.role)}" data-kind="{box.kind}"'
            + (f' data-rail="{box.rail}"' if box.rail is not None else "")
            + (f' data-pod="{box.pod}"' if box.pod is not None else "")
            + (f' data-state="{state}"' if state else "")
            + (f' data-members="{len(box.members)}"' if box.members else ""))
    title = box.name if box.kind != "group" else f"{box.label} ({', '.join(box.members[:8])}" + (
        f", … {len(box.members) - 8} more)" if len(box.members) > 8 else ")")
    if state:
        title += f": {state}"
    parts = [f'<g class="{classes}" {data}><title>{escape(title)}</title>']
    if box.kind == "dot":
        parts.append(f'<circle cx="{_f(box.cx)}" cy="{_f(box.y + box.h / 2)}" r="{_f(box.w / 2)}" '
                     f'fill="{box.fill}" stroke="#1b263b" stroke-width="0.6"/>')
    else:
        parts.append(f'<rect x="{_f(box.x)}" y="{_f(box.y)}" width="{_f(box.w)}" height="{_f(box.h)}" rx="5" '
                     f'fill="{box.fill}" stroke="#343a40" stroke-width="0.8"/>')
        parts.append(f'<text x="{_f(box.cx)}" y="{_f(box.y + box.h / 2 + 4)}" text-anchor="middle" '
                     f'fill="{box.text}">{escape(box.label)}</text>')
        for port in box.ports:
            parts.append(f'<rect class="nic" data-iface="{_attr(port.iface)}" x="{_f(port.x - 4)}" '
                         f'y="{_f(port.y - 4)}" width="8" height="8" fill="{port.color}" stroke="#343a40" '
                         'stroke-width="0.5">'
                         f"<title>{escape(box.name)}:{escape(port.iface)}</title></rect>")
    parts.append("</g>")
    return "".join(parts)


def subtitle(layout: Layout, live: LiveState | None) -> str:
    c = layout.counts
    parts = [f"{c[r]:,} {r}{'s' if c[r] != 1 else ''}".replace("leafs", "leaves")
             for r in ("spine", "leaf", "router", "server", "host") if c.get(r)]
    parts.append(f"{c.get('links', 0):,} links")
    text = ", ".join(parts)
    if live is not None:
        up = sum(1 for s in live.links.values() if s == "up")
        text += (f" · lab {live.lab} {'healthy' if live.healthy else 'NOT healthy'}: links up {up}/{len(live.links)}, "
                 f"BGP {live.bgp.get('established', 0)}/{live.bgp.get('total', 0)} Established · "
                 f"{time.strftime('%H:%M:%S', time.localtime(live.taken_at))}")
    return text


LEGEND_LINE = 16


def legend_items(layout: Layout, live: LiveState | None) -> list[tuple[str, str, float, float]]:
    """(label, colour, x, y) of every legend entry, wrapped to the drawing's width, below the drawing."""
    legend = list(layout.legend)
    if live is not None:
        legend += [("link up", STATE_COLOR["up"]), ("link down", STATE_COLOR["down"]),
                   ("unknown", STATE_COLOR["unknown"]), ("BGP Established", SESSION_OK), ("BGP not", SESSION_BAD)]
    out = []
    x, y = 12.0, layout.height + 14
    for label, color in legend:
        step = 26 + 6.5 * len(label)
        if x + step > layout.width and x > 12:
            x, y = 12.0, y + LEGEND_LINE
        out.append((label, color, x, y))
        x += step
    return out


def canvas_height(layout: Layout, live: LiveState | None) -> float:
    items = legend_items(layout, live)
    return (items[-1][3] if items else layout.height) + 16


def render_svg(layout: Layout, live: LiveState | None = None) -> str:
    width, height = layout.width, canvas_height(layout, live)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="twin-graph" id="fabric" width="{_f(width)}" '
           f'height="{_f(height)}" viewBox="0 0 {_f(width)} {_f(height)}" data-lab="{_attr(layout.title)}" '
           f'data-summary="{str(layout.summary).lower()}">',
           f"<style>{STYLE}</style>",
           f'<rect width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
           f'<text class="title" x="12" y="24">{escape(layout.title)} ({escape(layout.kind)})</text>',
           f'<text class="subtitle" x="12" y="42">{escape(subtitle(layout, live))}</text>']
    for row in layout.rows:
        out.append(f'<text class="row-label" x="12" y="{_f(row.y + 4)}">{escape(row.text)}</text>')
    edges = layout.edges
    out.append('<g class="links">' + "".join(_edge_svg(e, live) for e in edges) + "</g>")
    out.append('<g class="nodes">' + "".join(_node_svg(b, live) for b in layout.nodes) + "</g>")
    if live is not None:
        out.append('<g class="sessions">' + "".join(_sessions_svg(e, live) for e in edges) + "</g>")
    items = []
    for label, color, x, y in legend_items(layout, live):
        items.append(f'<rect x="{_f(x)}" y="{_f(y - 9)}" width="10" height="10" fill="{color}" stroke="#343a40" '
                     f'stroke-width="0.5"/><text x="{_f(x + 14)}" y="{_f(y)}">{escape(label)}</text>')
    out.append('<g class="legend">' + "".join(items) + "</g>")
    for i, note in enumerate(layout.notes):
        out.append(f'<text class="subtitle" x="12" y="{_f(58 + 14 * i)}">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
