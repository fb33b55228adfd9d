// twin graph: the page's only script (vanilla JavaScript, nothing fetched). See twin/design/html.py.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("twin-data").textContent);
  var svg = document.getElementById("fabric");
  var details = document.getElementById("details-body");
  var byName = {}, linksOf = {};
  data.nodes.forEach(function (n) { byName[n.name] = n; linksOf[n.name] = []; });
  data.links.forEach(function (l) { linksOf[l.a].push(l); linksOf[l.b].push(l); });
  var drawn = {};
  svg.querySelectorAll(".node").forEach(function (g) { drawn[g.getAttribute("data-name")] = g; });
  var keyState = {};
  data.links.forEach(function (l) { keyState[l.key] = l; });
  var saved = {};
  try { saved = JSON.parse(sessionStorage.getItem("twin-graph:" + data.lab) || "{}"); } catch (e) { saved = {}; }
  var state = { zoom: saved.zoom || 1, rail: saved.rail || "", pick: saved.pick || "", hash: saved.hash || "" };

  function text(s) { return String(s).replace(/[&<>"]/g, function (c) {
    return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c]; }); }
  function st(s) { return "<span class=\"st-" + text(s) + "\">" + text(s) + "</span>"; }
  function clear() {
    svg.querySelectorAll(".dim, .picked").forEach(function (e) { e.classList.remove("dim", "picked"); });
  }
  function groupOf(name) {
    var found = null;
    svg.querySelectorAll(".node.group").forEach(function (g) {
      var members = (g.getAttribute("data-member-names") || "").split(" ");
      if (members.indexOf(name) >= 0) { found = g; }
    });
    return found;
  }
  function showNode(name) {
    var n = byName[name];
    if (!n) { details.innerHTML = "<p>No node named " + text(name) + ".</p>"; return false; }
    clear();
    var g = drawn[name] || groupOf(name);
    var mine = linksOf[name] || [];
    if (g) {
      g.classList.add("picked");
      var keys = {};
      mine.forEach(function (l) { keys[l.key] = true; });
      svg.querySelectorAll(".link").forEach(function (e) {
        var k = e.getAttribute("data-key");
        if (!keys[k] && e.getAttribute("data-a") !== name && e.getAttribute("data-b") !== name) { e.classList.add("dim"); }
      });
    }
    var rows = mine.map(function (l) {
      var me = l.a === name ? l.a_iface : l.b_iface, peer = l.a === name ? l.b : l.a;
      var peerIf = l.a === name ? l.b_iface : l.a_iface;
      var bgp = (l.sessions[name + ":" + me] || "");
      return "<tr><td>" + text(me) + "</td><td>" + text(peer) + ":" + text(peerIf) + "</td><td>" +
        (l.state ? st(l.state) : "") + (bgp ? " BGP " + st(bgp) : "") + "</td></tr>";
    }).join("");
    details.innerHTML = "<h2>" + text(name) + "</h2><p>" + text(n.role) +
      (n.pod ? ", pod " + n.pod : "") + (n.rail ? ", rail " + n.rail : "") +
      (n.state ? ", " + st(n.state) : "") + (drawn[name] ? "" : " (drawn inside a group)") + "</p>" +
      "<table><tr><td><b>port</b></td><td><b>peer</b></td><td><b>state</b></td></tr>" + rows + "</table>";
    state.pick = name; remember();
    return true;
  }
  function showLink(key) {
    var l = keyState[key];
    clear();
    svg.querySelectorAll(".link").forEach(function (e) { if (e.getAttribute("data-key") === key) { e.classList.add("picked"); } });
    if (!l) { details.innerHTML = "<h2>" + text(key) + "</h2><p>A bundle of links; click a node for its own.</p>"; return; }
    var sessions = Object.keys(l.sessions).map(function (k) { return "<li>" + text(k) + " BGP " + st(l.sessions[k]) + "</li>"; }).join("");
    details.innerHTML = "<h2>link</h2><p>" + text(l.a) + ":" + text(l.a_iface) + " — " + text(l.b) + ":" + text(l.b_iface) +
      "</p>" + (l.state ? "<p>state " + st(l.state) + "</p>" : "") + (sessions ? "<ul>" + sessions + "</ul>" : "");
  }
  function applyRail() {
    svg.querySelectorAll(".rail-off").forEach(function (e) { e.classList.remove("rail-off", "dim"); });
    if (!state.rail) { return; }
    svg.querySelectorAll(".node[data-rail]").forEach(function (g) {
      if (g.getAttribute("data-rail") !== state.rail) { g.classList.add("rail-off", "dim"); }
    });
    svg.querySelectorAll(".link").forEach(function (e) {
      var a = byName[e.getAttribute("data-a")], b = byName[e.getAttribute("data-b")];
      var rail = (a && a.rail) || (b && b.rail);
      if (String(rail || "") !== state.rail) { e.classList.add("rail-off", "dim"); }
    });
  }
  var SWITCHES = ".node[data-role=spine], .node[data-role=leaf], .node[data-role=router]";
  var PAD = 24;   // screen pixels kept free around what a view fits
  function union(elements) {
    var box = null;
    elements.forEach(function (g) {
      var b = g.getBBox();
      if (!box) { box = { x1: b.x, y1: b.y, x2: b.x + b.width, y2: b.y + b.height }; return; }
      box.x1 = Math.min(box.x1, b.x); box.y1 = Math.min(box.y1, b.y);
      box.x2 = Math.max(box.x2, b.x + b.width); box.y2 = Math.max(box.y2, b.y + b.height);
    });
    return box;
  }
  function fitFabric() {   // the first view: every switch (and group of switches) in view, centred
    var c = document.getElementById("canvas");
    var switches = svg.querySelectorAll(SWITCHES);
    var box = union(switches.length ? switches : svg.querySelectorAll(".node"));
    if (!box) { return; }
    var w = Math.max(box.x2 - box.x1, 1), h = Math.max(box.y2 - box.y1, 1);
    state.zoom = Math.max(0.05, Math.min(1, (c.clientWidth - 2 * PAD) / w, (c.clientHeight - 2 * PAD) / h));
    // The drawing is not symmetric (row labels on the left), so a scroll that would centre the switches may be
    // out of reach: zoom out a little until the switches fit where scrolling can take them.
    for (var tries = 0; tries < 40; tries += 1) {
      applyZoom();
      c.scrollLeft = (box.x1 + w / 2) * state.zoom - c.clientWidth / 2;
      c.scrollTop = box.y1 * state.zoom - PAD;
      var left = box.x1 * state.zoom - c.scrollLeft, right = box.x2 * state.zoom - c.scrollLeft;
      var top = box.y1 * state.zoom - c.scrollTop, bottom = box.y2 * state.zoom - c.scrollTop;
      if ((left >= 0 && right <= c.clientWidth && top >= 0 && bottom <= c.clientHeight) || state.zoom <= 0.05) { break; }
      state.zoom = Math.max(0.05, state.zoom * 0.95);
    }
  }
  function centreOn(name) {   // a node (or the group it is drawn in) in the middle of the view, at full size
    var g = drawn[name] || groupOf(name);
    if (!g) { return; }
    var c = document.getElementById("canvas"), b = g.getBBox();
    state.zoom = 1; applyZoom();
    c.scrollLeft = (b.x + b.width / 2) * state.zoom - c.clientWidth / 2;
    c.scrollTop = (b.y + b.height / 2) * state.zoom - c.clientHeight / 2;
  }
  function applyZoom() {
    var w = parseFloat(svg.getAttribute("viewBox").split(" ")[2]), h = parseFloat(svg.getAttribute("viewBox").split(" ")[3]);
    svg.setAttribute("width", String(w * state.zoom));
    svg.setAttribute("height", String(h * state.zoom));
  }
  function remember() {
    var c = document.getElementById("canvas");
    state.left = c.scrollLeft; state.top = c.scrollTop;
    try { sessionStorage.setItem("twin-graph:" + data.lab, JSON.stringify(state)); } catch (e) { /* private mode */ }
  }

  svg.addEventListener("click", function (ev) {
    var t = ev.target;
    while (t && t !== svg) {
      if (t.classList && t.classList.contains("node")) {
        var name = t.getAttribute("data-name");
        if (byName[name]) { showNode(name); } else {
          details.innerHTML = "<h2>" + text(t.getAttribute("data-name")) + "</h2><p>" +
            text(t.getAttribute("data-member-count") || "") + " nodes: " +
            text((t.getAttribute("data-member-names") || "").split(" ").slice(0, 40).join(", ")) + "</p>";
        }
        return;
      }
      if (t.classList && t.classList.contains("link")) { showLink(t.getAttribute("data-key")); return; }
      t = t.parentNode;
    }
  });
  document.getElementById("search").addEventListener("change", function (ev) { showNode(ev.target.value.trim()); });
  var railSel = document.getElementById("rail-filter");
  railSel.value = state.rail;
  railSel.addEventListener("change", function () { state.rail = railSel.value; applyRail(); remember(); });
  document.getElementById("zoom-in").addEventListener("click", function () { state.zoom *= 1.25; applyZoom(); remember(); });
  document.getElementById("zoom-out").addEventListener("click", function () { state.zoom /= 1.25; applyZoom(); remember(); });
  document.getElementById("zoom-fit").addEventListener("click", function () { fitFabric(); remember(); });
  document.getElementById("canvas").addEventListener("scroll", remember);

  var index = document.getElementById("node-index");
  data.nodes.forEach(function (n) {
    var li = document.createElement("li");
    li.setAttribute("data-node", n.name);
    li.textContent = n.name + (n.state && n.state !== "ok" ? " (" + n.state + ")" : "");
    li.addEventListener("click", function () { showNode(n.name); });
    index.appendChild(li);
  });
  document.getElementById("node-count").textContent = String(data.nodes.length);
  var problems = document.getElementById("problems");
  (data.live ? data.live.problems : []).forEach(function (p) {
    var li = document.createElement("li"); li.textContent = p; problems.appendChild(li);
  });

  applyZoom(); applyRail();
  // The first view in this tab fits the switches; a reload (--watch) keeps the reader's zoom and scroll.
  // fabric.html#leaf3 opens centred on leaf3 (or the group it is drawn in), once: reloads keep the scroll.
  var canvas = document.getElementById("canvas");
  if (!saved.zoom) { fitFabric(); } else { canvas.scrollLeft = saved.left || 0; canvas.scrollTop = saved.top || 0; }
  function linkedNode() { return decodeURIComponent(location.hash.replace(/^#/, "")); }
  function openLinked(name) {
    if (!byName[name]) { return false; }
    showNode(name);
    if (name !== state.hash) { centreOn(name); }
    state.hash = name; remember();
    return true;
  }
  if (!openLinked(linkedNode()) && state.pick && byName[state.pick]) { showNode(state.pick); }
  window.addEventListener("hashchange", function () { state.hash = ""; openLinked(linkedNode()); });

  var age = document.getElementById("age");
  function tick() {
    var seconds = Math.max(0, Math.round(Date.now() / 1000 - data.generated));
    age.textContent = "written " + seconds + " s ago";
    if (data.refresh > 0 && seconds > 3 * data.refresh + 5) { document.body.classList.add("stale"); }
  }
  tick();
  setInterval(tick, 1000);
  if (data.refresh > 0) {
    setTimeout(function () { remember(); location.reload(); }, data.refresh * 1000);
  }
  document.body.setAttribute("data-ready", "1");
})();
