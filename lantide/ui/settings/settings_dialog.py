"""Settings: model profiles (primary and secondary; base URL, model, API key in the system
keyring, *Test connection*), query limits, agent limits, appearance, and the workspace's
external connections (:mod:`lantide.ui.settings.connections_page`, applied at once).

The dialog edits a copy of :class:`lantide.workspace.settings.Settings`. *OK* stores typed
keys in the keyring (:mod:`lantide.workspace.secrets`; a key never goes to a file) and saves
the settings, both in a worker; the dialog closes only when that worked, otherwise it
shows why and keeps what was typed.
"""

from __future__ import annotations

import copy
import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.services import AppServices
from lantide.ui.theme import colors
from lantide.workspace.settings import ModelProfile, Settings

BASE_URL_PRESETS = (
    ("OpenAI", "https://api.openai.com/v1"),
    ("Ollama (local)", "http://localhost:11434/v1"),
    ("LM Studio (local)", "http://localhost:1234/v1"),
    ("vLLM (local)", "http://localhost:8000/v1"),
)
NO_PROFILE = "(none)"


def _store_and_save(
    context, settings: Settings, keys: dict[str, str | None], renamed: dict[str, str]
) -> tuple[Settings, dict[str, BaseException]]:
    """The settings file, then the keys to the keyring (None deletes). Runs in a worker.

    A key that cannot be stored (no keyring) is an error of its profile, returned by
    profile name: the rest is saved all the same."""
    from lantide.errors import LantideError
    from lantide.workspace import secrets
    from lantide.workspace.settings import save_edited_settings

    save_edited_settings(settings)  # keeps what other processes wrote meanwhile
    failed: dict[str, BaseException] = {}
    for old, new in renamed.items():  # a renamed profile keeps its stored key
        if new not in keys:
            key = secrets.get_api_key(old)
            if key:
                try:
                    secrets.set_api_key(new, key)
                except LantideError as exc:
                    failed[new] = exc
                    continue  # the key stays under the old name rather than be lost
        secrets.delete_api_key(old)
    for profile, key in keys.items():
        if key is None:
            secrets.delete_api_key(profile)
            continue
        try:
            secrets.set_api_key(profile, key)
        except LantideError as exc:
            failed[profile] = exc
    return settings, failed


def _stored_keys(context, names: list[str]) -> tuple[dict[str, bool], bool]:
    """Which profiles have a stored key, and whether there is a keyring at all."""
    from lantide.workspace import secrets

    return {name: bool(secrets.get_api_key(name)) for name in names}, secrets.keyring_available()


def _compact(form: QFormLayout, fields) -> None:
    """Number fields as wide as a number needs, not the whole dialog."""
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
    for field in fields:
        field.setMinimumWidth(160)


class SettingsDialog(QDialog):
    sig_settings_saved = Signal(object)

    def __init__(self, services: AppServices, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.setObjectName("SettingsDialog")
        self.setWindowTitle("Settings — Lantide")
        self.resize(760, 520)
        self.settings: Settings = copy.deepcopy(services.settings)
        self.typed_keys: dict[str, str | None] = {}  # profile -> new key (None: delete)
        self.stored: dict[str, bool] = {}
        self.keyring_available = True
        self.key_errors: dict[str, str] = {}  # profile -> why it (or its key) was not saved
        self.profile_problems: dict[str, str] = {}  # profile -> what is wrong with its fields
        self.renamed: dict[str, str] = {}  # original name -> current name
        self._current: str | None = None
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._models_page(), icon("model"), "Models")
        self.tabs.addTab(self._query_page(), icon("sql"), "Queries")
        self.tabs.addTab(self._agent_page(), icon("chat"), "Agent")
        self.tabs.addTab(self._appearance_page(), icon("preview"), "Appearance")
        from lantide.ui.settings.update_settings_page import UpdateSettingsPage

        self.updates_page = UpdateSettingsPage(self.settings.updates, self)
        self.tabs.addTab(self.updates_page, icon("refresh"), "Updates")
        self.connections_page = None
        if getattr(services, "workspace", None) is not None:
            from lantide.ui.settings.connections_page import ConnectionsPage

            self.connections_page = ConnectionsPage(services, self)
            self.connections_page.sig_connections_changed.connect(
                services.notify_connections_changed
            )
            self.tabs.addTab(self.connections_page, icon("connection"), "Connections")
        from lantide.ui.integration import settings_page as integration_page

        self.integration_page = integration_page(services, self)
        if self.integration_page is not None:
            self.tabs.addTab(self.integration_page, icon("chat"), "Agent Integration")
        self.error_label = QLabel(self)
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {colors().danger.name()};")
        self.error_label.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self._fill_profiles()
        services.workers.submit(
            _stored_keys,
            [p.name for p in self.settings.profiles],
            on_result=self._keys_known,
            name="read keyring",
        )

    def show_page(self, title: str) -> bool:
        """Bring the tab named ``title`` (e.g. "Connections") to the front."""
        for i in range(self.tabs.count()):
            if self.tabs.tabText(i) == title:
                self.tabs.setCurrentIndex(i)
                return True
        return False

    # -- Models ------------------------------------------------------------------------------
    def _models_page(self) -> QWidget:
        page = QWidget(self)
        self.profile_list = QListWidget(page)
        self.profile_list.setMaximumWidth(200)
        self.profile_list.currentTextChanged.connect(self._profile_selected)
        add = QPushButton(icon("add"), "Add", page)
        add.clicked.connect(self.add_profile)
        remove = QPushButton(icon("delete"), "Remove", page)
        remove.clicked.connect(self.remove_profile)
        left = QVBoxLayout()
        left.addWidget(self.profile_list, 1)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        left.addLayout(row)

        self.name_edit = QLineEdit(page)
        self.base_url = QComboBox(page)
        self.base_url.setEditable(True)
        for label, url in BASE_URL_PRESETS:
            self.base_url.addItem(url)
            self.base_url.setItemData(self.base_url.count() - 1, label, Qt.ItemDataRole.ToolTipRole)
        self.model_edit = QComboBox(page)
        self.model_edit.setEditable(True)
        self.key_edit = QLineEdit(page)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.clear_key = QPushButton("Forget key", page)
        self.clear_key.clicked.connect(self._forget_key)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(self.clear_key)
        self.window_spin = QSpinBox(page)
        self.window_spin.setRange(0, 10_000_000)
        self.window_spin.setSingleStep(1024)
        self.window_spin.setSpecialValueText("discover")
        self.window_spin.setSuffix(" tokens")
        self.test_button = QPushButton(icon("refresh"), "Test connection", page)
        self.test_button.clicked.connect(self.test_connection)
        self.profile_error = QLabel(page)  # the error of this profile (its key, its fields)
        self.profile_error.setWordWrap(True)
        self.profile_error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.profile_error.setStyleSheet(f"color: {colors().danger.name()};")
        self.profile_error.hide()
        self.test_result = QLabel(page)
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.primary_combo = QComboBox(page)
        self.secondary_combo = QComboBox(page)
        self.secondary_combo.setToolTip(
            "Background calls (conversation titles, knowledge "
            "proposals); the primary profile when none"
        )
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model_edit)
        form.addRow("API key", key_row)
        form.addRow("", self.profile_error)
        form.addRow("Context window", self.window_spin)
        form.addRow("", self.test_button)
        form.addRow("", self.test_result)
        form.addRow(QLabel("<b>Roles</b>", page))
        form.addRow("Primary (chat)", self.primary_combo)
        form.addRow("Secondary (background)", self.secondary_combo)
        self.env_note = QLabel(page)
        self.env_note.setWordWrap(True)
        overrides = [
            v for v in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "LANTIDE_MODEL") if os.environ.get(v)
        ]
        if overrides:
            self.env_note.setText(
                f"{', '.join(overrides)} set in the environment override the primary profile."
            )
        form.addRow(self.env_note)
        self.form_widget = QWidget(page)
        self.form_widget.setLayout(form)
        layout = QHBoxLayout(page)
        layout.addLayout(left)
        layout.addWidget(self.form_widget, 1)
        for w in (self.name_edit, self.key_edit):
            w.editingFinished.connect(self._store_form)
        self.base_url.currentTextChanged.connect(lambda _t: self._store_form())
        self.model_edit.currentTextChanged.connect(lambda _t: self._store_form())
        self.window_spin.valueChanged.connect(lambda _v: self._store_form())
        return page

    def _fill_profiles(self) -> None:
        self.profile_list.blockSignals(True)
        self.profile_list.clear()
        for p in self.settings.profiles:
            self.profile_list.addItem(p.name)
        self.profile_list.blockSignals(False)
        names = [p.name for p in self.settings.profiles]
        for combo, value in (
            (self.primary_combo, self.settings.primary_profile),
            (self.secondary_combo, self.settings.secondary_profile),
        ):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([NO_PROFILE] + names)
            combo.setCurrentText(value if value in names else NO_PROFILE)
            combo.blockSignals(False)
        self.form_widget.setEnabled(bool(names))
        if names:
            current = self._current if self._current in names else names[0]
            self.profile_list.setCurrentRow(names.index(current))
            self._profile_selected(current)
        else:
            self._current = None
            self.test_result.setText(
                "No model profile yet: add one to chat with the agent. "
                "Everything else works without a model."
            )

    def _profile_selected(self, name: str) -> None:
        if self._current and self._current != name:
            self._store_form()
        profile = self.settings.profile(name)
        self._current = name if profile else None
        if profile is None:
            return
        for w in (self.name_edit, self.base_url, self.model_edit, self.key_edit, self.window_spin):
            w.blockSignals(True)
        self.name_edit.setText(profile.name)
        self.base_url.setCurrentText(profile.base_url)
        self.model_edit.setCurrentText(profile.model)
        typed = self.typed_keys.get(name)
        self.key_edit.setText(typed if isinstance(typed, str) else "")
        self.window_spin.setValue(profile.context_window or 0)
        for w in (self.name_edit, self.base_url, self.model_edit, self.key_edit, self.window_spin):
            w.blockSignals(False)
        self._update_key_placeholder()
        self._show_profile_error()
        self.test_result.clear()

    def _show_profile_error(self, text: str | None = None) -> None:
        text = text if text is not None else self.key_errors.get(self._current or "", "")
        self.profile_error.setText(text)
        self.profile_error.setVisible(bool(text))

    def _update_key_placeholder(self) -> None:
        name = self._current or ""
        typed = self.typed_keys.get(name, "")
        if typed is None:
            text = "the stored key will be forgotten"
        elif self.stored.get(self._original(name)):
            text = "stored in the system keyring (type to replace)"
        elif not self.keyring_available:
            text = "no system keyring here: use the environment (see the tooltip)"
        else:
            text = "none (local servers need none)"
        self.key_edit.setPlaceholderText(text)
        if not self.keyring_available:
            from lantide.workspace.secrets import NO_KEYRING_HINT

            self.key_edit.setToolTip(NO_KEYRING_HINT)

    def _keys_known(self, known: tuple[dict[str, bool], bool]) -> None:
        self.stored, self.keyring_available = known
        self._update_key_placeholder()

    def _original(self, name: str) -> str:
        return next((old for old, new in self.renamed.items() if new == name), name)

    def _store_form(self) -> None:
        profile = self.settings.profile(self._current) if self._current else None
        if profile is None:
            return
        new_name = self.name_edit.text().strip() or profile.name
        if new_name != profile.name and self.settings.profile(new_name) is None:
            old = profile.name
            self.renamed[self._original(old)] = new_name
            if old in self.typed_keys:
                self.typed_keys[new_name] = self.typed_keys.pop(old)
            for role in ("primary_profile", "secondary_profile"):
                if getattr(self.settings, role) == old:
                    setattr(self.settings, role, new_name)
            profile.name = new_name
            self._current = new_name
            self._fill_profiles()
        profile.base_url = self.base_url.currentText().strip()
        profile.model = self.model_edit.currentText().strip()
        profile.context_window = self.window_spin.value() or None
        if self.key_edit.text():
            self.typed_keys[profile.name] = self.key_edit.text()
        elif isinstance(self.typed_keys.get(profile.name), str):
            # the typed key was cleared: nothing to store (and no error about storing it)
            del self.typed_keys[profile.name]
            if self.key_errors.pop(profile.name, None):
                self._show_profile_error()

    def add_profile(self) -> None:
        self._store_form()
        names = {p.name for p in self.settings.profiles}
        n = 1
        while f"profile{n}" in names:
            n += 1
        name = "primary" if not names else f"profile{n}"
        self.settings.upsert_profile(ModelProfile(name=name))
        self._current = name
        self._fill_profiles()
        self.name_edit.setFocus()
        self.name_edit.selectAll()

    def remove_profile(self) -> None:
        if not self._current:
            return
        name = self._current
        self.settings.remove_profile(name)
        self.typed_keys[name] = None  # its key leaves the keyring too
        self._current = None
        self._fill_profiles()

    def _forget_key(self) -> None:
        if self._current:
            self.typed_keys[self._current] = None
            self.key_edit.clear()
            self._update_key_placeholder()

    def test_connection(self) -> None:
        from lantide.ui.settings.connection_test import check_connection
        from lantide.workspace import secrets

        self._store_form()
        profile = self.settings.profile(self._current) if self._current else None
        if profile is None:
            return
        typed = self.typed_keys.get(profile.name, "")
        forget = profile.name in self.typed_keys and typed is None
        original = self._original(profile.name)
        self.test_button.setEnabled(False)
        self.test_result.setText(f"Connecting to {profile.base_url}…")

        def run(ctx):
            stored = (
                typed
                or (None if forget else secrets.get_api_key(original))
                or secrets.env_api_key()
            )
            return check_connection(
                ctx,
                profile.name,
                profile.base_url,
                profile.model,
                stored,
                profile.context_window,
                self.settings.agent,
            )

        self.services.workers.submit(
            run,
            on_result=self._tested,
            on_error=lambda e: self._tested(None, e),
            name="test connection",
        )

    def _tested(self, report, error: BaseException | None = None) -> None:
        self.test_button.setEnabled(True)
        theme = colors()
        if report is None or not report.ok:
            message = report.message if report is not None else str(error)
            hint = report.hint if report is not None else None
            self.test_result.setText(
                f"<span style='color:{theme.danger.name()}'>✗ {message}"
                f"</span>" + (f"<br>{hint}" if hint else "")
            )
            return
        self.model_edit.blockSignals(True)
        current = self.model_edit.currentText()
        self.model_edit.clear()
        self.model_edit.addItems(report.models)
        self.model_edit.setCurrentText(current)
        self.model_edit.blockSignals(False)
        found = {
            "profile": "set in this profile",
            "learned": "learned from the server",
            "endpoint": "reported by the endpoint",
            "known": "known for this model",
            "default": "a conservative default",
        }.get(report.context_source or "", "")
        shown = ", ".join(report.models[:8]) + (" …" if len(report.models) > 8 else "")
        text = (
            f"<span style='color:{theme.success.name()}'>✓ {report.message}</span><br>"
            f"Models: {shown or 'none listed'}<br>"
            f"Context window: {report.context_window:,} tokens ({found})"
        )
        if report.hint:
            text += f"<br><span style='color:{theme.warning.name()}'>{report.hint}</span>"
        self.test_result.setText(text)
        self.last_report = report

    # -- Queries / Agent / Appearance --------------------------------------------------------
    def _query_page(self) -> QWidget:
        q = self.settings.query
        page = QWidget(self)
        form = QFormLayout(page)
        self.timeout_spin = QDoubleSpinBox(page)
        self.timeout_spin.setRange(1, 24 * 3600)
        self.timeout_spin.setSuffix(" s")
        self.timeout_spin.setValue(q.timeout_seconds)
        self.memory_edit = QLineEdit(q.memory_limit, page)
        self.memory_edit.setToolTip("A size such as 4GB, or a share of RAM such as 75%")
        self.threads_spin = QSpinBox(page)
        self.threads_spin.setRange(0, 512)
        self.threads_spin.setSpecialValueText("all cores")
        self.threads_spin.setValue(q.threads)
        self.preview_spin = QSpinBox(page)
        self.preview_spin.setRange(1, 200)
        self.preview_spin.setValue(q.preview_rows)
        self.remote_spin = QSpinBox(page)
        self.remote_spin.setRange(1000, 2_000_000_000)
        self.remote_spin.setSingleStep(100_000)
        self.remote_spin.setValue(q.large_remote_rows)
        self.workers_spin = QSpinBox(page)
        self.workers_spin.setRange(0, 16)
        self.workers_spin.setSpecialValueText("automatic")
        self.workers_spin.setValue(q.source_run_workers)
        self.workers_spin.setToolTip("How many independent tabs a Source Run computes at once")
        form.addRow("Time limit per statement", self.timeout_spin)
        form.addRow("DuckDB memory limit", self.memory_edit)
        form.addRow("DuckDB threads", self.threads_spin)
        form.addRow("Preview rows (agent, at most 200)", self.preview_spin)
        form.addRow("Ask before staging more remote rows than", self.remote_spin)
        form.addRow("Source Run: tabs at once", self.workers_spin)
        form.addRow(QLabel("Query limits apply when the workspace is opened next.", page))
        self.remote_spin.setGroupSeparatorShown(True)
        _compact(
            form,
            (
                self.timeout_spin,
                self.memory_edit,
                self.threads_spin,
                self.preview_spin,
                self.remote_spin,
                self.workers_spin,
            ),
        )
        return page

    def _agent_page(self) -> QWidget:
        a = self.settings.agent
        page = QWidget(self)
        form = QFormLayout(page)
        self.iterations_spin = QSpinBox(page)
        self.iterations_spin.setRange(1, 100)
        self.iterations_spin.setValue(a.max_iterations)
        self.continue_spin = QSpinBox(page)
        self.continue_spin.setRange(0, 10)
        self.continue_spin.setSpecialValueText("off: ask me")
        self.continue_spin.setSuffix(" more rounds")
        self.continue_spin.setValue(a.auto_continue_rounds)
        self.continue_spin.setToolTip(
            "At the step limit, go on by itself for up to this many "
            "more rounds of steps instead of asking you to continue"
        )
        self.tool_retries_spin = QSpinBox(page)
        self.tool_retries_spin.setRange(0, 20)
        self.tool_retries_spin.setValue(a.max_tool_retries)
        self.request_timeout_spin = QDoubleSpinBox(page)
        self.request_timeout_spin.setRange(5, 3600)
        self.request_timeout_spin.setSuffix(" s")
        self.request_timeout_spin.setValue(a.request_timeout_seconds)
        self.retries_spin = QSpinBox(page)
        self.retries_spin.setRange(0, 20)
        self.retries_spin.setValue(a.max_retries)
        self.token_budget_spin = QSpinBox(page)
        self.token_budget_spin.setRange(0, 100_000_000)
        self.token_budget_spin.setSingleStep(50_000)
        self.token_budget_spin.setSpecialValueText("no limit")
        self.token_budget_spin.setSuffix(" tokens")
        self.token_budget_spin.setGroupSeparatorShown(True)
        self.token_budget_spin.setValue(int(a.token_budget or 0))
        self.token_budget_spin.setToolTip(
            "Tokens one conversation may use: a warning at 80%, the agent stops at 100%"
        )
        form.addRow("Steps per turn", self.iterations_spin)
        form.addRow("At the step limit, continue", self.continue_spin)
        form.addRow("Retries of a failing tool call", self.tool_retries_spin)
        form.addRow("Model request time limit", self.request_timeout_spin)
        form.addRow("Retries on busy or failing servers", self.retries_spin)
        form.addRow("Token budget per conversation", self.token_budget_spin)
        # a setting of this workspace (.lantide/workspace.json), applied at once
        self.apply_edits_check = QCheckBox("Write the agent's edits at once, without review", page)
        self.apply_edits_check.setObjectName("ApplyAgentEdits")
        self.apply_edits_check.setChecked(
            self.services.workspace.settings.get("agent_edits") == "apply"
        )
        self.apply_edits_check.setToolTip(
            "For this workspace. Off (the default): the agent's changes to the Plan and the "
            "Report wait in their tab for you to accept or reject, hunk by hunk."
        )
        self.apply_edits_check.toggled.connect(self._apply_edits_toggled)
        form.addRow("Plan and Report edits", self.apply_edits_check)
        _compact(
            form,
            (
                self.iterations_spin,
                self.continue_spin,
                self.tool_retries_spin,
                self.request_timeout_spin,
                self.retries_spin,
                self.token_budget_spin,
            ),
        )
        return page

    def _apply_edits_toggled(self, on: bool) -> None:
        from lantide.docs.pending_edits import set_edit_mode

        self.services.workers.submit(
            lambda _context, workspace, mode: set_edit_mode(workspace, mode),
            self.services.workspace,
            "apply" if on else "review",
            on_error=lambda exc: self.services.report_error(exc, "Saving the workspace setting"),
            name="agent edits setting",
        )

    def _appearance_page(self) -> QWidget:
        page = QWidget(self)
        layout = QVBoxLayout(page)
        self.appearance_group = QButtonGroup(page)
        for value, label in (
            ("system", "Follow the system (light or dark)"),
            ("light", "Light"),
            ("dark", "Dark"),
        ):
            button = QRadioButton(label, page)
            button.setProperty("appearance", value)
            button.setChecked(self.settings.appearance == value)
            self.appearance_group.addButton(button)
            layout.addWidget(button)
        layout.addStretch(1)
        return page

    def appearance(self) -> str:
        checked = self.appearance_group.checkedButton()
        return checked.property("appearance") if checked is not None else "system"

    # -- saving --------------------------------------------------------------------------
    def _collect(self) -> str | None:
        """Copy the form into ``self.settings``; an error message when something is wrong
        with the whole (two profiles of one name). A profile that is wrong on its own
        (:meth:`ModelProfile.problem`) goes to ``self.profile_problems``: it is kept in the
        form and left out of what is saved, so the other pages still save."""
        self._store_form()
        names = [p.name for p in self.settings.profiles]
        if len(set(names)) != len(names):
            return "Two profiles have the same name."
        self.profile_problems = {
            p.name: problem for p in self.settings.profiles if (problem := p.problem())
        }
        primary, secondary = self.primary_combo.currentText(), self.secondary_combo.currentText()
        self.settings.primary_profile = None if primary == NO_PROFILE else primary
        self.settings.secondary_profile = None if secondary == NO_PROFILE else secondary
        if self.settings.primary_profile is None and names:
            self.settings.primary_profile = names[0]
        q = self.settings.query
        q.timeout_seconds = self.timeout_spin.value()
        q.memory_limit = self.memory_edit.text().strip() or "75%"
        q.threads = self.threads_spin.value()
        q.preview_rows = self.preview_spin.value()
        q.large_remote_rows = self.remote_spin.value()
        q.source_run_workers = self.workers_spin.value()
        a = self.settings.agent
        a.max_iterations = self.iterations_spin.value()
        a.auto_continue_rounds = self.continue_spin.value()
        a.token_budget = self.token_budget_spin.value()
        a.max_tool_retries = self.tool_retries_spin.value()
        a.request_timeout_seconds = self.request_timeout_spin.value()
        a.max_retries = self.retries_spin.value()
        self.settings.appearance = self.appearance()
        return self.updates_page.apply_to(self.settings.updates)

    def save(self) -> None:
        problem = self._collect()
        if problem:
            self._show_error(problem)
            return
        self.error_label.hide()
        self.buttons.setEnabled(False)
        saving, keys, renamed = self._without_problem_profiles()
        self.services.workers.submit(
            _store_and_save,
            saving,
            keys,
            renamed,
            on_result=self._saved,
            on_error=self._save_failed,
            name="save settings",
        )

    def _without_problem_profiles(self) -> tuple[Settings, dict[str, str | None], dict[str, str]]:
        """What to save: the form, with each profile that has a problem as it was last
        saved (or left out if it is new), its typed key and its rename held back."""
        saving = copy.deepcopy(self.settings)
        keys = dict(self.typed_keys)
        renamed = dict(self.renamed)
        before = self.services.settings
        for name in self.profile_problems:
            original = self._original(name)
            old = before.profile(original)
            at = next(i for i, p in enumerate(saving.profiles) if p.name == name)
            clash = any(p.name == original for i, p in enumerate(saving.profiles) if i != at)
            if old is not None and not clash:
                saving.profiles[at] = copy.deepcopy(old)
            else:
                del saving.profiles[at]
            keys.pop(name, None)
            renamed.pop(original, None)
        valid = {p.name for p in saving.profiles}
        if saving.primary_profile not in valid:
            saving.primary_profile = (
                before.primary_profile
                if before.primary_profile in valid
                else next(iter(sorted(valid)), None)
            )
        if saving.secondary_profile is not None and saving.secondary_profile not in valid:
            saving.secondary_profile = (
                before.secondary_profile if before.secondary_profile in valid else None
            )
        return saving, keys, renamed

    def _saved(self, outcome: tuple[Settings, dict[str, BaseException]]) -> None:
        from PySide6.QtWidgets import QApplication

        from lantide.ui.theme import install_theme

        settings, failed = outcome
        held = [p for p in self.settings.profiles if p.name in self.profile_problems]
        self.settings = copy.deepcopy(settings)
        for profile in held:  # what was typed into a profile with a problem stays in the form
            original = self._original(profile.name)
            self.settings.profiles = [
                p for p in self.settings.profiles if p.name not in (profile.name, original)
            ]
            self.settings.profiles.append(copy.deepcopy(profile))
        self.services.settings = settings
        self.services.sig_settings_changed.emit(settings)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            install_theme(app, settings.appearance)
        # keys stored (or forgotten) are done; a key that failed stays typed, at its profile
        self.typed_keys = {
            n: k for n, k in self.typed_keys.items() if n in failed or n in self.profile_problems
        }
        self.renamed = {
            old: new for old, new in self.renamed.items() if new in self.profile_problems
        }
        self.sig_settings_saved.emit(settings)
        if not failed and not self.profile_problems:
            self.accept()
            return
        self.buttons.setEnabled(True)
        self.key_errors = dict(self.profile_problems)
        for name, exc in failed.items():
            message = getattr(exc, "message", None) or str(exc)
            hint = getattr(exc, "hint", None)
            message = message[:1].lower() + message[1:]
            self.key_errors[name] = (
                f"The key of profile {name!r} was not stored: {message}. " + (hint or "")
            ).strip()
        for name in self.profile_problems:
            self.key_errors[name] += " Everything else was saved; this profile was not."
        first = next(iter(self.key_errors))
        self.show_page("Models")
        self._current = first if self.settings.profile(first) else self._current
        self._fill_profiles()
        self._show_profile_error()

    def _save_failed(self, exc: BaseException) -> None:
        self.buttons.setEnabled(True)
        message = getattr(exc, "message", None) or str(exc)
        hint = getattr(exc, "hint", None)
        self._show_error(message + (f" — {hint}" if hint else ""))

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.show()
