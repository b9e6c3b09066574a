"""User settings in the platform's user config directory.

``settings.json`` holds model profiles (primary and secondary), recent workspaces, query
limits, agent limits, appearance and the update check (feed URL, weekly). It never holds an
API key: keys live in the system keyring (:mod:`lantide.workspace.secrets`) or the
environment. ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``LANTIDE_MODEL`` override the
active profile.

"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from lantide.errors import LantideError
from lantide.workspace import paths, secrets
from lantide.workspace.atomic import atomic_write_json
from lantide.workspace.filelock import file_lock
from lantide.workspace.jsonfile import read_json_object

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Section = TypeVar("_Section", bound="DataclassInstance")

MAX_RECENT = 10
_SECRET_KEYS = {"api_key", "apikey", "key", "password", "token", "secret"}


class SettingsError(LantideError):
    code = "SETTINGS"


@dataclass
class ModelProfile:
    name: str
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    context_window: int | None = None  # None until discovered or set by the user

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelProfile:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def problem(self) -> str | None:
        """Why this profile cannot be used as it stands (a message naming it), or None."""
        if not self.name.strip():
            return "A profile needs a name."
        if not self.base_url.strip().startswith(("http://", "https://")):
            return f"Profile {self.name!r}: the base URL must start with http:// or https://."
        if not self.model.strip():
            return f"Profile {self.name!r}: enter a model name."
        return None


@dataclass
class QuerySettings:
    timeout_seconds: float = 300.0
    memory_limit: str = "75%"  # DuckDB accepts a size ("4GB") or a share of RAM
    threads: int = 0  # 0: DuckDB's default (all cores)
    preview_rows: int = 200
    large_remote_rows: int = 1_000_000
    source_run_workers: int = 0  # tabs a Source Run runs at once; 0: automatic (cores + 1, <= 4)
    row_count_drift_factor: float = 2.0  # ROW_COUNT_DRIFT: a re-run's row count this far apart
    max_workbook_mb: int = 1024  # a workbook inflating past this is not read (zip bombs)
    max_sheet_cells: int = 10_000_000  # a sheet spanning more cells is not read
    max_json_object_mb: int = 16  # a JSON file whose first objects are larger is not read


@dataclass
class AgentSettings:
    max_iterations: int = 12
    # at the iteration limit, go on for up to this many more rounds of max_iterations
    # instead of asking the analyst to type "continue" (0: off)
    auto_continue_rounds: int = 0
    max_tool_retries: int = 3
    request_timeout_seconds: float = 120.0
    max_retries: int = 4
    # ask the server to report token usage with each streamed answer (OpenAI's
    # stream_options.include_usage); off by default, as some local servers refuse it.
    # `lantide eval` turns it on to measure tokens outside the server's prefix cache.
    stream_usage: bool = False
    token_budget: int = 0  # tokens one conversation may use; 0: no limit (warns at 80%)

    def __post_init__(self) -> None:
        # a hand-edited settings file may say "200k" or -5: no budget rather than a crash
        try:
            self.token_budget = max(0, int(self.token_budget or 0))
        except (TypeError, ValueError):
            self.token_budget = 0


@dataclass
class UpdateSettings:
    feed_url: str = ""  # empty: the feed the build was made with, if any (lantide.update.check)
    check_weekly: bool = True  # once a week on start, when a feed URL is known

    def __post_init__(self) -> None:  # a hand-edited file may say "no" or 3
        self.feed_url = self.feed_url.strip() if isinstance(self.feed_url, str) else ""
        weekly: object = self.check_weekly  # typed bool, but read from a file
        if not isinstance(weekly, bool):
            self.check_weekly = True


@dataclass
class Settings:
    profiles: list[ModelProfile] = field(default_factory=list)
    primary_profile: str | None = None
    secondary_profile: str | None = None
    recent_workspaces: list[str] = field(default_factory=list)
    query: QuerySettings = field(default_factory=QuerySettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    appearance: str = "system"  # system / light / dark
    updates: UpdateSettings = field(default_factory=UpdateSettings)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept on save

    # -- profiles
    def profile(self, name: str | None) -> ModelProfile | None:
        for p in self.profiles:
            if p.name == name:
                return p
        return None

    def upsert_profile(self, profile: ModelProfile) -> None:
        self.profiles = [p for p in self.profiles if p.name != profile.name] + [profile]
        if self.primary_profile is None:
            self.primary_profile = profile.name

    def remove_profile(self, name: str) -> None:
        self.profiles = [p for p in self.profiles if p.name != name]
        if self.primary_profile == name:
            self.primary_profile = self.profiles[0].name if self.profiles else None
        if self.secondary_profile == name:
            self.secondary_profile = None

    def add_recent_workspace(self, root: Path | str) -> None:
        root = str(Path(root).resolve())
        self.recent_workspaces = [root] + [r for r in self.recent_workspaces if r != root]
        del self.recent_workspaces[MAX_RECENT:]

    # -- serialisation
    def to_dict(self) -> dict[str, Any]:
        data = dict(self.extra)
        data.update(
            {
                "version": 1,
                "profiles": [asdict(p) for p in self.profiles],
                "primary_profile": self.primary_profile,
                "secondary_profile": self.secondary_profile,
                "recent_workspaces": self.recent_workspaces,
                "query": asdict(self.query),
                "agent": asdict(self.agent),
                "appearance": self.appearance,
                "updates": asdict(self.updates),
            }
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: Path | None = None) -> Settings:
        def sub(klass: type[_Section], value: object) -> _Section:
            if not isinstance(value, dict):
                return klass()
            known = {f.name for f in fields(klass)}
            return klass(**{k: v for k, v in value.items() if k in known})

        profiles = []
        for raw in data.get("profiles", []) or []:
            if isinstance(raw, dict) and raw.get("name"):
                profiles.append(ModelProfile.from_dict(raw))
        known_keys = {
            "version",
            "profiles",
            "primary_profile",
            "secondary_profile",
            "recent_workspaces",
            "query",
            "agent",
            "appearance",
            "updates",
        }
        return cls(
            profiles=profiles,
            primary_profile=data.get("primary_profile"),
            secondary_profile=data.get("secondary_profile"),
            recent_workspaces=[str(r) for r in data.get("recent_workspaces", []) or []],
            query=sub(QuerySettings, data.get("query")),
            agent=sub(AgentSettings, data.get("agent")),
            appearance=data.get("appearance", "system"),
            updates=sub(UpdateSettings, data.get("updates")),
            extra={k: v for k, v in data.items() if k not in known_keys},
        )


def user_query_settings() -> QuerySettings:
    """The query settings of the user's settings file; the defaults when it cannot be read
    (a query needs no model profile, so a broken file does not stop it)."""
    try:
        return load_settings().query
    except LantideError:
        return QuerySettings()


def load_settings(path: Path | None = None) -> Settings:
    """Settings from disk; defaults when the file does not exist yet.

    A broken settings file raises (naming it) instead of being replaced by defaults.
    """
    path = path or paths.settings_path()
    if not path.exists():
        return Settings()
    return Settings.from_dict(read_json_object(path, "settings file"), path)


def load_settings_or_defaults(path: Path | None = None) -> tuple[Settings, LantideError | None]:
    """For the desktop app, which must open even so: the settings, or the defaults and
    the error when the file is broken (the file is kept; :func:`save_settings` will not
    replace it)."""
    try:
        return load_settings(path), None
    except LantideError as exc:
        return Settings(), exc


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write the settings atomically. A settings file that cannot be read is never
    replaced: the analyst's hand edits would be lost with it."""
    path = path or paths.settings_path()
    data = settings.to_dict()
    _assert_no_secrets(data)
    if path.exists():
        try:
            read_json_object(path, "settings file")
        except LantideError as exc:
            raise SettingsError(
                f"{exc.message}; it is not overwritten, so this change was not saved",
                hint="Fix the file in a text editor or move it aside, then change the "
                "setting again.",
            ) from None
    atomic_write_json(path, data)


def update_settings(change: Callable[[Settings], None], path: Path | None = None) -> Settings:
    """Apply ``change`` to the settings as they are on disk now, under the file's lock, and
    save them. Use this rather than saving a copy loaded earlier: the app keeps its copy
    for hours, and `lantide chat` or a text editor may have changed the file since."""
    path = path or paths.settings_path()
    with file_lock(path):
        try:
            settings = load_settings(path)
        except LantideError as exc:  # a broken file is never replaced
            raise SettingsError(
                f"{exc.message}; it is not overwritten, so this change was not saved",
                hint="Fix the file in a text editor or move it aside, then change the "
                "setting again.",
            ) from None
        change(settings)
        save_settings(settings, path)
    return settings


EDITED_IN_THE_APP = (
    "profiles",
    "primary_profile",
    "secondary_profile",
    "query",
    "agent",
    "appearance",
    "updates",
)


def save_edited_settings(edited: Settings, path: Path | None = None) -> Settings:
    """Save what the analyst edits in the app (profiles, query and agent options, the
    look) onto the file as it is now: the recent workspaces and what other processes
    learned meanwhile (context windows, keys of newer versions) are kept, not reverted
    to the app's start-up copy."""

    def change(fresh: Settings) -> None:
        for name in EDITED_IN_THE_APP:
            setattr(fresh, name, copy.deepcopy(getattr(edited, name)))

    fresh = update_settings(change, path)
    edited.recent_workspaces, edited.extra = list(fresh.recent_workspaces), dict(fresh.extra)
    return edited


def _assert_no_secrets(obj: Any, where: str = "settings") -> None:
    """Refuse to write anything that looks like a key; keys belong in the keyring."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if str(k).lower() in _SECRET_KEYS and v:
                raise SettingsError(
                    f"refusing to write a secret ({where}.{k}) to the settings file",
                    hint="Store API keys with the keyring (Settings > Models).",
                )
            _assert_no_secrets(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _assert_no_secrets(v, f"{where}[{i}]")


class PublicProfile(TypedDict):
    """:meth:`ResolvedProfile.public_dict`: the endpoint without its key."""

    name: str
    base_url: str
    model: str
    context_window: int | None
    has_api_key: bool
    overridden: list[str]  # what environment variables replaced


@dataclass
class ResolvedProfile:
    """The model endpoint a call will use, after environment overrides."""

    name: str
    base_url: str
    model: str
    api_key: str | None
    context_window: int | None
    overridden: tuple[str, ...] = ()

    def __repr__(self) -> str:  # never show the key in logs or tracebacks
        return (
            f"ResolvedProfile(name={self.name!r}, base_url={self.base_url!r}, "
            f"model={self.model!r}, api_key={'***' if self.api_key else None}, "
            f"context_window={self.context_window!r})"
        )

    def public_dict(self) -> PublicProfile:
        return {
            "name": self.name,
            "base_url": self.base_url,
            "model": self.model,
            "context_window": self.context_window,
            "has_api_key": bool(self.api_key),
            "overridden": list(self.overridden),
        }


def resolve_profile(settings: Settings, role: str = "primary") -> ResolvedProfile | None:
    """The primary or secondary profile; None when nothing is configured.

    The environment overrides the active (primary) profile. A secondary profile the
    analyst set up explicitly is used as configured, so background calls keep going to
    the cheap model even while the environment points the main model elsewhere; without
    one, the secondary role is the (overridden) primary.
    """
    if role == "secondary":
        secondary = settings.profile(settings.secondary_profile)
        if secondary is not None and secondary.name != settings.primary_profile:
            return ResolvedProfile(
                name=secondary.name,
                base_url=secondary.base_url,
                model=secondary.model,
                api_key=secrets.get_api_key(secondary.name),
                context_window=secondary.context_window,
            )
    profile = settings.profile(settings.primary_profile)
    env_base = os.environ.get("OPENAI_BASE_URL")
    env_model = os.environ.get("LANTIDE_MODEL")
    env_key = secrets.env_api_key()
    if profile is None and not (env_base or env_model):
        return None
    base = profile or ModelProfile(name="environment")
    overridden = tuple(
        n
        for n, v in (
            ("OPENAI_BASE_URL", env_base),
            ("LANTIDE_MODEL", env_model),
            ("OPENAI_API_KEY", env_key),
        )
        if v
    )
    key = env_key or (secrets.get_api_key(base.name) if profile else None)
    return ResolvedProfile(
        name=base.name,
        base_url=env_base or base.base_url,
        model=env_model or base.model,
        api_key=key,
        context_window=base.context_window if not env_model or env_model == base.model else None,
        overridden=overridden,
    )
