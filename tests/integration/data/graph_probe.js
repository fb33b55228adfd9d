// Added after the page's own script by tests/integration/test_graph_view.py: optionally follows a link to
// another #node (a hashchange), then reports what the canvas shows in a pre element, id "probe".
(function () {
  var then = __THEN__;
  if (then) { location.hash = then; }
  setTimeout(function () {
    var canvas = document.getElementById("canvas"), c = canvas.getBoundingClientRect();
    var view = {left: Math.max(c.left, 0), top: Math.max(c.top, 0),
                right: Math.min(c.left + canvas.clientWidth, innerWidth), bottom: Math.min(c.top + canvas.clientHeight, innerHeight)};
    var nodes = {};
    document.querySelectorAll("#fabric .node").forEach(function (g) {
      var r = g.getBoundingClientRect();
      nodes[g.getAttribute("data-name")] = {
        role: g.getAttribute("data-role"), picked: g.classList.contains("picked"),
        inView: r.left >= view.left - 0.5 && r.right <= view.right + 0.5 && r.top >= view.top - 0.5 && r.bottom <= view.bottom + 0.5,
        dx: (r.left + r.right) / 2 - (view.left + view.right) / 2, dy: (r.top + r.bottom) / 2 - (view.top + view.bottom) / 2};
    });
    var svg = document.getElementById("fabric");
    var out = document.createElement("pre"); out.id = "probe";
    var limits = {left: canvas.scrollLeft <= 0, right: canvas.scrollLeft >= canvas.scrollWidth - canvas.clientWidth - 1,
                  top: canvas.scrollTop <= 0, bottom: canvas.scrollTop >= canvas.scrollHeight - canvas.clientHeight - 1};
    out.textContent = JSON.stringify({nodes: nodes, limits: limits, zoom: parseFloat(svg.getAttribute("width")) /
      parseFloat(svg.getAttribute("viewBox").split(" ")[2]), details: document.getElementById("details-body").innerHTML});
    document.body.appendChild(out);
  }, 300);
})();
