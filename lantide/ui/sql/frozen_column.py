"""The result grid's frozen first column, as in Qt's "Frozen Column" example: a second
table view laid over the grid's left edge, showing only column 0, sharing the grid's model
and selection and scrolled with it, so the first column stays while the others scroll
sideways under it."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QFrame, QHeaderView, QTableView


class FrozenColumnView(QTableView):
    """Column 0 of ``grid`` on top of it; :meth:`sync` after the grid changes model or
    size (the grid calls it)."""

    def __init__(self, grid: QTableView, header: QHeaderView):
        super().__init__(grid)
        self.grid = grid
        self.setObjectName("FrozenColumn")
        self.setAccessibleName("Frozen first column")
        self.setHorizontalHeader(header)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionBehavior(grid.selectionBehavior())
        self.setSelectionMode(grid.selectionMode())
        self.setWordWrap(False)
        self.setAlternatingRowColors(grid.alternatingRowColors())
        self.setStyleSheet("QTableView#FrozenColumn { border-right: 1px solid palette(mid); }")
        vertical = self.verticalHeader()
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(grid.verticalHeader().defaultSectionSize())
        grid.viewport().stackUnder(self)
        grid.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        self.verticalScrollBar().valueChanged.connect(grid.verticalScrollBar().setValue)
        grid.horizontalHeader().sectionResized.connect(self._grid_section_resized)
        self._model: QAbstractItemModel | None = None

    def sync(self) -> None:
        """Follow the grid's model, selection and geometry."""
        model = self.grid.model()
        if model is not self._model:
            if self._model is not None:
                self._model.modelReset.disconnect(self._hide_other_columns)
            self._model = model
            self.setModel(model)
            if model is not None:
                model.modelReset.connect(self._hide_other_columns)
        if model is not None and self.selectionModel() is not self.grid.selectionModel():
            self.setSelectionModel(self.grid.selectionModel())
        self._hide_other_columns()
        self.update_geometry()

    def _hide_other_columns(self) -> None:
        model = self.model()
        if model is None:
            return
        for col in range(model.columnCount()):
            self.setColumnHidden(col, col != 0)
        if model.columnCount():
            self.setColumnWidth(0, self.grid.columnWidth(0))
        self.verticalScrollBar().setValue(self.grid.verticalScrollBar().value())

    def _grid_section_resized(self, section: int, _old: int, new: int) -> None:
        if section == 0:
            self.setColumnWidth(0, new)
            self.update_geometry()

    def update_geometry(self) -> None:
        grid = self.grid
        frame = grid.frameWidth()
        self.setGeometry(
            grid.verticalHeader().width() + frame,
            frame,
            grid.columnWidth(0),
            grid.viewport().height() + grid.horizontalHeader().height(),
        )
