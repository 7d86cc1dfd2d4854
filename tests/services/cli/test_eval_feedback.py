"""`r42 eval --from-feedback`: down-voted answers become chat eval cases that really run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner, Result

from evals.golden import read_yaml
from evals.suites.chat import ChatGolden, _same_answer
from services.cli.main import build_app
from shared.store import ChatTurn, FeedbackVote, Topic, open_store


def run(tmp_path: Path, *args: str) -> Result:
    env = {"R42_STORE": f"sqlite:///{tmp_path / 'r42.db'}", "R42_DATA_DIR": str(tmp_path),
           "R42_LLM": "offline", "ANTHROPIC_API_KEY": "", "COLUMNS": "200"}  # fmt: skip
    return CliRunner().invoke(build_app(), ["eval", *args], env=env)


def fill(tmp_path: Path) -> None:
    async def go() -> None:
        store = await open_store(f"sqlite:///{tmp_path / 'r42.db'}")
        try:
            await store.topics.upsert_many([
                Topic(id="verlof", label="Verlof", type="process",
                      description="Verlof vraag je aan in het HR-portaal, twee weken vooraf."),
            ])  # fmt: skip
            for tid, question, value in (("t1", "Hoe vraag ik verlof aan?", "down"),
                                         ("t2", "Wat is een sprint?", "up"),
                                         ("t3", "hoe vraag ik  verlof aan?", "down")):  # fmt: skip
                turn = ChatTurn(turn_id=tid, user="U1", question=question, answer="Geen idee.",
                                topic_ids=["verlof"], model="claude-haiku-4-5",
                                prompt_version="r42-chat-1")  # fmt: skip
                await store.turns.put(turn)
                await store.feedback.record(
                    FeedbackVote(
                        turn_id=tid,
                        user="U1",
                        value=value,
                        surface="slack",
                        reason="Klopt niet" if tid == "t1" else None,
                        **turn.content().model_dump(),
                    )
                )
        finally:
            await store.close()

    asyncio.run(go())


def test_down_votes_become_cases_that_replay_against_the_stores_kb(tmp_path: Path) -> None:
    fill(tmp_path)
    out = tmp_path / "from-feedback"
    result = run(tmp_path, "--from-feedback", str(out))
    assert result.exit_code == 0, result.output
    assert "wrote 1 case(s)" in result.output  # t3 asks t1's question again; t2 was liked
    golden_file = out / "chat" / "golden.yaml"
    text = golden_file.read_text(encoding="utf-8")
    assert "what was wrong: Klopt niet" in text and "prompt r42-chat-1" in text
    golden = ChatGolden.model_validate(read_yaml(golden_file))
    assert golden.kb_store == f"sqlite:///{tmp_path / 'r42.db'}"
    (script,) = golden.scripts
    assert script.turns[0].say.lower().startswith("hoe vraag ik")
    assert script.turns[0].unlike == "Geen idee."
    results = tmp_path / "results"
    base = str(tmp_path / "base.json")
    replay = run(tmp_path, "--suite", "chat", "--golden-dir", str(out), "--provider", "offline",
                 "--results-dir", str(results), "--baseline", base)  # fmt: skip
    assert replay.exit_code == 0, replay.output
    (report,) = results.glob("*.json")
    chat = json.loads(report.read_text())["suites"]["chat"]
    metrics = {name: m["value"] for name, m in chat["metrics"].items()}
    assert metrics["turns"] == 1.0 and metrics["turns_passed"] == 1.0


def test_no_down_votes_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "from-feedback"
    result = run(tmp_path, "--from-feedback", str(out))
    assert result.exit_code == 0 and "nothing written" in result.output
    assert not out.exists()


def test_the_shipped_golden_sets_are_never_overwritten(tmp_path: Path) -> None:
    from evals.golden import EVALS_DIR

    result = run(tmp_path, "--from-feedback", str(EVALS_DIR))
    assert result.exit_code == 2 and "shipped golden sets" in result.output


def test_a_reply_repeating_the_rated_answer_is_caught() -> None:
    assert _same_answer("Geen  idee.\n", "geen idee.")
    assert not _same_answer("Via het HR-portaal.", "Geen idee.")
