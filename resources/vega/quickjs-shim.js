// Lantide: what vega and vega-lite expect of a browser-era engine and QuickJS lacks.
// Loaded once into the renderer's QuickJS context, before vega.min.js and vega-lite.min.js.
var self = globalThis;
if (!Array.prototype.at) {
  Object.defineProperty(Array.prototype, "at", {
    value: function (i) { i = Math.trunc(i) || 0; if (i < 0) i += this.length; return this[i]; },
    writable: true, configurable: true
  });
}
if (!String.prototype.at) {
  Object.defineProperty(String.prototype, "at", {
    value: function (i) { i = Math.trunc(i) || 0; if (i < 0) i += this.length; return this[i]; },
    writable: true, configurable: true
  });
}
if (!Object.hasOwn) {
  Object.hasOwn = function (o, k) { return Object.prototype.hasOwnProperty.call(o, k); };
}
if (typeof structuredClone === "undefined") {
  // vega-lite clones plain JSON specs only; dates are kept as dates
  globalThis.structuredClone = function clone(v) {
    if (v === null || typeof v !== "object") return v;
    if (v instanceof Date) return new Date(v.getTime());
    if (Array.isArray(v)) return v.map(clone);
    var out = {};
    for (var k in v) if (Object.prototype.hasOwnProperty.call(v, k)) out[k] = clone(v[k]);
    return out;
  };
}
// console: vega and vega-lite log through it (issue 28: "console is not defined" stopped a
// chart); what they log is kept, never printed.
var __lantideConsole = [];
if (typeof console === "undefined") {
  globalThis.console = {};
  ["log", "info", "warn", "error", "debug", "trace"].forEach(function (kind) {
    console[kind] = function () {
      if (__lantideConsole.length < 50) {
        __lantideConsole.push(kind + ": " + Array.prototype.map.call(arguments, String).join(" "));
      }
    };
  });
}
// Timers: a chart drawn once, offline, has no time. vega asks for one to debounce, to animate,
// for timer events and while images load; a timer is counted and never run, so a drawing
// that waits on one ends without an SVG and Python says why (lantide.charts.render).
var __lantideTimers = 0;
globalThis.setTimeout = function () { __lantideTimers += 1; return __lantideTimers; };
globalThis.setInterval = globalThis.setTimeout;
globalThis.clearTimeout = function () {};
globalThis.clearInterval = globalThis.clearTimeout;
