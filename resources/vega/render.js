// Lantide: Vega-Lite JSON text in, SVG text out (lantide.charts.render).
// __lantideRender sets __lantideSvg or __lantideError once the view's promise settles;
// Python runs the pending jobs until it does. No loader: specs reach here with inline data.
var __lantideSvg = null, __lantideError = null;
function __lantideRender(specText) {
  __lantideSvg = null; __lantideError = null; __lantideTimers = 0; __lantideConsole.length = 0;
  var warnings = [];
  var logger = {
    level: function () { return logger; },
    error: function (m) { warnings.push(String(m)); return logger; },
    warn: function (m) { warnings.push(String(m)); return logger; },
    info: function () { return logger; },
    debug: function () { return logger; }
  };
  var vgSpec = vegaLite.compile(JSON.parse(specText), { logger: logger }).spec;
  var view = new vega.View(vega.parse(vgSpec), { renderer: "none" });
  view.toSVG().then(
    function (svg) { __lantideSvg = svg; view.finalize(); },
    function (e) { __lantideError = String((e && e.message) || e); view.finalize(); }
  );
  return warnings.length;
}
