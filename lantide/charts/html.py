"""What the HTML Report inlines to show charts interactively, with no network fetch.

- :func:`chart_scripts` ``() -> str``: the JavaScript of vega, vega-lite and vega-embed
  (vendored under ``resources/vega/``, BSD-3, ~0.84 MB), to put once in a
  ``<script>`` element of the page (it is safe there: no ``</script`` inside).
- :func:`chart_embed_html` ``(spec, element_id, *, svg=None) -> str``: a ``<div>`` for one
  chart and the ``<script>`` that draws it with vega-embed (tooltips on, no action menu,
  so no link to the online editor). ``svg`` (from :func:`lantide.charts.render_svg`) is
  put inside the ``<div>`` first, so the chart shows without JavaScript too.
"""

from __future__ import annotations

import html
import json
from functools import cache
from typing import Any

from lantide.package_data import read_resource_text

EMBED_SCRIPTS = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")
EMBED_OPTIONS = {"actions": False, "renderer": "svg", "tooltip": True}


@cache
def chart_scripts() -> str:
    """vega + vega-lite + vega-embed, one after the other, for one inline ``<script>``."""
    parts = [read_resource_text("vega", name) for name in EMBED_SCRIPTS]
    text = "\n;\n".join(parts)
    return text.replace("</script", "<\\/script")  # none today; a later version might


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _with_tooltips(spec: dict[str, object]) -> dict[str, object]:
    """Tooltips on every mark unless the spec says otherwise."""
    out = dict(spec)
    given = out.get("config")  # an object, as the Vega-Lite schema says (check_spec)
    config: dict[str, object] = dict(given) if isinstance(given, dict) else {}
    given_mark = config.get("mark")
    mark: dict[str, object] = dict(given_mark) if isinstance(given_mark, dict) else {}
    mark.setdefault("tooltip", True)
    config["mark"] = mark
    out["config"] = config
    return out


def chart_embed_html(spec: dict[str, object], element_id: str, *, svg: str | None = None) -> str:
    """A chart's ``<div id=element_id>`` and its vega-embed call (needs :func:`chart_scripts`
    earlier in the page). ``spec`` has inline data (:func:`lantide.charts.load_chart`)."""
    ident = html.escape(element_id, quote=True)
    static = svg or ""
    call = (
        f"vegaEmbed(document.getElementById({script_json(element_id)}), "
        f"{script_json(_with_tooltips(spec))}, {script_json(EMBED_OPTIONS)})"
        ".catch(function (e) { console.error(e); });"
    )
    return f'<div class="lantide-chart" id="{ident}">{static}</div>\n<script>{call}</script>'
