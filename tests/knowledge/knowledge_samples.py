"""Knowledge files the tests share: hand-written ones and ones of an exact size."""

from __future__ import annotations

HAND_WRITTEN = """\
# Knowledge for the churn project
<!-- kept by Ana; ask before changing -->

Some intro prose the analyst wrote.

## Rules:
- Revenue means net revenue: gross minus refunds.
* [Queued] The fiscal year starts on 1 April.
+ Exclude test accounts
  (customers.is_test_account = true) from every count.
  - also internal staff accounts

### Dates
1. Weeks start on Monday.
2) Use the order date, not the ship date. <!-- from the 2025 audit -->

## Notes
- not knowledge, just a todo list

## info
- orders.region holds ISO 3166-2 codes.

- loose item after a blank line
"""


def sized_knowledge(
    size: int, *, title: str = "# Project knowledge\n", entry_len: int = 80, prefix: str = "Fact"
) -> str:
    """A knowledge file of exactly ``size`` characters, all entries Enabled, no headings."""
    head = f"{title}\n## Rules\n"
    lines = []
    used = len(head)
    i = 0
    while used + entry_len + 40 < size:
        body = f"{prefix} {i}: " + "x" * (entry_len - len(f"{prefix} {i}: ") - 3)
        lines.append(f"- {body}\n")
        used += len(lines[-1])
        i += 1
    pad = size - used - len("- \n")
    assert pad > 10, "size too small for this helper"
    last = f"{prefix} {i} last: "
    lines.append("- " + last + "y" * (pad - len(last)) + "\n")
    text = head + "".join(lines)
    assert len(text) == size
    return text
