"""The one rule for markup in the HTML Report: nh3 (the binding of ammonia, a maintained
sanitizer built on html5ever, the browsers' HTML parsing algorithm) on an allow-list.

Why not a rule of our own over :class:`html.parser.HTMLParser`: the standard library's
parser and a browser end some comments at different places (``<!-->``, ``--!>``), so a
``<script>`` that one hides the other runs (issue 28, item 1). html5ever parses as a browser
does, and what :func:`sanitize` returns is html5ever's own serialization of what it kept:
no comment, no script, nothing a browser would read differently.

- :func:`sanitize` ``(fragment) -> str``: what the page may hold of ``fragment``: text
  elements, tables, lists, figures, the inline SVG of charts (shapes, text, ``<title>``
  tooltips; no ``<a>``, ``<use>``, ``<foreignObject>``, animation), a few attributes per
  element, URLs only as ``#anchor`` or ``http(s):``/``mailto:`` links and ``data:image/…``
  images, no ``lt-`` or ``step-`` id and no ``data-lantide-*`` attribute (they address
  the chunks and the citations' targets).
  Scripts and styles go with their content; other elements off the list keep their text.
- :func:`removed_parts` ``(fragment) -> list[str]``: what :func:`sanitize` leaves out of
  ``fragment`` (elements, attributes, comments), as a reader-facing list. The same parse
  with a list of every element and attribute gives the inventory to compare against.

The page itself carries a Content-Security-Policy with no script source at all
(:data:`lantide.docs.html_report.CSP`): were anything to slip through, it would not run.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from functools import cache

import nh3


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TEXT_TAGS = _words(
    """a abbr b bdi bdo blockquote br caption cite code col colgroup dd del details
dfn div dl dt em figcaption figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li ol p pre q rp rt
ruby s samp section small span strong sub summary sup table tbody td tfoot th thead time tr
u ul var wbr header footer main nav article aside"""
)
# what vega's SVG renderer writes (lantide.charts.render), and the <title> of a tooltip
_SVG_TAGS = _words(
    """svg g path rect line circle ellipse polygon polyline text tspan title desc
defs clipPath linearGradient radialGradient stop"""
)
_GLOBAL_ATTRS = _words(
    """class id title lang dir role aria-label aria-hidden aria-roledescription
aria-describedby aria-labelledby"""
)
_SVG_ATTRS = _words(
    """xmlns xmlns:xlink version viewBox width height x y x1 x2 y1 y2 cx cy r rx ry
dx dy d points transform fill fill-opacity fill-rule stroke stroke-width stroke-opacity
stroke-dasharray stroke-dashoffset stroke-linecap stroke-linejoin stroke-miterlimit
opacity display visibility pointer-events clip-path clip-rule clipPathUnits text-anchor
dominant-baseline alignment-baseline baseline-shift font-family font-size font-style
font-weight font-variant letter-spacing text-decoration paint-order shape-rendering
vector-effect preserveAspectRatio offset stop-color stop-opacity gradientUnits
gradientTransform fx fy"""
)
_ATTRIBUTES: dict[str, set[str]] = {
    "*": set(_GLOBAL_ATTRS),
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "style"},
    "th": {"colspan", "rowspan", "style", "scope"},
    "col": {"span"},
    "colgroup": {"span"},
    "ol": {"start", "reversed", "type"},
    "li": {"value"},
    "time": {"datetime"},
    "details": {"open"},
    **{tag: set(_SVG_ATTRS) for tag in _SVG_TAGS},
}
# style= only on table cells (markdown-it's column alignment), and only these properties
_STYLE_PROPERTIES = {"text-align", "vertical-align", "white-space"}
_DATA_IMAGE = re.compile(r"data:image/(png|gif|jpeg|webp|svg\+xml)[;,]", re.I)
_LINK = re.compile(r"(https?|mailto):", re.I)
_REMOVED_WITH_CONTENT = _words(
    "script style template noscript iframe noembed noframes xmp plaintext textarea object"
)
# every element a fragment may name, for the inventory (the rule's own list excepted)
_OTHER_TAGS = _words(
    """script style template noscript iframe frame frameset object embed applet
param base link meta form input button select option optgroup textarea label fieldset
legend output datalist keygen isindex audio video source track picture canvas map area
portal dialog slot marquee blink bgsound font center big tt strike nobr xmp plaintext
listing noembed noframes menu menuitem math mi mo mn ms mtext annotation-xml mglyph
malignmark foreignObject use image feImage animate animateMotion animateTransform set
mpath switch symbol marker pattern mask filter html head body title mark"""
)


def _url_ok(tag: str, name: str, value: str) -> bool:
    value = value.strip()
    if name == "href" and tag == "a":
        if value.startswith("#"):
            return not any(c.isspace() for c in value)
        return bool(_LINK.match(value))
    if name == "src" and tag == "img":
        return bool(_DATA_IMAGE.match(value))
    return True


def _keep(tag: str, name: str, value: str) -> str | None:
    if name in ("href", "src") and not _url_ok(tag, name, value):
        return None
    if name == "id" and value.strip().lower().startswith(("lt-", "step-")):
        return None  # lt- ids address the chunks, step- ids the citations' targets
    return value


def _cleaner(record: Callable[[str, str, str], str | None] = _keep) -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=set(_TEXT_TAGS | _SVG_TAGS),
        clean_content_tags=set(_REMOVED_WITH_CONTENT),
        attributes=_ATTRIBUTES,
        attribute_filter=record,
        strip_comments=True,
        link_rel=None,
        url_schemes={"http", "https", "mailto", "data"},
        url_relative=lambda url: url if url.startswith("#") else None,
        filter_style_properties=_STYLE_PROPERTIES,
    )


def _lenient(record: Callable[[str, str, str], str] | None = None) -> nh3.Cleaner:
    """The same parse and serialization keeping every element, attribute and comment: what
    the rule's output is compared with to see what it left out."""
    return nh3.Cleaner(
        tags=set(_TEXT_TAGS | _SVG_TAGS | _OTHER_TAGS),
        clean_content_tags=set(),
        attributes={},
        generic_attribute_prefixes={""},
        attribute_filter=record,
        strip_comments=False,
        link_rel=None,
        url_schemes={"http", "https", "mailto", "data", "javascript", "vbscript", "file"},
    )


# the attributes each pass saw, while removed_parts asks (per thread: the cleaners are shared)
_seen = threading.local()
_Attrs = Counter[tuple[str, str, str]]


def _recording_every(tag: str, name: str, value: str) -> str:
    _seen.every[(tag, name, value)] += 1
    return value


def _recording_kept(tag: str, name: str, value: str) -> str | None:
    out = _keep(tag, name, value)
    if out is not None:
        _seen.kept[(tag, name, value)] += 1
    return out


@cache
def _cleaners() -> dict[str, nh3.Cleaner]:
    """Made once (about 1 ms each), on first use rather than on import."""
    return {
        "rule": _cleaner(),
        "lenient": _lenient(),
        "rule recording": _cleaner(_recording_kept),
        "lenient recording": _lenient(_recording_every),
    }


def sanitize(fragment: str) -> str:
    """What the HTML Report may hold of ``fragment`` (see the module docstring)."""
    return str(_cleaners()["rule"].clean(fragment))


# -- what the rule leaves out, for messages (the rule itself is sanitize above)

_ELEMENT = re.compile(r"<([A-Za-z][^\s/>]*)")
_COMMENT = re.compile(r"<!--")


def _inventory(text: str, attrs: _Attrs) -> Counter[str]:
    found = Counter(f"<{m.group(1)}> element" for m in _ELEMENT.finditer(text))
    found.update("comment <!--…-->" for _ in _COMMENT.finditer(text))
    for (tag, name, value), n in attrs.items():
        found[f"{name}={value[:60]!r} on <{tag}>"] += n
    return found


def sanitize_reporting(fragment: str) -> tuple[str, list[str]]:
    """:func:`sanitize` ``(fragment)`` and what it left out (:func:`removed_parts`)."""
    cleaners = _cleaners()
    safe = str(cleaners["rule"].clean(fragment))
    if str(cleaners["lenient"].clean(fragment)) == safe:
        return safe, []  # the usual case: the same serialization, nothing left out
    _seen.every, _seen.kept = Counter(), Counter()
    try:
        whole = _inventory(str(cleaners["lenient recording"].clean(fragment)), _seen.every)
        ruled = _inventory(str(cleaners["rule recording"].clean(fragment)), _seen.kept)
    finally:
        del _seen.every, _seen.kept
    return safe, sorted((whole - ruled).keys())


def removed_parts(fragment: str) -> list[str]:
    """What :func:`sanitize` leaves out of ``fragment``: ``["<script> element",
    "onerror='x' on <img>", ...]`` (empty: the rule keeps all of it)."""
    return sanitize_reporting(fragment)[1]


def added_removed_parts(old: str, new: str) -> list[str]:
    """What the rule leaves out of ``new`` and did not already leave out of ``old`` (an
    edit is answered for what it adds, not for what the analyst wrote before)."""
    return sorted(set(removed_parts(new)) - set(removed_parts(old)))
