"""Bounds on reading a workbook, checked before calamine reads anything.

An ``.xlsx`` is a zip: 4.8 MB on disk can inflate to 2 GB of sheet XML, and calamine
holds a sheet as a dense grid (a cell at A1 and one at XFD1048576 make 17 billion). So:

- **When the workbook is listed** (cheap: the zip's central directory and
  ``xl/workbook.xml``): the sizes its entries declare, inflated, must stay under
  ``query.max_workbook_mb``; a damaged zip is a problem line at once. Sheet names come from
  ``xl/workbook.xml`` without calamine (which would load the shared strings too).
- **When a sheet is first queried**: its XML is inflated as a stream (nothing kept) to
  check that it inflates to what the zip declares (a lying zip fails its check here) and
  that its cells holding something, counted and by the grid their references span (the
  range in use: empty styled cells at the sheet's far end do not count), stay under
  ``query.max_sheet_cells``. Only then calamine reads it.

``.xls`` (not compressed) is bounded by its file size, ``.xlsb`` by its inflated size; an
``.ods`` by its inflated size and the cells of its sheets' ranges in use. Every refusal
names the file, the limit and the setting that raises it.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import zipfile
import zlib
from pathlib import Path

from lantide.query.errors import QueryError
from lantide.query.read_limits import ReadLimits

_MB = 1 << 20
_CHUNK = 4 * _MB
_META_CAP = 16 * _MB  # workbook.xml and its relationships: a few KB in real books
_ZIP_SUFFIXES = (".xlsx", ".xlsm", ".xlsb", ".ods")
_XML_SHEETS = (".xlsx", ".xlsm")

_INFLATE_ERRORS = (zlib.error, OSError, EOFError, ValueError, RuntimeError, NotImplementedError)
# A cell holding something (a value, a formula, inline text): its start tag is not
# self-closing. Empty styled cells (``<c r="XFD1048576" s="1"/>``, which LibreOffice writes
# to the sheet's last row and column) hold nothing, and calamine does not read them.
_VALUE_CELL = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c(?:\s[^>]*)?(?<!/)>")
_CELL_REF = re.compile(rb'\sr="([A-Z]{1,3})([0-9]{1,7})"')


class WorkbookTooLarge(QueryError):
    code = "DATA_FILE_TOO_LARGE"


class WorkbookDamaged(QueryError):
    code = "DATA_FILE_DAMAGED"


def _rel(path: Path) -> str:
    return f"data/{path.name}"


def _too_large(path: Path, what: str, limit: str, setting: str) -> WorkbookTooLarge:
    return WorkbookTooLarge(
        f"{_rel(path)} {what}, above the limit of {limit} (setting query.{setting}); "
        "it was not read",
        code="DATA_FILE_TOO_LARGE",
        hint=f"If the workbook is genuine, raise query.{setting} in settings.json, or save "
        "the sheet you need as CSV or Parquet in data/.",
    )


def _damaged(path: Path, why: str) -> WorkbookDamaged:
    return WorkbookDamaged(
        f"{_rel(path)} is not a readable workbook: {why}",
        hint="Open and save it again in Excel or LibreOffice, or export the sheet as CSV.",
    )


def _size_text(n: int) -> str:
    return f"{n / (1 << 30):.1f} GB" if n >= 1 << 30 else f"{n / _MB:.1f} MB"


def check_container(path: Path, limits: ReadLimits) -> None:
    """The cheap checks done when the workbook is listed; raises a QueryError."""
    limit = limits.max_workbook_mb * _MB
    suffix = path.suffix.lower()
    if suffix not in _ZIP_SUFFIXES:  # .xls: not compressed
        size = path.stat().st_size
        if size > limit:
            raise _too_large(
                path, f"is {_size_text(size)}", f"{limits.max_workbook_mb} MB", "max_workbook_mb"
            )
        return
    try:
        with zipfile.ZipFile(path) as zf:
            declared = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile as exc:
        with open(path, "rb") as f:
            ole = f.read(8) == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        raise _damaged(
            path,
            "it is an encrypted (password-protected) workbook or an old .xls renamed"
            if ole
            else f"its zip container is damaged ({exc})",
        ) from None
    if declared > limit:
        raise _too_large(
            path,
            f"inflates to {_size_text(declared)} (as its zip declares)",
            f"{limits.max_workbook_mb} MB",
            "max_workbook_mb",
        )


def inflated_size(path: Path) -> int:
    """What the workbook declares it inflates to (its file size when not a zip)."""
    if path.suffix.lower() not in _ZIP_SUFFIXES:
        return path.stat().st_size
    try:
        with zipfile.ZipFile(path) as zf:
            return sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile:
        return path.stat().st_size


def _read_capped(zf: zipfile.ZipFile, name: str, path: Path) -> bytes:
    with zf.open(name) as f:
        data = f.read(_META_CAP + 1)
    if len(data) > _META_CAP:
        raise _damaged(path, f"{name} is larger than any real workbook's")
    return data


def sheet_parts(zf: zipfile.ZipFile, path: Path) -> dict[str, str]:
    """``{sheet name: zip entry of its XML}`` in workbook order (worksheets only)."""
    from xml.etree import ElementTree

    ns_main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    ns_rel = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
    ns_pkg = "{http://schemas.openxmlformats.org/package/2006/relationships}"
    try:
        book = ElementTree.fromstring(_read_capped(zf, "xl/workbook.xml", path))
        rels = ElementTree.fromstring(_read_capped(zf, "xl/_rels/workbook.xml.rels", path))
    except KeyError as exc:
        raise _damaged(path, f"{exc.args[0]} is missing") from None
    except ElementTree.ParseError as exc:
        raise _damaged(path, f"its workbook part is not valid XML ({exc})") from None
    targets: dict[str | None, str] = {}  # relationship id -> zip entry
    for rel in rels.iter(f"{ns_pkg}Relationship"):
        if rel.get("Type", "").endswith("/worksheet"):
            target = rel.get("Target", "")
            entry = (
                target.lstrip("/")
                if target.startswith("/")
                else posixpath.normpath(posixpath.join("xl", target))
            )
            targets[rel.get("Id")] = entry
    sheets: dict[str, str] = {}
    for sheet in book.iter(f"{ns_main}sheet"):
        found = targets.get(sheet.get(f"{ns_rel}id"))
        name = sheet.get("name")
        if found is not None and name:
            sheets[name] = found
    return sheets


def sheet_names(path: Path, limits: ReadLimits | None = None) -> list[str]:
    """The sheets of a workbook that passed :func:`check_container`, without reading them
    (an ``.ods`` is also checked for the cells its repeated rows and columns span: calamine
    reads all its sheets at once, as a dense grid)."""
    if path.suffix.lower() == ".ods":
        return _ods_sheets(path, limits or ReadLimits())
    if path.suffix.lower() in _XML_SHEETS:
        try:
            with zipfile.ZipFile(path) as zf:
                return list(sheet_parts(zf, path))
        except zipfile.BadZipFile as exc:
            raise _damaged(path, f"its zip container is damaged ({exc})") from None
        except _INFLATE_ERRORS as exc:
            raise _damaged(path, f"a part does not inflate ({exc})") from None
    from python_calamine import CalamineWorkbook

    book = CalamineWorkbook.from_path(str(path))
    try:
        return list(book.sheet_names)
    finally:
        with contextlib.suppress(Exception):
            book.close()


def _ods_sheets(path: Path, limits: ReadLimits) -> list[str]:
    """Sheet names from ``content.xml``, streamed; refuses a book whose sheets' ranges in
    use (the last row and column holding a value, repeats counted) span more cells than
    ``query.max_sheet_cells``: a 1 KB file can repeat a value 10,000 times in each of 9,000
    rows. The empty filler LibreOffice writes to the sheet's last row and column is not in
    use and does not count (:mod:`lantide.query.sheet_scan`)."""
    from xml.etree import ElementTree

    from lantide.query.sheet_scan import ods_sheets

    try:
        sheets = ods_sheets(path)
    except KeyError:
        raise _damaged(path, "content.xml is missing") from None
    except zipfile.BadZipFile as exc:
        raise _damaged(path, f"its zip container is damaged ({exc})") from None
    except ElementTree.ParseError as exc:
        raise _damaged(path, f"its content.xml is not valid XML ({exc})") from None
    except _INFLATE_ERRORS as exc:
        raise _damaged(path, f"a part does not inflate ({exc})") from None
    total = 0
    for name, sheet in sheets.items():
        total += sheet.rows * sheet.columns
        if total > limits.max_sheet_cells:  # calamine reads every sheet of the book at once
            raise _too_large(
                path,
                f"sheet {name!r} spans {sheet.rows:,} rows x {sheet.columns:,} columns in use "
                f"({sheet.rows * sheet.columns:,} cells)",
                f"{limits.max_sheet_cells:,} cells",
                "max_sheet_cells",
            )
    return list(sheets)


def _column_number(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n


def check_sheet(path: Path, sheet: str, limits: ReadLimits) -> None:
    """The checks done before a sheet is first read (see the module docstring)."""
    if path.suffix.lower() not in _ZIP_SUFFIXES:
        return
    byte_limit = limits.max_workbook_mb * _MB
    try:
        with zipfile.ZipFile(path) as zf:
            if path.suffix.lower() not in _XML_SHEETS:
                for info in zf.infolist():  # inflated for real, not as declared
                    _inflate(zf, info, path, byte_limit, limits, count_cells=False)
                return
            entry = sheet_parts(zf, path).get(sheet)
            if entry is None:
                raise _damaged(path, f"it has no worksheet named {sheet!r}")
            for name in ("xl/sharedStrings.xml", entry):
                try:
                    info = zf.getinfo(name)
                except KeyError:
                    if name == entry:
                        raise _damaged(
                            path, f"the part {name} of sheet {sheet!r} is missing"
                        ) from None
                    continue
                _inflate(zf, info, path, byte_limit, limits, count_cells=name == entry, sheet=sheet)
    except zipfile.BadZipFile as exc:
        raise _damaged(path, f"sheet {sheet!r} is damaged ({exc})") from None
    except _INFLATE_ERRORS as exc:  # zlib errors, encryption, cut streams
        raise _damaged(path, f"sheet {sheet!r} does not inflate ({exc})") from None


def _inflate(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    path: Path,
    byte_limit: int,
    limits: ReadLimits,
    *,
    count_cells: bool,
    sheet: str | None = None,
) -> None:
    """Inflate one entry as a stream; zipfile stops at the declared size and checks the
    CRC, so an entry that inflates to more than it declares fails here."""
    total = cells = max_row = max_column = 0
    tail = b""
    with zf.open(info) as f:
        while True:
            chunk = f.read(_CHUNK)
            total += len(chunk)
            if total > byte_limit:
                raise _too_large(
                    path,
                    f"inflates to more than {limits.max_workbook_mb} MB",
                    f"{limits.max_workbook_mb} MB",
                    "max_workbook_mb",
                )
            if not count_cells:
                if not chunk:
                    break
                continue
            text = tail + chunk
            # Everything before the last tag opening is whole tags; at the end, all of it.
            cut = text.rfind(b"<") if chunk else len(text)
            if cut <= 0:
                tail = text[-65536:]
                continue
            done, tail = text[:cut], text[cut:]
            found = [m.group(0) for m in _VALUE_CELL.finditer(done)]
            cells += len(found)
            refs = [ref.groups() for tag in found if (ref := _CELL_REF.search(tag))]
            if refs:
                max_row = max(max_row, max(int(r) for _c, r in refs))
                max_column = max(max_column, max(_column_number(c) for c in {c for c, _r in refs}))
            grid = max_row * max_column
            if max(cells, grid) > limits.max_sheet_cells:
                what = (
                    f"sheet {sheet!r} spans {max_row:,} rows x {max_column:,} columns "
                    f"({grid:,} cells)"
                    if grid >= cells
                    else f"sheet {sheet!r} holds more than {cells:,} cells"
                )
                raise _too_large(path, what, f"{limits.max_sheet_cells:,} cells", "max_sheet_cells")
            if not chunk:
                break
