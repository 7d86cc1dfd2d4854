"""`r42 kb topic …` through the real CLI with no stack running: the KG owner's code in-process.

The acceptance path of admin curation: an edit with a locked relevance and a description
survives re-ingesting the topic's source; after --unlock, extraction sets the relevance again.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from services.cli.kb_topic import default_actor
from services.cli.main import build_app
from shared.store import Topic, open_store

HANDBOOK = """# Product owner

De product owner beheert de backlog en kiest wat het team bouwt.

## Sprint review

Elke sprint laat het team zien wat af is aan de product owner.
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"R42_STORE": f"sqlite:///{tmp_path / 'r42.db'}", "R42_DATA_DIR": str(tmp_path),
            "R42_LLM": "offline", "R42_LIMITER": "off", "COLUMNS": "200"}  # fmt: skip


def r42(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(build_app(), list(args), env=env)


def ingest(env: dict[str, str], path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    result = r42(env, "ingest", str(path))
    assert result.exit_code == 0, result.output


def read(env: dict[str, str], what: str) -> object:
    async def go() -> object:
        store = await open_store(env["R42_STORE"])
        try:
            if what == "audit":
                return await store.audit.latest()
            return await store.topics.get(what)
        finally:
            await store.close()

    return asyncio.run(go())


def topic(env: dict[str, str], topic_id: str) -> Topic:
    found = read(env, topic_id)
    assert isinstance(found, Topic), f"no topic {topic_id}"
    return found


def test_locked_edit_survives_reingest_and_unlock_hands_relevance_back(
    env: dict[str, str], tmp_path: Path
) -> None:
    doc = tmp_path / "rollen.md"
    ingest(env, doc, HANDBOOK)
    before = topic(env, "product-owner")
    assert (before.learning_relevance, before.relevance_locked) == ("standard", False)

    result = r42(env, "kb", "topic", "edit", "product-owner", "--relevance", "core", "--lock",
                 "--description", "Eigenaar van de backlog.")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "edited product-owner" in result.output and "r42 graph undo undo-" in result.output

    ingest(env, doc, HANDBOOK + "\nDe product owner praat met klanten.\n")  # a new version
    kept = topic(env, "product-owner")
    assert (kept.learning_relevance, kept.relevance_locked) == ("core", True)
    assert kept.description == "Eigenaar van de backlog."

    result = r42(env, "kb", "topic", "edit", "product-owner", "--unlock")
    assert result.exit_code == 0, result.output
    assert topic(env, "product-owner").learning_relevance == "core"  # unlock alone keeps it

    ingest(env, doc, HANDBOOK + "\nDe product owner schrijft user stories.\n")
    after = topic(env, "product-owner")
    assert (after.learning_relevance, after.relevance_locked) == ("standard", False)
    assert after.description == "Eigenaar van de backlog."  # the description stays curated

    audit = read(env, "audit")
    assert isinstance(audit, list)
    assert [(e.action, e.allowed, e.surface) for e in audit] == [
        ("topic.edit", True, "cli"),
        ("topic.edit", True, "cli"),
    ]
    assert audit[0].before == {"relevance_locked": True}
    assert audit[0].after == {"relevance_locked": False}
    assert audit[1].after == {"description": "Eigenaar van de backlog.",
                              "learning_relevance": "core", "relevance_locked": True}  # fmt: skip


def test_show_delete_merge_and_relations(env: dict[str, str], tmp_path: Path) -> None:
    ingest(env, tmp_path / "rollen.md", HANDBOOK)
    shown = r42(env, "kb", "topic", "show", "Sprint review", "--json")
    assert shown.exit_code == 0, shown.output
    card = json.loads(shown.output)
    assert card["topic"]["id"] == "sprint-review"
    assert [s["name"] for s in card["sources"]] == ["rollen.md"]
    assert {r["topic_id"] for r in card["relations"]} == {"product-owner"}

    added = r42(env, "kb", "topic", "relate", "sprint-review", "product-owner", "--type",
                "executed_by")  # fmt: skip
    assert added.exit_code == 0, added.output
    assert "sprint-review -executed_by-> product-owner" in added.output
    again = r42(env, "kb", "topic", "relate", "sprint-review", "product-owner", "--type",
                "executed_by")  # fmt: skip
    assert again.exit_code == 0 and again.output.startswith("unchanged")
    text = r42(env, "kb", "topic", "show", "sprint-review").output
    assert "-executed_by-> Product owner [product-owner]" in text

    gone = r42(env, "kb", "topic", "unrelate", "sprint-review", "product-owner", "--type",
               "executed_by")  # fmt: skip
    assert gone.exit_code == 0, gone.output
    missing = r42(env, "kb", "topic", "unrelate", "sprint-review", "product-owner", "--type",
                  "executed_by")  # fmt: skip
    assert missing.exit_code == 1 and "no relation" in missing.output

    merged = r42(env, "kb", "topic", "merge", "sprint-review", "--into", "product-owner")
    assert merged.exit_code == 0, merged.output
    assert read(env, "sprint-review") is None
    assert "merged" in topic(env, "product-owner").metadata.model_dump()

    deleted = r42(env, "kb", "topic", "delete", "product-owner", "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert read(env, "product-owner") is None
    audit = read(env, "audit")
    assert isinstance(audit, list)
    assert [e.action for e in audit][:3] == ["topic.delete", "topic.merge", "topic.relation_remove"]


def test_non_admin_is_refused_and_audited(env: dict[str, str], tmp_path: Path) -> None:
    ingest(env, tmp_path / "rollen.md", HANDBOOK)
    attempts = [
        ("edit", "product-owner", "--relevance", "core", "--lock"),
        ("delete", "product-owner", "--yes"),
        ("merge", "sprint-review", "--into", "product-owner"),
        ("relate", "sprint-review", "product-owner"),
        ("unrelate", "sprint-review", "product-owner"),
    ]
    for command, *args in attempts:
        result = r42(env, "kb", "topic", command, *args, "--as", "UEVE")
        assert result.exit_code == 1, result.output
        assert "refused: UEVE is not an admin" in result.output
    assert topic(env, "product-owner").relevance_locked is False
    assert read(env, "sprint-review") is not None
    audit = read(env, "audit")
    assert isinstance(audit, list)
    assert [(e.actor, e.action, e.allowed) for e in reversed(audit)] == [
        ("UEVE", f"topic.{a}", False)
        for a in ("edit", "delete", "merge", "relation_add", "relation_remove")
    ]
    assert audit[-1].after is not None and audit[-1].after["requested"]["edit"] == {
        "learning_relevance": "core",
        "lock": True,
    }


def test_bad_input_is_one_clear_error_and_changes_nothing(env: dict[str, str]) -> None:
    for args, message in (
        (("edit", "x"), "nothing to change"),
        (("edit", "x", "--relevance", "vital"), "learning_relevance"),
        (("edit", "Not An Id", "--lock"), "kebab-case"),
        (("edit", "ghost", "--lock"), "no topic 'ghost'"),
        (("merge", "a", "--into", "a"), "into itself"),
        (("show", "nothing-here"), "no topic matches"),
    ):
        result = r42(env, "kb", "topic", *args)
        assert result.exit_code == 1, (args, result.output)
        assert message in result.output, (args, result.output)


def test_graph_undo_restores_an_edit_including_the_lock(
    env: dict[str, str], tmp_path: Path
) -> None:
    ingest(env, tmp_path / "rollen.md", HANDBOOK)
    result = r42(env, "kb", "topic", "edit", "product-owner", "--relevance", "core", "--lock",
                 "--label", "Product Owner")  # fmt: skip
    assert result.exit_code == 0, result.output
    undo_id = result.output.split("r42 graph undo ")[1].split("`")[0]
    undone = r42(env, "graph", "undo", undo_id)
    assert undone.exit_code == 0, undone.output
    back = topic(env, "product-owner")
    assert (back.label, back.learning_relevance, back.relevance_locked) == (
        "Product owner", "standard", False
    )  # fmt: skip
    ingest(env, tmp_path / "rollen.md", HANDBOOK + "\nNog een zin over de product owner.\n")
    assert topic(env, "product-owner").relevance_locked is False


def tombstones(env: dict[str, str]) -> list[object]:
    async def go() -> list[object]:
        store = await open_store(env["R42_STORE"])
        try:
            return list(await store.tombstones.list())
        finally:
            await store.close()

    return asyncio.run(go())


def test_a_deleted_topic_stays_deleted_on_reingest_until_the_delete_is_undone(
    env: dict[str, str], tmp_path: Path
) -> None:
    doc = tmp_path / "rollen.md"
    ingest(env, doc, HANDBOOK)
    deleted = r42(env, "kb", "topic", "delete", "sprint-review", "--yes")
    assert deleted.exit_code == 0, deleted.output
    undo_id = deleted.output.split("r42 graph undo ")[1].split("`")[0]

    # A new version that still asserts the topic (by its id and by its label).
    ingest(env, doc, HANDBOOK + "\nDe sprint review duurt een uur.\n")
    assert read(env, "sprint-review") is None
    assert topic(env, "product-owner").description  # the rest of the file merged as usual
    (stone,) = tombstones(env)
    assert (stone.topic_id, stone.label, stone.deleted_by, stone.undo_id) == (  # type: ignore[attr-defined]
        "sprint-review", "Sprint review", default_actor(), undo_id
    )  # fmt: skip
    assert stone.skipped == 1 and stone.deleted_at is not None  # type: ignore[attr-defined]
    listed = r42(env, "kb", "topic", "deleted")
    assert listed.exit_code == 0, listed.output
    assert f"sprint-review (Sprint review) deleted by {default_actor()}" in listed.output
    assert f"1 extraction(s) asserted it since; undo: `r42 graph undo {undo_id}`" in listed.output

    undone = r42(env, "graph", "undo", undo_id)
    assert undone.exit_code == 0, undone.output
    assert read(env, "sprint-review") is not None and tombstones(env) == []
    ingest(env, doc, HANDBOOK + "\nDe sprint review duurt twee uur.\n")
    back = topic(env, "sprint-review")
    assert back.metadata.model_dump().get("source") == "rollen.md"  # extraction's again
