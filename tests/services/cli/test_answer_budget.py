"""R42_ANSWER_MAX_TOKENS through the real environment and the real `r42 ask`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from services.cli.main import build_app
from shared.llm import reset_llm
from tests.fakes.anthropic_server import FakeAnthropic, text_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY
from tests.services.r42.conftest import seeded_sqlite


@pytest.fixture
def url(tmp_path: Path) -> str:
    return seeded_sqlite(tmp_path / "cli.db")


def ask(url: str, fake: FakeAnthropic, budget: str | None) -> Result:
    env = {"R42_LLM": "anthropic", "ANTHROPIC_BASE_URL": fake.url, "R42_LIMITER": "off",
           "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY, "R42_STORE": url}  # fmt: skip
    if budget is not None:
        env["R42_ANSWER_MAX_TOKENS"] = budget
    try:
        return CliRunner().invoke(build_app(), ["ask", "Hoe vraag ik verlof aan?"], env=env)
    finally:
        reset_llm()


def test_the_environment_sets_the_answer_budget(url: str, fake_anthropic: FakeAnthropic) -> None:
    """(The 2,048 default is asserted on every turn of tests/services/r42/test_relevance.py.)"""
    fake_anthropic.enqueue(text_reply("Via het HR-portaal (Verlof)."))
    result = ask(url, fake_anthropic, "3000")
    assert result.exit_code == 0, result.output
    assert [r.body["max_tokens"] for r in fake_anthropic.requests] == [3000]


@pytest.mark.parametrize(
    ("budget", "why"),
    [("0", "greater than or equal to 1"), ("-5", "greater than or equal to 1"),
     ("many", "valid integer"), ("2.5", "valid integer"),
     ("100000", "more than claude-haiku-4-5 can answer in one request (64000 tokens)")],
)  # fmt: skip
def test_a_bad_answer_budget_is_one_clear_line_and_no_request(
    url: str, fake_anthropic: FakeAnthropic, budget: str, why: str
) -> None:
    result = ask(url, fake_anthropic, budget)
    assert result.exit_code == 2, result.output
    assert "invalid settings" in result.output and "answer_max_tokens" in result.output
    assert why in result.output and "Traceback" not in result.output
    assert fake_anthropic.requests == []
