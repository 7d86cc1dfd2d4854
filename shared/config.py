"""Settings for every R42 process, built once at start-up from the environment."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# scheme://user:pass@ (or a comma-separated list of such URLs/hosts): every user-info part.
_USERINFO_RE = re.compile(r"(?<=[/,])[^/@,\s]+@")


def redact_url(url: str) -> str:
    """The URL with user info masked (credentials never reach logs or errors); multi-host safe."""
    return _USERINFO_RE.sub("***@", url)


DEFAULT_MODEL_FAST = "claude-haiku-4-5"
DEFAULT_MODEL_STANDARD = "claude-sonnet-4-6"
DEFAULT_MODEL_REASONING = "claude-opus-4-6"


class Settings(BaseSettings):
    """All configuration; secrets are SecretStr so they never print."""

    model_config = SettingsConfigDict(env_prefix="R42_", extra="ignore", populate_by_name=True)

    data_dir: Path = Field(default=Path(".r42"))
    store: str | None = Field(default=None, description="sqlite:///path or mongodb://…")
    nats_url: str | None = Field(
        default=None, validation_alias=AliasChoices("NATS_URL", "R42_NATS_URL")
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
    # Slack user ids and Teams AAD object ids; NoDecode: "U1,<guid>" is not JSON
    admins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    admin_channel: str | None = None

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

    @field_validator("admins", mode="before")
    @classmethod
    def _split_admins(cls, value: object) -> object:
        # Env values arrive as "U1,U2"; JSON lists are accepted too.
        if isinstance(value, str) and value.strip().startswith("["):
            return json.loads(value)
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

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


def build_settings(**overrides: object) -> Settings:
    """Build settings from the environment (plus explicit overrides) at start-up."""
    return Settings(**overrides)  # type: ignore[arg-type]
