"""Hostile and broken data files, made on the fly (real zips, real workbooks).

- :func:`workbook_bytes`: a real ``.xlsx`` (xlsxwriter) with the given sheets;
- :func:`with_sheet_xml`: the same workbook with one sheet's XML replaced, written as a
  stream so a decompression bomb never sits in memory;
- :func:`bomb_sheet`: sheet XML of ``cells`` cells (inflates to ~14 bytes a cell);
- :func:`repeated_sheet`: sheet XML of a given inflated size, made quickly;
- :func:`sparse_corners_sheet`: two cells, at A1 and at a far corner (a dense-grid bomb);
- :func:`lie_about_size`: patch a zip entry's declared (uncompressed) size.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b"<sheetData>"
)
_TAIL = b"</sheetData></worksheet>"


def workbook_bytes(sheets: dict[str, list[list]]) -> bytes:
    import xlsxwriter

    buf = io.BytesIO()
    book = xlsxwriter.Workbook(buf, {"in_memory": True})
    for name, rows in sheets.items():
        sheet = book.add_worksheet(name)
        for i, row in enumerate(rows):
            sheet.write_row(i, 0, row)
    book.close()
    return buf.getvalue()


def with_sheet_xml(base: bytes, target: Path, sheet_index: int, parts: Iterable[bytes]) -> Path:
    """Write ``base`` to ``target`` with ``xl/worksheets/sheet{N}.xml`` made of ``parts``."""
    entry = f"xl/worksheets/sheet{sheet_index}.xml"
    with (
        zipfile.ZipFile(io.BytesIO(base)) as src,
        zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst,
    ):
        for info in src.infolist():
            if info.filename == entry:
                with dst.open(entry, "w", force_zip64=True) as out:
                    for part in parts:
                        out.write(part)
            else:
                dst.writestr(info, src.read(info.filename))
    return target


def bomb_sheet(cells: int, width: int = 16) -> Iterator[bytes]:
    """Sheet XML with ``cells`` numeric cells, ``width`` a row, in row-sized pieces."""
    yield _HEAD
    rows = cells // width
    batch = []
    for r in range(1, rows + 1):
        batch.append(b'<row r="%d">' % r + b"<c><v>1</v></c>" * width + b"</row>")
        if len(batch) == 4096:
            yield b"".join(batch)
            batch = []
    yield b"".join(batch) + _TAIL


def repeated_sheet(total_bytes: int) -> Iterator[bytes]:
    """About ``total_bytes`` of sheet XML made of one 4 MB block written again and again
    (quick to make; only its inflated size matters)."""
    row = b'<row r="1">' + b"<c><v>1</v></c>" * 64 + b"</row>"
    block = row * ((4 << 20) // len(row))
    yield _HEAD
    for _ in range(max(1, total_bytes // len(block))):
        yield block
    yield _TAIL


def sparse_corners_sheet(last_ref: str = "XFD1048576") -> Iterator[bytes]:
    row = "".join(ch for ch in last_ref if ch.isdigit())
    yield (
        _HEAD
        + b'<row r="1"><c r="A1"><v>1</v></c></row>'
        + b'<row r="%s"><c r="%s"><v>2</v></c></row>' % (row.encode(), last_ref.encode())
        + _TAIL
    )


def lie_about_size(path: Path, entry: str, declared: int) -> None:
    """Set the uncompressed size ``entry`` declares, in its local header and in the
    central directory (a zip that lies; no zip64 entries)."""
    data = bytearray(path.read_bytes())
    name = entry.encode()
    for signature, size_at, name_len_at, name_at in (
        (b"PK\x03\x04", 22, 26, 30),
        (b"PK\x01\x02", 24, 28, 46),
    ):
        at = data.find(signature)
        while at != -1:
            (name_len,) = struct.unpack_from("<H", data, at + name_len_at)
            if bytes(data[at + name_at : at + name_at + name_len]) == name:
                struct.pack_into("<I", data, at + size_at, declared)
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))


def ods_bytes(rows_repeated: int, columns_repeated: int) -> bytes:
    """An OpenDocument spreadsheet of one cell repeated over a grid (a dense-grid bomb of
    about a kilobyte when the counts are large)."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        '<office:body><office:spreadsheet><table:table table:name="S">'
        f'<table:table-row table:number-rows-repeated="{rows_repeated}">'
        f'<table:table-cell table:number-columns-repeated="{columns_repeated}" '
        'office:value-type="float" office:value="1"><text:p>1</text:p></table:table-cell>'
        "</table:table-row></table:table></office:spreadsheet></office:body>"
        "</office:document-content>"
    )
    manifest = (
        '<?xml version="1.0"?><manifest:manifest '
        'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        '<manifest:file-entry manifest:full-path="/" '
        'manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", content)
        zf.writestr("META-INF/manifest.xml", manifest)
    return buf.getvalue()
