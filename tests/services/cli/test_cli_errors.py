"""Failing commands through the real entry point: one readable line, never a dump or a repr."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, error_reply, tool_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

R42 = [sys.executable, "-c", "from services.cli.main import main; main()"]
# What must never reach a user: telemetry dicts, pydantic's error lists and reprs, tracebacks.
DUMPS = re.compile(
    r"\{'|'ctx'|ctx:|ValueError\(|\[\{|Traceback|input_value=|pydantic\.dev|llm call \{"
)


def r42(*args: str, fake: FakeAnthropic) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "R42_LLM": "anthropic",
           "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY, "ANTHROPIC_BASE_URL": fake.url,
           "R42_LIMITER": "off"}  # fmt: skip
    return subprocess.run([*R42, *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def fake() -> FakeAnthropic:
    with FakeAnthropic() as server:
        yield server


def test_an_ingest_the_model_gets_wrong_fails_in_one_readable_line(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    doc = tmp_path / "verlof.md"
    doc.write_text("# Verlof\n\nVerlof vraag je twee weken vooraf aan in het HR-portaal.\n")
    bad = {"topics": [{"id": "Verlof Aanvragen!", "label": "", "type": "thing"}], "relations": 3}
    fake.default = lambda _body: tool_reply("emit_knowledge_graph", bad)
    result = r42("ingest", str(doc), fake=fake)
    assert result.returncode == 1, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert not DUMPS.search(output), output
    failed = [line for line in output.splitlines() if line.startswith("verlof.md: failed")]
    assert len(failed) == 1, output
    assert "does not match KnowledgeGraph" in failed[0] and "topics.0" in failed[0]


def test_a_chat_turn_that_fails_says_so_without_dumps(fake: FakeAnthropic) -> None:
    fake.default = lambda _body: error_reply(400, "invalid_request_error", "max_tokens: too large")
    result = r42("ask", "Hoe vraag ik verlof aan?", fake=fake)
    assert result.returncode == 1
    assert "er ging iets mis" in result.stdout and "referentie" in result.stdout
    assert not DUMPS.search(result.stdout + result.stderr), result.stderr
    assert "caching" not in result.stderr  # a developer diagnostic, not the user's business
    assert len(result.stderr.strip().splitlines()) <= 1, result.stderr
    debug = r42("ask", "Hoe vraag ik verlof aan?", "--debug", fake=fake)
    assert "shared.llm.telemetry: llm call r42.chat" in debug.stderr  # --debug shows the logs
