"""The ledger's line kinds (:mod:`lantide.agent.ledger`), as written and read back.

A query step (:class:`LedgerStep`; what a producer hands the ledger: :class:`StepFields`),
an analyst's waiver of a step's check (:class:`Waiver`), a ``[[QUERY_STEP]]`` line no step
could be given (:class:`UnattributedLine`) and a review before reporting
(:class:`ReflectionLine`). The fields are those of DESIGN.md sections 6 and 9.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, Required, TypedDict

if TYPE_CHECKING:
    from lantide.agent.evidence import ResultCells
    from lantide.agent.reflection import ChecklistItem, UnresolvedCheck
    from lantide.query.checks.rules import Check
    from lantide.query.results import Column


class StepPatch(TypedDict):
    """One correction of a step (``patch_step``): who, when, and the values it replaced."""

    at: str
    by: str
    old: dict[str, object]


class Waiver(TypedDict):
    """An analyst's waiver of a step's error check: a ledger line of its own (DESIGN.md
    section 9), written by :func:`lantide.agent.check_gate.write_waiver`."""

    kind: str
    step_id: str
    check: str
    by: str
    at: str
    reason: str


class StepExtras(TypedDict, total=False):
    """The fields of a step beyond :data:`STEP_FIELDS`: each present on some steps only
    (lines written before it existed lack it)."""

    # pending, parsed, mismatch, malformed, missing, patched (or a producer's own: chart)
    summary_status: str
    summary_raw: str  # the unreadable [[QUERY_STEP]] line of a malformed summary
    summary_unmatched: list[str] | None  # a mismatch's numbers
    patches: list[StepPatch]
    # what the ledger keeps about the step's evidence (lantide.agent.evidence)
    evidence: str
    result_values: list[float | int]
    result_values_cut: bool
    result_cells: ResultCells
    result_cells_cut: bool
    # a chart's step (create_chart): the chart file and the step whose data it draws
    chart: str
    source_step_id: str | None
    # a step that ran on an external connection (a remote tab, a staged statement): its
    # name in the workspace's connections, never its string or password
    connection: str
    # an outside agent's step (lantide.mcp): the paired client
    client: str
    client_name: str
    # in memory only, never written: the analyst's waivers of its error checks
    # (lantide.agent.check_gate.attach_waivers)
    waivers: list[Waiver]


class StepFields(StepExtras, total=False):
    """What a producer hands :meth:`Ledger.append`: the query layer's ``step`` (DESIGN.md
    section 6) and what the agent adds; a missing field is recorded as null."""

    step_id: str
    conversation_id: str | None
    at: str | None
    tool: Required[str]
    project: str | None
    purpose: str | None
    result_label: str | None
    sql: str | None
    row_count: int | None
    columns: list[Column] | None
    cached_table_name: str | None
    materialized: bool | None
    materialize_reason: str | None
    warnings: list[str]
    checks: list[Check] | None
    duration_ms: int | float | None
    summary: str | None


class LedgerStep(StepExtras):
    """A query step's ledger line as written and read back: every field of
    :data:`STEP_FIELDS` is present (null when unknown; ``warnings`` always a list)."""

    step_id: str
    conversation_id: str | None
    at: str | None
    tool: str
    project: str | None
    purpose: str | None
    result_label: str | None
    sql: str | None
    row_count: int | None
    columns: list[Column] | None
    cached_table_name: str | None
    materialized: bool | None
    materialize_reason: str | None
    warnings: list[str]
    checks: list[Check] | None
    duration_ms: int | float | None
    summary: str | None


class StepChanges(TypedDict, total=False):
    """The fields :meth:`Ledger.update` may change: a summary line's outcome or a
    ``patch_step`` correction."""

    summary: str | None
    summary_status: str
    summary_raw: str
    summary_unmatched: list[str] | None
    purpose: str


class UnattributedLine(TypedDict):
    """A ``[[QUERY_STEP]]`` line no step could be given (no ``step_id``: never a step)."""

    tool: str
    conversation_id: str
    at: str
    raw: str
    step_ref: str | None
    summary: str | None
    waiting_steps: list[str]
    why: str


class ReflectionFields(TypedDict):
    """A review before reporting, as :mod:`lantide.agent.reflection` records it."""

    subject: str
    turn: int
    project: str | None
    ok: bool
    checklist: list[ChecklistItem]
    problems: list[str]
    steps: list[str]
    evidence_counts: NotRequired[dict[str, int]]  # the evidence check of a Report
    unresolved_checks: NotRequired[list[UnresolvedCheck]]
    duration_ms: NotRequired[int]
    overridden_by_rule: NotRequired[dict[str, object]]
    raw: NotRequired[str]  # an answer that could not be read


class ReflectionLine(ReflectionFields):
    """A reflection's ledger line: the review and its id (r1, r2, ...), no ``step_id``."""

    reflection_id: str
    tool: str
    conversation_id: str
    at: str
