"""`r42 learn …` and `r42 content …` through typer's CliRunner, offline, on a real SQLite store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from services.cli import learn
from shared.store import Store, Topic, open_store
from tests.services.content.conftest import TOPICS

TOPIC = "radicale-transparantie"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("R42_STORE", url)
    monkeypatch.setenv("R42_LLM", "offline")
    on_store(url, lambda s: s.topics.upsert_many(TOPICS))
    return url


def on_store(url: str, action: Any) -> Any:
    async def main() -> Any:
        store: Store = await open_store(url)
        try:
            return await action(store)
        finally:
            await store.close()

    return asyncio.run(main())


def run(*args: str) -> Result:
    app = typer.Typer(pretty_exceptions_enable=False, no_args_is_help=True)

    @app.callback()
    def root() -> None:
        """Test root."""

    learn.register(app)
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_learn_topic_is_learn_show_and_caches(db: str) -> None:
    first = run("learn", TOPIC, "--type", "article")
    assert first.exit_code == 0, first.output
    assert "generated: article" in first.output and "(offline)" in first.output
    assert "Wat is Radicale transparantie?" in first.output

    again = run("learn", "show", "Radicale transparantie", "--type", "article", "--json")
    assert again.exit_code == 0, again.output
    doc = json.loads(again.output)
    assert doc["generated"] == [] and doc["topic"]["id"] == TOPIC
    assert doc["article"]["meta"]["offline"] is True
    calls = on_store(db, lambda s: s.llm_calls.last(10))
    assert [c.task for c in calls] == ["content.article"]


def test_png_and_json_never_dump_the_picture(db: str, tmp_path: Path) -> None:
    out = tmp_path / "info.png"
    result = run("learn", TOPIC, "--type", "article", "--png", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    doc = json.loads(result.output)
    assert set(doc) == {"topic", "generated", "article"}
    assert doc["generated"] == ["article", "infographic"]
    stored = on_store(db, lambda s: s.content.get(TOPIC))
    assert stored.infographic["image"]["sha256"]
    everything = json.loads(run("learn", TOPIC, "--json").output)
    assert "base64" not in everything["infographic"]["image"]
    assert everything["infographic"]["image"]["width"] == 1080


def test_refine_and_its_errors(db: str) -> None:
    missing = run("learn", "refine", "verlof", "Korter graag")
    assert missing.exit_code == 1 and "no article to refine yet" in missing.output
    assert run("learn", "verlof", "-t", "article").exit_code == 0
    done = run("learn", "refine", "verlof", "Korter graag", "--as", "U-admin")
    assert done.exit_code == 0, done.output
    assert "applied: set_intro (offline)" in done.output and "Korter graag" in done.output
    stored = on_store(db, lambda s: s.content.get("verlof"))
    assert stored.article["meta"]["refined_by"] == "U-admin"


def test_free_text_becomes_a_custom_topic(db: str) -> None:
    result = run("learn", "Ik wil leren over pair programming", "-t", "slides")
    assert result.exit_code == 0, result.output
    assert "pair-programming" in result.output and "pending admin approval" in result.output
    suggestions = on_store(db, lambda s: s.suggestions.list())
    assert [s.id for s in suggestions] == ["custom-topic-pair-programming"]


def test_week_picks_a_non_excluded_topic(db: str) -> None:
    result = run("learn", "week", "--user", "U1", "--week", "2026-W07")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("2026-W07 U1: ") and "lunchmenu" not in result.output
    on_store(db, lambda s: s.curriculum.set("2026-W07", "verlof"))
    assert "[verlof]" in run("learn", "week", "--user", "U1", "--week", "2026-W07").output
    bad = run("learn", "week", "--week", "2026-07")
    assert bad.exit_code == 1 and "ISO week" in bad.output


def test_stale_listing_and_regeneration(db: str) -> None:
    assert run("learn", TOPIC, "-t", "article").exit_code == 0
    assert run("content", "stale").output.strip() == "no stale content"
    changed = Topic(id=TOPIC, label="Open boek", type="concept", description="Alles open.")
    on_store(db, lambda s: s.topics.upsert_many([changed]))

    listing = run("content", "stale", "--json")
    assert json.loads(listing.output) == [
        {"topic_id": TOPIC, "kind": "article",
         "reasons": ["the topic changed since generation"], "refined": False}
    ]  # fmt: skip
    assert "the topic changed" in run("content", "stale").output

    regen = run("content", "regenerate", "--stale")
    assert regen.exit_code == 0 and f"{TOPIC}: regenerated article" in regen.output
    assert run("content", "stale").output.strip() == "no stale content"
    stored = on_store(db, lambda s: s.content.get(TOPIC))
    assert "Open boek" in stored.article["title"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("learn", TOPIC, "--type", "video"), 2, "--type must be one of"),
        (("content", "regenerate"), 2, "or --stale"),
        (("content", "regenerate", "bestaat-niet"), 1, "no topic 'bestaat-niet'"),
        (("learn", TOPIC, "--png", "/nonexistent-dir/x.png"), 2, "does not exist"),
    ],
)
def test_bad_input_exits_cleanly_and_changes_nothing(
    db: str, args: tuple[str, ...], code: int, message: str
) -> None:
    result = run(*args)
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output
    assert on_store(db, lambda s: s.content.get(TOPIC)) is None
