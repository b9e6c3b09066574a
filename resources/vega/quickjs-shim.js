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
