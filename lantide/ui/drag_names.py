"""What a name dragged from the explorer carries: the table or column quoted for SQL (the
query layer quotes it), as its own MIME type for the SQL editor and as plain text for any
other drop target."""

from __future__ import annotations

from PySide6.QtCore import QMimeData

SQL_NAME_MIME = "application/x-lantide-sql-name"


def sql_name_mime(sql_name: str) -> QMimeData:
    data = QMimeData()
    data.setData(SQL_NAME_MIME, sql_name.encode("utf-8"))
    data.setText(sql_name)
    return data


def dropped_sql_name(data: QMimeData) -> str | None:
    """The quoted name a drop carries, or None when it is not one of ours."""
    if not data.hasFormat(SQL_NAME_MIME):
        return None
    text = bytes(data.data(SQL_NAME_MIME).data()).decode("utf-8", errors="replace")
    return text or None
