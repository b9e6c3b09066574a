"""Re-vendor vega: the upstream ``vega.min.js`` plus Lantide's speed patches, gzip-compressed.

Run by hand when vega is updated, never at app run time or in CI::

    cd /tmp && npm pack vega@6.4.0 && tar xzf vega-6.4.0.tgz
    python packaging/vendor_vega.py /tmp/package/build/vega.min.js

It checks the upstream file's SHA-256 (a different vega needs its patches re-checked),
applies each patch (each must match exactly once, or the script stops naming it) and
writes ``resources/vega/vega.min.js.gz`` (gzip with no time stamp, so the result is the
same bytes on every run). The patches make QuickJS draw the same SVGs with fewer
instructions (benchmarks/README.md, charts); they are plain JavaScript, so the HTML
Report's browsers run the same file.
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

UPSTREAM_SHA256 = "8f6a3587cf8d4f42c7e08120e3eb05d067e746d554e39d2dcf52acc0bd5ba28f"  # 6.4.0
TARGET = Path(__file__).resolve().parent.parent / "resources" / "vega" / "vega.min.js.gz"

# vega.parse parses and generates code for every expression (signals, encoders, axes) from
# its text, about 200-300 per chart, most of them repeated within and across charts: keep
# the syntax tree and generated code by text (the per-scope steps still run each time).
# Bypassed when the caller asks for the tree itself (the `ast` option).
EXPRESSION_CACHE = (
    "expression cache",
    'function fz(t,e){const n={};let r;try{r=s$(t=yt(t)?t:At(t)+"")}',
    "const __lxExprs=new Map();"
    "function __lxParse(t,e){if(e.options.ast)return s$(t);let c=__lxExprs.get(t);"
    "if(c===void 0){if(__lxExprs.size>=4096)__lxExprs.clear();c={ast:s$(t),gen:null};"
    "__lxExprs.set(t,c)}return c.ast}"
    "function __lxCodegen(t,r,e){const c=e.options.ast?void 0:__lxExprs.get(t);"
    "if(c===void 0||c.ast!==r)return lz(r);if(c.gen===null)c.gen=lz(r);const g=c.gen;"
    "return{code:g.code,globals:g.globals.slice(),fields:g.fields.slice()}}"
    'function fz(t,e){const n={};let r;try{r=__lxParse(t=yt(t)?t:At(t)+"",e)}',
)
EXPRESSION_CODEGEN = (
    "expression cache (code generation)",
    "const i=lz(r);return i.globals.forEach(",
    "const i=__lxCodegen(t,r,e);return i.globals.forEach(",
)
# The runtime compiles each generated expression with Function(...): compile each text once
# and bind the shared function to each view's own function table, as before.
FUNCTION_CACHE = (
    "expression function cache",
    'function gz(t,e,n){n.endsWith(";")||(n="return("+n+");");const r=Function(...e.concat(n));'
    "return t&&t.functions?r.bind(t.functions):r}",
    "const __lxFns=new Map();"
    'function gz(t,e,n){n.endsWith(";")||(n="return("+n+");");'
    "if(!(t&&t.functions))return Function(...e.concat(n));"
    'const k=e.join(",")+"\\n"+n;let r=__lxFns.get(k);'
    "if(r===void 0){if(__lxFns.size>=4096)__lxFns.clear();r=Function(...e.concat(n));"
    "__lxFns.set(k,r)}return r.bind(t.functions)}",
)
# The SVG string escapes every attribute with seven global-regex replaces (about 1,200
# attributes per chart), each a slow path in QuickJS: test once, replace only if needed.
SVG_TEXT_ESCAPE = (
    "SVG text escape",
    'const l_=t=>(t+"").replace(/&/g,"&amp;").replace(/</g,"&lt;").replace(/>/g,"&gt;");',
    'const __lxText=/[&<>]/,__lxAttr=/[&<>"\\t\\n\\r]/;'
    'const l_=t=>(t+="",__lxText.test(t)?t.replace(/&/g,"&amp;").replace(/</g,"&lt;")'
    '.replace(/>/g,"&gt;"):t);',
)
SVG_ATTRIBUTE_ESCAPE = (
    "SVG attribute escape",
    'l_(r).replace(/"/g,"&quot;").replace(/\\t/g,"&#x9;").replace(/\\n/g,"&#xA;")'
    '.replace(/\\r/g,"&#xD;")',
    '(r+="",__lxAttr.test(r)?l_(r).replace(/"/g,"&quot;").replace(/\\t/g,"&#x9;")'
    '.replace(/\\n/g,"&#xA;").replace(/\\r/g,"&#xD;"):r)',
)
PATCHES = (
    EXPRESSION_CACHE,
    EXPRESSION_CODEGEN,
    FUNCTION_CACHE,
    SVG_TEXT_ESCAPE,
    SVG_ATTRIBUTE_ESCAPE,
)


def patched(upstream: str) -> str:
    text = upstream
    for name, old, new in PATCHES:
        count = text.count(old)
        if count != 1:
            raise SystemExit(f"patch {name!r}: found {count} times in vega.min.js, not once")
        text = text.replace(old, new)
    return text


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    raw = Path(argv[0]).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != UPSTREAM_SHA256:
        print(f"{argv[0]} is not vega 6.4.0's vega.min.js (SHA-256 {digest})", file=sys.stderr)
        return 1
    text = patched(raw.decode("utf-8"))
    TARGET.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    out = hashlib.sha256(text.encode("utf-8")).hexdigest()
    print(f"wrote {TARGET} ({TARGET.stat().st_size} bytes; vega.min.js SHA-256 {out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
