"""deploy/k8s/nats-values.yaml: only keys the NATS chart has; 3 nodes, JetStream, nkey users."""

from __future__ import annotations

import re
from typing import Any

import yaml

from shared.bus.asyncapi import FLOWS
from tests.deploy.conftest import DATA, DEPLOY

CHART_VALUES = DATA / "nats-chart-values-2.14.2.yaml"
"""The chart's own values.yaml (nats-io/k8s, chart nats 2.14.2): every settable key."""
FREE_FORM = {"merge", "env", "resources"}
"""Chart keys whose content is passed through (NATS config, container env, resources)."""
SERVICES = ("gateway", "extractor", "r42", "content", "quiz", "telemetry")


def _values() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "k8s" / "nats-values.yaml").read_text())


def _unknown_keys(ours: Any, chart: Any, path: str = "") -> list[str]:
    if not isinstance(ours, dict):
        return []
    if not isinstance(chart, dict):
        return [f"{path} (the chart has a scalar here)"]
    bad = []
    for key, value in ours.items():
        where = f"{path}.{key}" if path else key
        if key not in chart:
            bad.append(where)
        elif key not in FREE_FORM:
            bad.extend(_unknown_keys(value, chart[key], where))
    return bad


def test_every_key_exists_in_the_chart() -> None:
    chart = yaml.safe_load(CHART_VALUES.read_text())
    assert _unknown_keys(_values(), chart) == []
    assert _unknown_keys({"config": {"jetstrem": {}}}, chart) == ["config.jetstrem"]


def test_three_nodes_with_jetstream_on_disk() -> None:
    config = _values()["config"]
    assert config["cluster"] == {"enabled": True, "replicas": 3}
    assert config["jetstream"]["enabled"] is True
    assert config["jetstream"]["fileStore"]["pvc"]["size"].endswith("Gi")


def _users() -> dict[str, dict]:
    values = _values()
    env = values["container"]["env"]
    users = {}
    for user in values["config"]["merge"]["authorization"]["users"]:
        match = re.fullmatch(r"<< \$(R42_NKEY_[A-Z0-9]+) >>", user["nkey"])
        assert match, f"nkey must be a variable filled from the Secret, got {user['nkey']!r}"
        ref = env[match.group(1)]["valueFrom"]["secretKeyRef"]
        assert ref["name"] == "r42-nats-nkeys"
        users[ref["key"]] = user["permissions"]
    return users


def _allows(patterns: list[str], subject: str) -> bool:
    for pattern in patterns:
        p, s = pattern.split("."), subject.split(".")
        head = p[:-1] if p[-1] == ">" else p
        if p[-1] == ">" and len(s) < len(p):
            continue
        if p[-1] != ">" and len(s) != len(p):
            continue
        if all(a in ("*", b) for a, b in zip(head, s[: len(head)], strict=True)):
            return True
    return False


def test_one_nkey_user_per_service_allowed_its_flows() -> None:
    users = _users()
    assert set(users) == set(SERVICES)
    for model, (producers, consumers) in FLOWS.items():
        subject = model.SUBJECT
        for service in SERVICES:
            perms = users[service]
            if service in producers or "every service" in producers:
                if service != "telemetry":  # the sink itself makes no LLM calls
                    assert _allows(perms["publish"]["allow"], subject), (service, subject)
            if service in consumers or (service == "telemetry" and "telemetry sink" in consumers):
                assert _allows(perms["subscribe"]["allow"], subject), (service, subject)


def test_no_service_may_publish_what_it_does_not_produce() -> None:
    users = _users()
    assert not _allows(users["telemetry"]["publish"]["allow"], "kb.updated")
    assert not _allows(users["quiz"]["publish"]["allow"], "source.uploaded")
    assert not _allows(users["r42"]["publish"]["allow"], "kb.updated")  # one KG writer
    assert not _allows(users["gateway"]["publish"]["allow"], "kb.updated")
    for service, perms in users.items():
        assert ">" not in perms["publish"]["allow"], service
        assert _allows(perms["subscribe"]["allow"], "_INBOX.abc.def"), service
