"""The Slack manifest matches what the app listens to; the CLI refuses bad options cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import typer
import yaml
from typer.testing import CliRunner

from services.cli import gateway as cli
from services.gateway.slack.flows.assistant import PROMPTS
from services.gateway.slack.http import EVENTS_PATH
from services.registry import resolve_console
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import Gateway

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "deploy" / "slack" / "manifest.yaml"
HTTP_MANIFEST = ROOT / "deploy" / "slack" / "manifest-http.yaml"
SCHEMA = ROOT / "tests" / "data" / "slack_manifest_schema" / "manifest.schema.1.0.0.json"
"""Slack's app manifest schema (slackapi/manifest-schema, MIT; LICENSE next to it)."""


def test_manifest_covers_the_app() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert scopes == {
        "app_mentions:read",
        "assistant:write",
        "channels:history",
        "chat:write",
        "commands",
        "groups:history",
        "im:history",
        "im:write",
        "mpim:history",
        "files:read",
        "files:write",
        "users:read",
    }  # im:read is not used (conversations.open needs im:write); *:history: thread context
    settings = manifest["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "message.im",
        "message.mpim",
        "app_home_opened",
        "file_shared",
    }
    assert settings["interactivity"]["is_enabled"] and settings["socket_mode_enabled"]
    assert manifest["features"]["app_home"]["home_tab_enabled"]
    assert manifest["features"]["app_home"]["messages_tab_enabled"]
    assistant = manifest["features"]["assistant_view"]
    assert [p["message"] for p in assistant["suggested_prompts"]] == [p["message"] for p in PROMPTS]


def test_http_manifest_is_the_socket_one_with_request_urls() -> None:
    socket = yaml.safe_load(MANIFEST.read_text())
    http = yaml.safe_load(HTTP_MANIFEST.read_text())
    url = "https://r42.example.com" + EVENTS_PATH
    assert http["settings"]["event_subscriptions"]["request_url"] == url
    assert http["settings"]["interactivity"]["request_url"] == url
    assert {c["url"] for c in http["features"]["slash_commands"]} == {url}
    assert http["settings"]["socket_mode_enabled"] is False
    del http["settings"]["event_subscriptions"]["request_url"]
    del http["settings"]["interactivity"]["request_url"]
    for command in http["features"]["slash_commands"]:
        del command["url"]
    http["settings"]["socket_mode_enabled"] = True
    assert http == socket  # nothing else may drift between the two


@pytest.mark.parametrize("path", [MANIFEST, HTTP_MANIFEST], ids=["socket", "http"])
def test_manifest_passes_slacks_schema(path: Path) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(yaml.safe_load(path.read_text())))
    assert errors == [], [e.message for e in errors]


def test_the_schema_refuses_a_broken_manifest() -> None:
    schema = json.loads(SCHEMA.read_text())
    manifest = yaml.safe_load(MANIFEST.read_text())
    manifest["features"]["assistant_view"] = {"suggested_prompts": [{"title": "x"}]}
    manifest["settings"]["colour"] = "red"
    messages = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(manifest)]
    assert any("assistant_description" in m for m in messages), messages
    assert any("colour" in m for m in messages), messages


async def test_every_declared_command_is_handled(gateway: Gateway, fake_slack: FakeSlack) -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    declared = [c["command"] for c in manifest["features"]["slash_commands"]]
    assert declared == ["/learn", "/quiz", "/leaderboard", "/r42"]
    for command in declared:
        status, _ = await gateway.command(command, "help")
        assert status == 200, command
    assert (await gateway.command("/undeclared"))[0] == 404  # Bolt: no listener
    await gateway.settle()


def test_console_entry_point_resolves() -> None:
    run = resolve_console()
    assert run is not None and run.__module__ == "services.gateway.console.session"


def test_cli_rejects_bad_options(monkeypatch) -> None:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """r42."""

    cli.register(app)
    runner = CliRunner()
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    result = runner.invoke(app, ["gateway", "--http"])
    assert result.exit_code == 2 and "SLACK_SIGNING_SECRET" in result.output
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")
    result = runner.invoke(app, ["gateway", "--http", "--port", "70000"])
    assert result.exit_code == 2 and "out of range" in result.output
    assert "xoxb-test" not in result.output and "secret" not in result.output.lower().replace(
        "signing_secret", ""
    )
