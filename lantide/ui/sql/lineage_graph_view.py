"""The lineage of a project's tabs as a picture: a QGraphicsView of
:func:`lantide.query.lineage_graph.lineage_graph` (nodes, edges and their layered layout
come from there; the boxes and edges are :mod:`lantide.ui.sql.lineage_graph_items`).

- Tabs are rounded boxes, sources (data files, sheets, cached tables, connection tables,
  files) square ones; a table that is nothing yet has a dashed outline and says *not
  found*. Each box says what it is in words on its second line (*▲ stale*, *○ never run*,
  *✓ up to date*, *✕ error*, *data file*, …), colour only repeats it.
- The selected node's upstream chain is drawn strong, the rest faint. Click selects;
  double-click or Enter opens (a tab in its SQL tab, a table in the table browser); the
  arrow keys walk the graph (← what it reads, → what reads it, ↑ ↓ within a column).
- Source Run (button, context menu) recomputes a tab and its upstream chain through the
  SQL tab's own Source Run (its progress and Stop). Zoom with Ctrl+wheel or + and −, Fit
  (0) shows it all. Edges that close a cycle are dashed.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.sql.lineage_graph_items import (
    FIT_SMALLEST,
    ZOOM_STEP,
    EdgeItem,
    NodeItem,
    slot,
)


class GraphCanvas(QGraphicsView):
    sig_activated = Signal(object)  # NodeItem: double-click or Enter
    sig_menu = Signal(object, object)  # NodeItem, global position

    def __init__(self, scene: QGraphicsScene, parent: QWidget | None = None):
        super().__init__(scene, parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # set by the graph view: the node an arrow key moves to from a node
        self.neighbours: Callable[[NodeItem | None, object], NodeItem | None] | None = None
        self.auto_fit = True  # the graph follows the panel's size until the analyst zooms

    def zoom(self, factor: float) -> None:
        self.auto_fit = False
        scale = self.transform().m11() * factor
        if 0.2 <= scale <= 4.0:
            self.scale(factor, factor)

    def wheelEvent(self, event) -> None:  # noqa: N802
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom(ZOOM_STEP if event.angleDelta().y() > 0 else 1 / ZOOM_STEP)
            return
        super().wheelEvent(event)

    def _node_at(self, pos) -> NodeItem | None:
        item = self.itemAt(pos)
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        return item

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        node = self._node_at(event.position().toPoint())
        if node is not None:
            self.sig_activated.emit(node)
            return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        node = self._node_at(event.pos())
        if node is not None:
            self.scene().clearSelection()
            node.setSelected(True)
        self.sig_menu.emit(node, event.globalPos())

    def keyPressEvent(self, event) -> None:  # noqa: N802
        key = event.key()
        selected = [i for i in self.scene().selectedItems() if isinstance(i, NodeItem)]
        current = selected[0] if selected else None
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and current is not None:
            self.sig_activated.emit(current)
            return
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(ZOOM_STEP)
            return
        if key == Qt.Key.Key_Minus:
            self.zoom(1 / ZOOM_STEP)
            return
        if key == Qt.Key.Key_0:
            self.fit()
            return
        if key in (Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down):
            if self.neighbours is not None:
                nxt = self.neighbours(current, key)
                if nxt is not None:
                    self.scene().clearSelection()
                    nxt.setSelected(True)
                    self.ensureVisible(nxt, 24, 24)
            return
        super().keyPressEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.auto_fit:
            self.fit()

    def fit(self) -> None:
        self.auto_fit = True
        rect = self.scene().sceneRect()
        if rect.isEmpty():
            return
        self.resetTransform()
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        scale = self.transform().m11()
        if scale > 1.0 or scale < FIT_SMALLEST:  # natural size, or as small as stays legible
            self.resetTransform()
            if scale < FIT_SMALLEST:
                self.scale(FIT_SMALLEST, FIT_SMALLEST)
            # too large to show whole: the selected box (this tab) is what must show
            chosen = [i for i in self.scene().selectedItems() if isinstance(i, NodeItem)]
            focus = rect.center() if scale > 1.0 or not chosen else chosen[0].sceneBoundingRect()
            self.centerOn(focus if isinstance(focus, QPointF) else focus.center())


class LineageGraphView(QWidget):
    sig_open_requested = Signal(str, str)  # "sql" or "table", name
    sig_source_run_requested = Signal(str)  # tab

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.scene = QGraphicsScene(self)
        self.canvas = GraphCanvas(self.scene, self)
        self.canvas.neighbours = self._neighbour
        self.canvas.sig_activated.connect(self._activate)
        self.canvas.sig_menu.connect(self.show_menu)
        self.canvas.setAccessibleName("Lineage graph")
        self.scene.selectionChanged.connect(self._selection_changed)
        self.graph: dict | None = None
        self.nodes: dict[str, NodeItem] = {}
        self.edges: list[EdgeItem] = []
        self._fitted = False

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setSpacing(4)
        self.run_button = self._button(bar, "Source Run", "source-run", self._source_run)
        self.run_button.setToolTip("Recompute the selected tab and the tabs it reads")
        self.open_button = self._button(bar, "Open", "open", self._open_selected)
        bar.addSpacing(8)
        self._button(bar, "+", None, lambda: self.canvas.zoom(ZOOM_STEP), "Zoom in (+)")
        self._button(bar, "−", None, lambda: self.canvas.zoom(1 / ZOOM_STEP), "Zoom out (−)")
        self._button(bar, "Fit", None, self.canvas.fit, "Show the whole graph (0)")
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.canvas, 1)
        self._update_buttons()

    def _button(self, bar, text: str, icon_name: str | None, slot, tip: str = "") -> QToolButton:
        button = QToolButton(self)
        if icon_name:
            button.setIcon(icon(icon_name))
        if text:
            button.setText(text)
            button.setToolButtonStyle(
                Qt.ToolButtonStyle.ToolButtonTextBesideIcon
                if icon_name
                else Qt.ToolButtonStyle.ToolButtonTextOnly
            )
        button.setAutoRaise(True)
        if tip:
            button.setToolTip(tip)
        button.clicked.connect(lambda _c=False: slot())
        bar.addWidget(button)
        return button

    # -- showing --------------------------------------------------------------------
    def show_graph(self, graph: dict, selected_tab: str | None = None) -> None:
        keep = self.selected_id()
        self.graph = graph
        # forget the old items first: clearing the scene announces a selection change
        self.nodes, self.edges = {}, []
        self.scene.blockSignals(True)
        self.scene.clear()
        self.scene.blockSignals(False)
        for node in graph.get("nodes", []):
            item = NodeItem(node)
            item.setPos(slot(node["layer"], node["row"]))
            self.scene.addItem(item)
            self.nodes[item.node_id] = item
        for edge in graph.get("edges", []):
            source, target = self.nodes.get(edge["source"]), self.nodes.get(edge["target"])
            if source is not None and target is not None:
                line = EdgeItem(source, target, bool(edge.get("back")), edge.get("via") or ())
                self.scene.addItem(line)
                self.edges.append(line)
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-24, -24, 24, 24))
        wanted = keep if keep in self.nodes else f"tab:{selected_tab}" if selected_tab else None
        if wanted in self.nodes:
            self.nodes[wanted].setSelected(True)
        self._selection_changed()
        if not self._fitted and self.isVisible():
            self.canvas.fit()
            self._fitted = True

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._fitted and self.nodes:
            self.canvas.fit()
            self._fitted = True

    def select(self, node_id: str) -> None:
        self.scene.clearSelection()
        if node_id in self.nodes:
            self.nodes[node_id].setSelected(True)

    def selected_id(self) -> str | None:
        items = [i for i in self.scene.selectedItems() if isinstance(i, NodeItem)]
        return items[0].node_id if items else None

    def highlighted_ids(self) -> set[str]:
        return {k for k, item in self.nodes.items() if item.highlighted}

    def _selection_changed(self) -> None:
        from lantide.query.lineage_graph import upstream

        chosen = self.selected_id()
        if chosen is None or self.graph is None:
            chain_nodes, chain_edges = set(self.nodes), None
        else:
            chain_nodes, chain_edges = upstream(self.graph, chosen)  # type: ignore[arg-type]  # the engine's LineageGraph, held as a dict here
        for key, item in self.nodes.items():
            item.highlighted = key in chain_nodes
            item.update()
        for edge in self.edges:
            on = chain_edges is None or (edge.source.node_id, edge.target.node_id) in chain_edges
            edge.set_highlighted(on)
        self._update_buttons()

    def _update_buttons(self) -> None:
        node = self.nodes.get(self.selected_id() or "")
        kind = node.node.get("kind") if node else None
        self.run_button.setEnabled(kind == "tab")
        self.open_button.setEnabled(kind in ("tab", "data", "cached"))

    # -- acting -----------------------------------------------------------------------
    def _neighbour(self, current: NodeItem | None, key) -> NodeItem | None:
        if not self.nodes:
            return None
        if current is None:
            return next(iter(self.nodes.values()))
        me = current.node
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            step = -1 if key == Qt.Key.Key_Up else 1
            same = [n for n in self.nodes.values() if n.node["layer"] == me["layer"]]
            same.sort(key=lambda n: n.node["row"])
            index = same.index(current) + step
            return same[index] if 0 <= index < len(same) else None
        wanted = [
            e.source if key == Qt.Key.Key_Left else e.target
            for e in self.edges
            if (e.target if key == Qt.Key.Key_Left else e.source) is current and not e.back
        ]
        # the nearest: in the next column first, then the nearest row
        wanted.sort(
            key=lambda n: (abs(n.node["layer"] - me["layer"]), abs(n.node["row"] - me["row"]))
        )
        return wanted[0] if wanted else None

    def _activate(self, item: NodeItem) -> None:
        node = item.node
        if node.get("kind") == "tab":
            self.sig_open_requested.emit("sql", node["name"])
        elif node.get("kind") in ("data", "cached"):
            self.sig_open_requested.emit("table", node["name"])

    def _open_selected(self) -> None:
        node = self.nodes.get(self.selected_id() or "")
        if node is not None:
            self._activate(node)

    def source_run(self, tab: str) -> None:
        self.sig_source_run_requested.emit(tab)

    def _source_run(self) -> None:
        node = self.nodes.get(self.selected_id() or "")
        if node is not None and node.node.get("kind") == "tab":
            self.source_run(node.node["name"])

    def show_menu(self, item: NodeItem | None, where) -> None:
        menu = QMenu(self)
        if item is not None:
            node = item.node
            if node.get("kind") in ("tab", "data", "cached"):
                menu.addAction(icon("open"), "Open", lambda: self._activate(item))
            if node.get("kind") == "tab":
                menu.addAction(
                    icon("source-run"),
                    f"Source Run {node['name']}",
                    lambda: self.source_run(node["name"]),
                )
            menu.addSeparator()
        menu.addAction("Fit", self.canvas.fit)
        self.menu = menu  # tests look at it
        menu.popup(where)
