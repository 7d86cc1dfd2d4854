"""`r42 up` runs the Teams gateway beside Slack's when TEAMS_APP_ID is set."""

from __future__ import annotations

import pytest

from services.cli.up import with_teams
from services.registry import available_services
from shared.config import build_settings


def test_up_adds_the_teams_gateway_only_with_an_app_id(monkeypatch: pytest.MonkeyPatch) -> None:
    services = available_services()
    monkeypatch.delenv("TEAMS_APP_ID", raising=False)
    assert with_teams(services, build_settings()) == services
    monkeypatch.setenv("TEAMS_APP_ID", "3f1c2b4a-9d8e-4f7a-b6c5-1e2d3c4b5a69")
    both = with_teams(services, build_settings())
    teams = [s for s in both if s.name == "gateway-teams"]
    assert [(s.module, s.args) for s in teams] == [("services.gateway", ("--teams",))]
    assert any(s.name == "gateway" for s in both)  # Slack's gateway keeps running
    assert with_teams(both, build_settings()) == both
