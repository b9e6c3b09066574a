"""OpenDocument spreadsheets built as a zip of XML, as LibreOffice writes them: typed
cells, error cells (``calcext:value-type="error"``) and the empty filler that runs each
sheet to its last row and column."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0"'
)
LAST_ROW, LAST_COLUMN = 1_048_576, 16_384


class Error(str):
    """An error cell's text, e.g. ``Error("#DIV/0!")``."""


def _cell(value: object) -> str:
    if value is None:
        return "<table:table-cell/>"
    if isinstance(value, Error):
        return (
            '<table:table-cell table:formula="of:=1/0" office:value-type="string" '
            'office:string-value="" calcext:value-type="error">'
            f"<text:p>{escape(value)}</text:p></table:table-cell>"
        )
    if isinstance(value, bool):
        return (
            f'<table:table-cell office:value-type="boolean" office:boolean-value='
            f'"{str(value).lower()}"><text:p>{str(value).upper()}</text:p></table:table-cell>'
        )
    if isinstance(value, (int, float)):
        return (
            f'<table:table-cell office:value-type="float" office:value="{value}">'
            f"<text:p>{value}</text:p></table:table-cell>"
        )
    return (
        '<table:table-cell office:value-type="string">'
        f"<text:p>{escape(str(value))}</text:p></table:table-cell>"
    )


def ods_bytes(sheets: dict[str, list[list[object]]], *, filler: bool = True) -> bytes:
    """A workbook of ``sheets`` (rows of cells: None, str, int, float, bool, Error); with
    ``filler``, each row runs to the last column and the sheet to the last row, as
    LibreOffice saves a sheet."""
    tables = []
    for name, rows in sheets.items():
        xml = [f'<table:table table:name="{escape(name)}">']
        xml.append(f'<table:table-column table:number-columns-repeated="{LAST_COLUMN}"/>')
        for row in rows:
            rest = LAST_COLUMN - len(row)
            tail = f'<table:table-cell table:number-columns-repeated="{rest}"/>' if filler else ""
            xml.append("<table:table-row>" + "".join(map(_cell, row)) + tail + "</table:table-row>")
        if filler:
            xml.append(
                f'<table:table-row table:number-rows-repeated="{LAST_ROW - len(rows)}">'
                f'<table:table-cell table:number-columns-repeated="{LAST_COLUMN}"/>'
                "</table:table-row>"
            )
        xml.append("</table:table>")
        tables.append("".join(xml))
    return package("".join(tables))


def error_grid(rows: int, columns: int) -> str:
    """A sheet's XML of one error cell repeated over ``rows`` x ``columns`` (a few hundred
    bytes for any size)."""
    return (
        '<table:table table:name="S">'
        f'<table:table-row table:number-rows-repeated="{rows}">'
        f'<table:table-cell table:number-columns-repeated="{columns}" '
        'office:value-type="string" office:string-value="" calcext:value-type="error">'
        "<text:p>#N/A</text:p></table:table-cell></table:table-row></table:table>"
    )


def package(tables_xml: str) -> bytes:
    """An .ods of the given ``<table:table>`` elements."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_NS} '
        'office:version="1.3"><office:body><office:spreadsheet>'
        + tables_xml
        + "</office:spreadsheet></office:body></office:document-content>"
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
