"""*Test connection* in the settings: which models the endpoint lists, and the context
window Lantide will use for the profile. Runs in a worker.

The agent layer's :class:`~lantide.agent.model_client.OpenAIModelClient` does the talking
(its SDK set-up, error wording and key masking) and
:func:`~lantide.agent.context_window.resolve_context_window` decides the window; this
module only asks them, for a profile as typed in the dialog (not saved yet).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lantide.errors import LantideError


@dataclass
class ConnectionReport:
    ok: bool
    models: list[str] = field(default_factory=list)
    model_listed: bool = False  # the profile's model is among them
    context_window: int | None = None
    context_source: str | None = None  # profile / learned / endpoint / known / default
    message: str = ""
    hint: str | None = None


def check_connection(
    context,
    name: str,
    base_url: str,
    model: str,
    api_key: str | None,
    context_window: int | None,
    agent_settings,
) -> ConnectionReport:
    from lantide.agent.context_window import resolve_context_window, window_from_model_card
    from lantide.agent.model_client import OpenAIModelClient
    from lantide.workspace.settings import ResolvedProfile

    profile = ResolvedProfile(
        name=name or "test",
        base_url=base_url.strip(),
        model=model.strip(),
        api_key=api_key or None,
        context_window=context_window or None,
    )
    client = OpenAIModelClient(profile, agent_settings)
    try:
        cards = client.list_models()
    except LantideError as exc:
        return ConnectionReport(False, message=exc.message, hint=exc.hint)
    except Exception as exc:  # an SDK or network error the client did not word
        text = str(exc)
        if api_key:
            text = text.replace(api_key, "***")
        return ConnectionReport(
            False,
            message=f"{base_url}: {text}",
            hint="Check the base URL, the key and that the server runs.",
        )
    ids = sorted({str(c.get("id")) for c in cards if c.get("id")})
    card = next((c for c in cards if c.get("id") == profile.model), None)
    if card is not None and window_from_model_card(card) is None:
        card = None
    window = resolve_context_window(profile, card)
    listed = profile.model in ids
    message = f"Connected: {len(ids)} model{'s' if len(ids) != 1 else ''} available."
    hint = None
    if profile.model and not listed and ids:
        hint = f"The endpoint does not list {profile.model!r}; pick one of its models."
    return ConnectionReport(True, ids, listed, window.tokens, window.source, message, hint)
