"""The CLI speaks English: `r42 kb topic …` and `r42 graph …` print no Dutch of their own.

The KG owner's refusals reach chat surfaces as Dutch messages; the CLI words their typed
code instead. The graph seeded here is English, so any Dutch word in the output comes from
R42's own text.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli.main import build_app
from services.cli.owner_words import ENGLISH, in_english
from services.extractor.graph_errors import DUTCH, refusal
from shared.bus.graph_rpc import GraphErrorCode
from shared.store import Relation, Topic, open_store

DUTCH_WORDS = (
    "de het een niet niets geen alleen deze dit er wordt kan moet mag mogen onbekend verlopen "
    "opnieuw toegepast kennisgraaf onderwerp onderwerpen wijziging beheerder beheerders "
    "verwijdert verwijderd samengevoegd graaf grens minstens hoogstens probeer straks "
    "analyseer ongedaan maken bestaat relatie relaties bron bronnen"
).split()
_DUTCH_RE = re.compile(rf"(?<![\w-])({'|'.join(DUTCH_WORDS)})(?![\w-])", re.IGNORECASE)


def dutch_in(text: str) -> list[str]:
    """Dutch words in a CLI output."""
    return _DUTCH_RE.findall(text)


def test_the_scanner_finds_the_owners_dutch() -> None:
    assert all(dutch_in(message) for message in DUTCH.values())
    assert not any(dutch_in(message) for message in ENGLISH.values())


def test_every_graph_error_code_has_words_in_both_languages() -> None:
    from typing import get_args

    codes = set(get_args(GraphErrorCode))
    assert set(DUTCH) == codes and set(ENGLISH) == codes
    worded = in_english(refusal("over_bound", deleting=9, size=20, bound=5))
    assert str(worded).startswith("this selection deletes 9 of 20 topics; the bound is 5")
    assert worded.code == "over_bound" and worded.params == {"deleting": 9, "size": 20, "bound": 5}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    url = f"sqlite:///{tmp_path / 'r42.db'}"

    async def seed() -> None:
        store = await open_store(url)
        try:
            await store.topics.upsert_many([
                Topic(id="teamlead", label="Teamlead", type="role", description="Leads a team."),
                Topic(id="team-lead", label="Team lead", type="role", description="Leads."),
                Topic(id="backlog", label="Backlog", type="concept", description="Work to do."),
            ])  # fmt: skip
            await store.relations.upsert_many(
                [Relation(source="backlog", target="team-lead", type="related_to")]
            )
        finally:
            await store.close()

    asyncio.run(seed())
    return {"R42_STORE": url, "R42_DATA_DIR": str(tmp_path), "R42_LLM": "offline",
            "R42_LIMITER": "off", "COLUMNS": "200"}  # fmt: skip


def test_kb_topic_and_graph_output_has_no_dutch(env: dict[str, str]) -> None:
    runner = CliRunner()
    outputs: dict[str, str] = {}

    def r42(*args: str) -> str:
        result = runner.invoke(build_app(), list(args), env=env)
        outputs[" ".join(args)] = result.output
        return result.output

    r42("kb", "topic", "show", "backlog")
    r42("kb", "topic", "edit", "ghost", "--lock")
    preview = r42("graph", "analyze")
    plan_id = next(w for w in preview.split() if w.startswith("plan-"))
    r42("graph", "apply", plan_id, "--only", "m0")
    r42("graph", "apply", plan_id)  # what is left of the plan changes nothing now
    r42("graph", "apply", "plan-0123456789abcdef")  # plan_unknown
    r42("graph", "undo", "undo-nothing")  # no_such_change
    r42("kb", "topic", "deleted")
    found = {cmd: dutch_in(out) for cmd, out in outputs.items() if dutch_in(out)}
    assert not found, found
    assert "the chosen actions change nothing" in outputs[f"graph apply {plan_id}"]
    assert "this plan is unknown or expired" in outputs["graph apply plan-0123456789abcdef"]
    assert "there is no change undo-nothing to undo" in outputs["graph undo undo-nothing"]
