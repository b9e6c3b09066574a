"""Which ranges of a document may carry a new mark, and wrapping them safely.

A mark must sit inside the text of one paragraph, heading or table cell. A range that
crosses a block or cell boundary, lies in code, overlaps another mark, or cuts through
inline syntax (a code span, an HTML tag, a link target) is refused with the reason. The
wrap is checked by parsing the result: the new mark must be found exactly where intended
and every other mark must be unchanged.
"""

from __future__ import annotations

from lantide.docs.errors import AnnotationRangeError
from lantide.docs.markdown_map import (
    InlineRegion,
    Structure,
    inline_signature,
    nested_between,
    render_inline,
)
from lantide.docs.marks import MarkScan, scan_marks, wrap

MAX_WIDENINGS = 12  # candidate starts (and ends) looked at when a range must widen
_HINT = "Select text inside one paragraph, heading or table cell, outside code and other marks."


def _refuse(start: int, end: int, reason: str) -> AnnotationRangeError:
    return AnnotationRangeError(f"cannot annotate range {start}:{end}: {reason}", hint=_HINT)


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _outside_text_reason(structure: Structure, pos: int, which: str) -> str:
    block = structure.block_at(pos)
    if block is not None and block.kind == "code":
        return (
            f"it {which} inside a code block (lines {block.first_line + 1}-{block.last_line + 1})"
        )
    if block is not None:
        return (
            f"it {which} inside a raw HTML block (lines {block.first_line + 1}-"
            f"{block.last_line + 1})"
        )
    return (
        f"it {which} on line {structure.line_of(pos) + 1} outside the text of a paragraph, "
        "heading or table cell (Markdown syntax, a line prefix or a blank line)"
    )


def _crossing_reason(
    structure: Structure, first: InlineRegion, last: InlineRegion, start: int, end: int
) -> str:
    if "table cell" in (first.kind, last.kind):
        return "it crosses a table cell boundary"
    for block in structure.blocks:
        if start < block.end and block.start < end:
            what = "code block" if block.kind == "code" else "raw HTML block"
            return (
                f"it crosses a {what} boundary (lines {block.first_line + 1}-{block.last_line + 1})"
            )
    return (
        f"it crosses a block boundary: it starts in the {first.kind} at line "
        f"{first.first_line + 1} and ends in the {last.kind} at line {last.first_line + 1}"
    )


def check_range(
    scan: MarkScan, start: int, end: int, *, trim_spaces: bool = True
) -> tuple[int, int]:
    """The range to wrap (trimmed of surrounding whitespace), or AnnotationRangeError."""
    text = scan.text
    if not (isinstance(start, int) and isinstance(end, int)):
        raise _refuse(start, end, "start and end must be whole numbers")
    if start < 0 or end > len(text) or start >= end:
        raise _refuse(
            start, end, f"the text has offsets 0 to {len(text)} and a range needs start < end"
        )
    s, e = trim(text, start, end) if trim_spaces else (start, end)
    if s == e:
        raise _refuse(start, end, "it holds only whitespace")
    structure = scan.structure
    first, last = structure.region_for_start(s), structure.region_for_end(e)
    if first is None or last is None:
        pos, which = (s, "starts") if first is None else (e - 1, "ends")
        block = structure.block_at(pos)
        if block is not None and (first or last) is not None:
            what = "code block" if block.kind == "code" else "raw HTML block"
            raise _refuse(
                start,
                end,
                f"it crosses a {what} boundary (lines "
                f"{block.first_line + 1}-{block.last_line + 1})",
            )
        raise _refuse(start, end, _outside_text_reason(structure, pos, which))
    if first is not last:
        raise _refuse(start, end, _crossing_reason(structure, first, last, s, e))
    container = ("region", first.index)
    for mark in scan.marks:
        if mark.container == container and mark.inner_start <= s and e <= mark.inner_end:
            raise _refuse(
                start,
                end,
                f"it lies inside the mark of annotation {mark.id}; annotations cannot nest",
            )
    for tag in scan.tags:
        if tag.container == container and tag.start < e and s < tag.end:
            if tag.annotation_id or tag.closing:
                owner = next((m.id for m in scan.marks if tag in (m.open, m.close)), None)
                what = f"the mark of annotation {owner}" if owner else "a </mark> tag"
                raise _refuse(start, end, f"it overlaps {what}; annotations cannot overlap")
            raise _refuse(start, end, "it overlaps a <mark> highlight")
    for span in structure.code_spans:
        if (
            span.region == first.index
            and span.start < e
            and s < span.end
            and not (s <= span.start and span.end <= e)
        ):
            where = "inside" if span.start <= s and e <= span.end else "through"
            raise _refuse(
                start,
                end,
                f"it cuts {where} inline code "
                f"{text[span.start : span.end][:40]!r}; select the whole "
                "code span or text outside it",
            )
    for html_tag in structure.html_tags:
        if (
            html_tag.region == first.index
            and html_tag.start < e
            and s < html_tag.end
            and not (s <= html_tag.start and html_tag.end <= e)
        ):
            raise _refuse(start, end, f"it cuts through the HTML tag {html_tag.text[:40]!r}")
    return s, e


def _try_wrap(scan: MarkScan, s: int, e: int, annotation_id: str) -> tuple[str, MarkScan] | None:
    """The text with ``[s, e)`` wrapped, when the mark leaves the Markdown as it was: same
    inline syntax, same other marks, the mark's element properly nested (it opens and
    closes inside the same emphasis, link or none), the same HTML but for the mark."""
    new_text = wrap(scan.text, s, e, annotation_id)
    new_scan = scan_marks(new_text)
    mine = [m for m in new_scan.marks if m.id == annotation_id]
    if len(mine) != 1 or mine[0].inner(new_text) != scan.text[s:e]:
        return None
    before = [(m.id, m.inner(scan.text)) for m in scan.marks]
    after = [(m.id, m.inner(new_text)) for m in new_scan.marks if m.id != annotation_id]
    if before != after or len(scan.structure.regions) != len(new_scan.structure.regions):
        return None
    old_region = scan.structure.region_for_start(s)
    if old_region is None:  # check_range refuses such a range before we get here
        return None
    new_region = new_scan.structure.regions[mine[0].container[1]]
    tags = (mine[0].open.start, mine[0].close.start)
    if inline_signature(old_region) != inline_signature(new_region, skip=frozenset(tags)):
        return None
    if not nested_between(new_region, *tags):
        return None
    if render_inline(new_region, skip=frozenset(tags)) != render_inline(old_region):
        return None
    return new_text, new_scan


def _widenings(text: str, region: InlineRegion, s: int, e: int) -> list[tuple[int, int]]:
    """Ranges around ``[s, e)`` that start at the start of a run of inline syntax (``*``,
    ``_``, ``~``, ``[``, ``![``) or end after one (``*``, ``_``, ``~``, ``)``, ``]``),
    within the region, the smallest widening first."""
    starts, ends = [s], [e]
    for p in range(s - 1, region.start - 1, -1):
        if (
            text[p] in "*_~[!"
            and region.holds_start(p)
            and (p == region.start or text[p - 1] != text[p])
        ):
            starts.append(p)
        if len(starts) > MAX_WIDENINGS:
            break
    for p in range(e + 1, region.end + 1):
        if (
            text[p - 1] in "*_~)]"
            and region.holds_end(p)
            and (p == region.end or text[p] != text[p - 1])
        ):
            ends.append(p)
        if len(ends) > MAX_WIDENINGS:
            break
    pairs = [(a, b) for a in starts for b in ends if (a, b) != (s, e)]
    return sorted(pairs, key=lambda r: ((s - r[0]) + (r[1] - e), s - r[0]))


def wrap_checked(
    scan: MarkScan, start: int, end: int, annotation_id: str, *, trim_spaces: bool = True
) -> tuple[str, MarkScan, int, int]:
    """Wrap ``[start, end)`` in a mark for ``annotation_id``.

    A range that starts or ends inside emphasis or a link it does not wholly hold (``c*
    d`` of ``*b c* d``) would put the mark half inside the emphasis and break its
    rendering: it is widened to the nearest range that leaves the Markdown rendering as
    it was (``*b c* d``). Returns ``(new_text, new_scan, start, end)`` with the range as
    wrapped (trimmed, maybe widened).
    """
    s, e = check_range(scan, start, end, trim_spaces=trim_spaces)
    done = _try_wrap(scan, s, e, annotation_id)
    if done is None:
        region = scan.structure.region_for_start(s)
        # check_range found a region at s, so ``region`` is never None here
        widenings = _widenings(scan.text, region, s, e) if region is not None else []
        for ws, we in widenings:
            try:
                check_range(scan, ws, we, trim_spaces=False)
            except AnnotationRangeError:
                continue
            done = _try_wrap(scan, ws, we, annotation_id)
            if done is not None:
                s, e = ws, we
                break
    if done is None:
        raise _refuse(
            start,
            end,
            "a mark there would cut through Markdown syntax (a link "
            "target, an escape or an entity); widen or narrow the range "
            "to whole words",
        )
    return done[0], done[1], s, e
