"""Every rpc subject of the bus contracts is served by its owner and callable by the gateway."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import shared.bus
from shared.runtime.nats_auth import CLI_GRANTS, SERVICE_GRANTS


def rpc_subjects() -> list[str]:
    """The `rpc.…` subject constants of every shared.bus module."""
    found = set()
    for info in pkgutil.iter_modules(shared.bus.__path__):
        module = importlib.import_module(f"shared.bus.{info.name}")
        for name, value in vars(module).items():
            if name.endswith("_SUBJECT") and isinstance(value, str) and value.startswith("rpc."):
                found.add(value)
    return sorted(found)


def covered(subject: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        if pattern == subject or (pattern.endswith(".>") and subject.startswith(pattern[:-1])):
            return True
    return False


@pytest.mark.parametrize("subject", rpc_subjects())
def test_the_owner_serves_it_and_the_gateway_and_cli_may_call_it(subject: str) -> None:
    owner = subject.split(".")[1]
    assert covered(subject, SERVICE_GRANTS[owner].serves), f"{owner} may not serve {subject}"
    assert covered(subject, SERVICE_GRANTS["gateway"].calls), f"the gateway may not call {subject}"
    assert covered(subject, CLI_GRANTS.calls), f"the CLI may not call {subject}"


def test_the_contracts_are_found() -> None:
    assert {"rpc.r42.chat", "rpc.quiz.status", "rpc.quiz.leaderboard"} <= set(rpc_subjects())
