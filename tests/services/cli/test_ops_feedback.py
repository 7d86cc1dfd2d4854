"""`r42 ops feedback` and `r42 ops gaps` on a real SQLite store, at most 80 columns."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner, Result

from services.cli.main import build_app
from shared.store import ChatTurn, FeedbackVote, Topic, iso_week, open_store, utcnow

NOW = utcnow()
LAST_WEEK = NOW - timedelta(weeks=1)


def run(tmp_path: Path, *args: str) -> Result:
    env = {"R42_STORE": f"sqlite:///{tmp_path / 'r42.db'}", "R42_DATA_DIR": str(tmp_path),
           "COLUMNS": "200"}  # fmt: skip
    return CliRunner().invoke(build_app(), ["ops", *args], env=env)


def fill(tmp_path: Path) -> None:
    """Two weeks of votes and a few turns; the KB had nothing on the dog question (kb_miss)."""

    async def go() -> None:
        store = await open_store(f"sqlite:///{tmp_path / 'r42.db'}")
        try:
            await store.topics.upsert_many([
                Topic(id="verlof", label="Verlof", type="process", description="Via HR."),
                Topic(id="lease-auto-regeling-voor-medewerkers-met-een-heel-lange-naam",
                      label="Leaseautoregeling voor medewerkers " * 3, type="process",
                      description="Leaseauto."),
            ])  # fmt: skip

            async def turn(tid: str, question: str, answer: str, topics: list[str], at,
                           kb_miss: bool = False) -> None:  # fmt: skip
                await store.turns.put(
                    ChatTurn(turn_id=tid, user="U1", question=question, answer=answer,
                             topic_ids=topics, model="claude-haiku-4-5",
                             prompt_version="r42-chat-1", kb_miss=kb_miss),
                    now=at,
                )  # fmt: skip

            await turn("t1", "Hoe vraag ik verlof aan?", "Via het HR-portaal.", ["verlof"], NOW)
            await turn("t2", "Mag ik een hond meenemen?", "Nee, helaas.", [], NOW, kb_miss=True)
            await turn("t3", "mag ik een  HOND meenemen", "Geen idee.",
                       [], NOW - timedelta(hours=1), kb_miss=True)  # fmt: skip
            # The gap list reads the typed flag, not the wording of the answer.
            await turn("t4", "Wat doet de sprint review?",
                       "Dat staat niet in de kennisgraaf zo, maar ...", [], NOW)  # fmt: skip

            async def vote(tid: str, user: str, value: str, at, **kw: object) -> None:
                turn_ = await store.turns.get(tid)
                content = turn_.content().model_dump() if turn_ else {}
                await store.feedback.record(
                    FeedbackVote(turn_id=tid, user=user, value=value, **{**content, **kw}), now=at
                )

            await vote("t1", "U1", "up", NOW)
            await vote("t1", "U2", "down", NOW, reason="Het portaal heet anders")
            await vote("t1", "U3", "up", LAST_WEEK)
            await vote("t2", "U1", "down", NOW)
        finally:
            await store.close()

    asyncio.run(go())


def test_without_votes_it_says_so(tmp_path: Path) -> None:
    for command in ("feedback", "gaps"):
        result = run(tmp_path, command)
        assert result.exit_code == 0, result.output
        assert result.output.startswith("no ")


def test_rates_per_week_and_topic_fit_80_columns(tmp_path: Path) -> None:
    fill(tmp_path)
    result = run(tmp_path, "feedback")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines), [ln for ln in lines if len(ln) > 80]
    this_week, last_week = iso_week(NOW), iso_week(LAST_WEEK)
    assert f"{last_week}       1     0      100%" in lines
    assert f"{this_week}       1     2       33%" in lines
    verlof = next(ln for ln in lines if ln.startswith(this_week) and "Verlof" in ln)
    assert verlof.split()[-3:] == ["1", "1", "50%"]
    assert any("(no sources)" in ln for ln in lines)  # t2's answer used no topic
    data = json.loads(run(tmp_path, "feedback", "--json").output)
    assert {w["week"]: (w["up"], w["down"]) for w in data["weeks"]} == {
        last_week: (1, 0),
        this_week: (1, 2),
    }
    only_this = json.loads(run(tmp_path, "feedback", "--weeks", "1", "--json").output)
    assert [w["week"] for w in only_this["weeks"]] == [this_week]


def test_gaps_list_unanswered_and_down_voted_questions(tmp_path: Path) -> None:
    fill(tmp_path)
    result = run(tmp_path, "gaps")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines)
    # The dog question: asked twice (folded alike), unanswered both times and voted down once.
    dog = lines[2]
    assert dog.split()[0] == "3" and "thumbs down, unanswered" in dog and "hond" in dog
    verlof = next(i for i, ln in enumerate(lines) if "verlof aan" in ln)
    assert "thumbs down" in lines[verlof] and "Het portaal heet anders" in lines[verlof + 1]
    gaps = [json.loads(line) for line in run(tmp_path, "gaps", "--json").output.splitlines()]
    assert [g["count"] for g in gaps] == [3, 1]
    assert gaps[0]["reasons"] == ["down", "unanswered"]


def test_bad_options_are_refused(tmp_path: Path) -> None:
    result = run(tmp_path, "gaps", "--weeks", "0")
    assert result.exit_code == 2 and "--weeks" in result.output
