"""Settings for every R42 process, built once at start-up from the environment."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

# scheme://user:pass@ (or a comma-separated list of such URLs/hosts): every user-info part.
_USERINFO_RE = re.compile(r"(?<=[/,])[^/@,\s]+@")


# A Slack user id (U…/W…) or a Teams AAD object id (a GUID); no spaces, quotes or separators.
_ADMIN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")
_STORE_SCHEMES = ("sqlite:///", "mongodb://", "mongodb+srv://")
# "error parsing value for field "limits" from source "EnvSettingsSource"".
_SETTINGS_FIELD_RE = re.compile(r'field "([^"]+)"')


def redact_url(url: str) -> str:
    """The URL with user info masked (credentials never reach logs or errors); multi-host safe."""
    return _USERINFO_RE.sub("***@", url)


def nats_servers(url: str) -> list[str]:
    """A NATS_URL's servers: one URL, or a comma-separated list (a cluster's nodes)."""
    return [part.strip() for part in url.split(",") if part.strip()]


DEFAULT_MODEL_FAST = "claude-haiku-4-5"
DEFAULT_MODEL_STANDARD = "claude-sonnet-4-6"
DEFAULT_MODEL_REASONING = "claude-opus-4-6"
DEFAULT_ANSWER_MAX_TOKENS = 2048

# (model-id pattern, the most output tokens one request may ask for); first match wins.
# From Anthropic's model overview pages (2026-12); an unknown model gets the smallest.
_MAX_OUTPUT_TOKENS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"opus-4-[6-9]|sonnet-4-[6-9]"), 128_000),
    (re.compile(r"haiku-4|sonnet-4|opus-4-5"), 64_000),
    (re.compile(r"opus-4"), 32_000),
)
DEFAULT_MAX_OUTPUT_TOKENS = 32_000


def max_output_tokens(model: str) -> int:
    """The largest max_tokens this model accepts."""
    lowered = model.lower()
    for pattern, limit in _MAX_OUTPUT_TOKENS:
        if pattern.search(lowered):
            return limit
    return DEFAULT_MAX_OUTPUT_TOKENS


class Settings(BaseSettings):
    """All configuration; secrets are SecretStr so they never print."""

    model_config = SettingsConfigDict(env_prefix="R42_", extra="ignore", populate_by_name=True)

    data_dir: Path = Field(default=Path(".r42"))
    fork_server: bool = Field(
        default=True,
        description="`r42 up` forks services from one pre-imported process (Linux); false: "
        "each starts as its own Python",
    )
    store: str | None = Field(default=None, description="sqlite:///path or mongodb://…")
    nats_url: str | None = Field(
        default=None, validation_alias=AliasChoices("NATS_URL", "R42_NATS_URL")
    )
    nats_replicas: int = Field(
        default=1, ge=1, le=5, description="Replicas of streams and buckets (3 on a cluster)"
    )
    log_level: str = "INFO"

    # LLM
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY", "R42_ANTHROPIC_API_KEY")
    )
    anthropic_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_BASE_URL", "R42_ANTHROPIC_BASE_URL")
    )
    llm: Literal["auto", "anthropic", "offline"] = "auto"
    model_fast: str = DEFAULT_MODEL_FAST
    model_standard: str = DEFAULT_MODEL_STANDARD
    model_reasoning: str = DEFAULT_MODEL_REASONING
    llm_timeout_s: float = 60.0
    limiter: Literal["nats", "local", "off"] = "nats"
    limits: dict[str, Any] = Field(
        default_factory=dict, description="LimiterConfig overrides as JSON (R42_LIMITS)"
    )
    limiter_bucket: str = "r42_limits"

    # Slack
    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "R42_SLACK_BOT_TOKEN")
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "R42_SLACK_APP_TOKEN")
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "R42_SLACK_SIGNING_SECRET"),
    )
    slack_api_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_API_BASE_URL", "R42_SLACK_API_BASE_URL")
    )
    # Microsoft Teams (Bot Framework app registration); without an app id the endpoint is anonymous
    teams_app_id: str | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_APP_ID", "R42_TEAMS_APP_ID")
    )
    teams_app_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_APP_PASSWORD", "R42_TEAMS_APP_PASSWORD")
    )
    teams_tenant_id: str | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_TENANT_ID", "R42_TEAMS_TENANT_ID")
    )
    # NoDecode: pydantic-settings would parse the env value as JSON before the validator runs,
    # so the documented `R42_ADMINS=U1,U2` would fail; the validator takes both forms.
    admins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    admin_channel: str | None = None

    # R42: the most tokens one chat answer may take (R42_ANSWER_MAX_TOKENS), ≤ the fast model's max.
    answer_max_tokens: int = Field(default=DEFAULT_ANSWER_MAX_TOKENS, ge=1)

    # Sources
    max_upload_bytes: int = 5 * 1024 * 1024
    github_api_url: str = Field(
        default="https://api.github.com",
        validation_alias=AliasChoices("GITHUB_API_URL", "R42_GITHUB_API_URL"),
    )
    github_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GITHUB_TOKEN", "R42_GITHUB_TOKEN")
    )
    handbook_owner: str | None = None
    handbook_repo: str | None = None
    handbook_path: str = ""
    handbook_branch: str = "main"

    # NATS credentials of this process (the runtime hands each service its own nkey user).
    nats_nkey_seed: Path | None = Field(
        default=None, validation_alias=AliasChoices("NATS_NKEY_SEED", "R42_NATS_NKEY_SEED")
    )
    nats_inbox_prefix: str | None = Field(default=None, pattern=r"^_INBOX[A-Za-z0-9_-]*$")

    @field_validator("admins", mode="before")
    @classmethod
    def _split_admins(cls, value: object) -> object:
        # Env values arrive as "U1,U2" or as a JSON list.
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    value = json.loads(text)
                except ValueError:
                    raise ValueError('not a valid JSON list; use U1,U2 or ["U1","U2"]') from None
            else:
                return [v.strip() for v in text.split(",") if v.strip()]
        return value

    @field_validator("admins")
    @classmethod
    def _check_admins(cls, value: list[str]) -> list[str]:
        for admin in value:
            if not _ADMIN_ID_RE.fullmatch(admin):
                raise ValueError(f"{admin[:40]!r} is not a Slack user id or Teams AAD object id")
        return value

    @field_validator("store")
    @classmethod
    def _check_store(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(_STORE_SCHEMES):
            scheme = value.partition("://")[0][:20] or value[:10]
            raise ValueError(
                f"unsupported store {scheme!r}: use sqlite:///path or mongodb://host/db"
            )
        return value

    @model_validator(mode="after")
    def _check_answer_budget(self) -> Settings:
        limit = max_output_tokens(self.model_fast)
        if self.answer_max_tokens > limit:
            raise ValueError(
                f"answer_max_tokens: {self.answer_max_tokens} is more than {self.model_fast} "
                f"can answer in one request ({limit} tokens)"
            )
        return self

    @property
    def store_url(self) -> str:
        """The store URL, defaulting to a SQLite file in the data dir."""
        return self.store or f"sqlite:///{(self.data_dir / 'r42.db').resolve()}"

    @property
    def llm_provider(self) -> Literal["anthropic", "offline"]:
        """Which LLM backend calls go to."""
        if self.llm == "offline":
            return "offline"
        if self.llm == "anthropic" or self.anthropic_api_key is not None:
            return "anthropic"
        return "offline"

    def model_for_tier(self, tier: str) -> str:
        """The model id configured for a tier (fast | standard | reasoning)."""
        models = {
            "fast": self.model_fast,
            "standard": self.model_standard,
            "reasoning": self.model_reasoning,
        }
        if tier not in models:
            from shared.errors import ConfigError

            raise ConfigError(f"unknown tier {tier!r}; expected one of {sorted(models)}")
        return models[tier]


def describe_settings_error(exc: ValidationError) -> str:
    """One line naming each bad setting and why, never its value (it may be a secret)."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in err["loc"]) or "settings"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def build_settings(**overrides: object) -> Settings:
    """Build settings from the environment (plus explicit overrides) at start-up.

    Every problem surfaces as a pydantic ValidationError (also a value pydantic-settings
    cannot decode), so each entry point reports it the same way, in one line.
    """
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except SettingsError as exc:
        match = _SETTINGS_FIELD_RE.search(str(exc))
        field = match.group(1) if match else "settings"
        detail: InitErrorDetails = {
            "type": PydanticCustomError(
                "settings_decode", "cannot parse the environment value (expected JSON)"
            ),
            "loc": (field,),
            "input": None,
        }
        raise ValidationError.from_exception_data("Settings", [detail]) from None
