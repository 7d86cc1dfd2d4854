"""The Slack manifest matches what the app listens to; the CLI refuses bad options cleanly."""

from __future__ import annotations

from pathlib import Path

import typer
import yaml
from typer.testing import CliRunner

from services.cli import gateway as cli
from services.registry import resolve_console
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import Gateway

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack" / "manifest.yaml"


def test_manifest_covers_the_app() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert scopes == {
        "app_mentions:read",
        "chat:write",
        "commands",
        "im:history",
        "im:read",
        "im:write",
        "files:read",
        "files:write",
        "users:read",
    }
    settings = manifest["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "message.im",
        "app_home_opened",
        "file_shared",
    }
    assert settings["interactivity"]["is_enabled"] and settings["socket_mode_enabled"]
    assert manifest["features"]["app_home"]["home_tab_enabled"]
    assert manifest["features"]["app_home"]["messages_tab_enabled"]


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
