"""Rendering the prompt files in ``prompts/`` (Jinja2, ``StrictUndefined``).

A missing variable is an error, not an empty string, so a template and its caller cannot
drift apart silently. Runs of blank lines left by conditional blocks collapse to one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from lantide.errors import LantideError
from lantide.package_data import prompts_dir

if TYPE_CHECKING:
    import jinja2

_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")


class PromptTemplateError(LantideError):
    code = "PROMPT_TEMPLATE"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(prompts_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=True,
    )


def collapse_blank_lines(text: str) -> str:
    return _BLANK_RUNS.sub("\n\n", text).strip() + "\n"


def render_prompt(name: str, **context: Any) -> str:
    """Render ``prompts/<name>`` (e.g. ``core.md.j2``) with ``context``."""
    import jinja2

    try:
        template = _environment().get_template(name)
        return collapse_blank_lines(template.render(**context))
    except jinja2.UndefinedError as exc:
        raise PromptTemplateError(f"prompt template {name}: {exc.message}") from None
    except jinja2.TemplateNotFound:
        raise PromptTemplateError(f"prompt template {name} not found in {prompts_dir()}") from None


def list_templates() -> list[str]:
    return sorted(p.relative_to(prompts_dir()).as_posix() for p in prompts_dir().rglob("*.md.j2"))
