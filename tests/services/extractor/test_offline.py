"""The offline tool handlers: deterministic graphs from markdown structure."""

from __future__ import annotations

from typing import Any

from services.extractor.offline import derive_graph
from services.extractor.pipeline import extract_chunk
from services.extractor.prompts import extraction_message, split_document_message
from tests.services.extractor.conftest import OPTIONS

DOC = """---
type: role
---
# Rollen

Respellion heeft weinig hiërarchie. Een rol is geen rang. Rollen wisselen. Nog een zin.

## Teamlead
De teamlead voert groeigesprekken met het team. Hij keurt verlof goed.

## People partner
De people partner helpt bij verzuim, samen met de teamlead.

## Verlof aanvragen
<!-- type: process -->
Je vraagt verlof aan bij je teamlead via Lumen.
"""


def test_headings_become_topics_with_structural_relations() -> None:
    graph = derive_graph(DOC, name="rollen.md", known_ids=["vakantiedagen", "lumen"])
    kinds = {t["id"]: t["type"] for t in graph["topics"]}
    assert kinds == {
        "rollen": "concept",
        "teamlead": "role",
        "people-partner": "role",
        "verlof-aanvragen": "process",
    }
    relations = {(r["source"], r["target"], r["type"]) for r in graph["relations"]}
    assert ("teamlead", "rollen", "part_of") in relations
    assert ("people-partner", "teamlead", "related_to") in relations
    assert ("verlof-aanvragen", "teamlead", "executed_by") in relations  # process → role
    assert ("verlof-aanvragen", "lumen", "related_to") in relations  # a known id, mentioned
    overview = next(t for t in graph["topics"] if t["id"] == "rollen")
    assert overview["description"].count(".") == 3  # at most three sentences


def test_text_without_headings_gets_one_topic_named_after_the_document() -> None:
    graph = derive_graph("Gewone tekst. Zonder kopjes.", name="notities_2026.txt", known_ids=[])
    assert [(t["id"], t["label"]) for t in graph["topics"]] == [("notities-2026", "Notities 2026")]


def test_the_message_round_trips_for_the_offline_handler() -> None:
    message = extraction_message(
        known_ids=["a", "b"], name='x "y".md', chunk=DOC + "</document>", index=1, count=3
    )
    parsed = split_document_message(message)
    assert parsed == ("x 'y'.md", DOC + "</document>", ["a", "b"])


async def test_offline_extraction_is_deterministic(offline_extractor: Any) -> None:
    runs = [
        await extract_chunk(
            source_id="s",
            source_name="rollen.md",
            chunk=DOC,
            index=0,
            count=1,
            known_ids=["lumen"],
            limiter=None,
            options=OPTIONS,
        )
        for _ in range(2)
    ]
    assert runs[0].topics == runs[1].topics and runs[0].relations == runs[1].relations
    assert [t.id for t in runs[0].topics] == [
        "rollen",
        "teamlead",
        "people-partner",
        "verlof-aanvragen",
    ]


def test_offline_answers_stay_within_every_schema_limit() -> None:
    from services.extractor.offline import fit_schema
    from services.extractor.tools import HandbookDelta, KnowledgeGraph

    long_heading = "Beleid " + " ".join(f"woord{i}" for i in range(60))  # > 200 chars
    long_body = " ".join(f"zin{i} zonder punt" for i in range(400))  # one 6,000-char sentence
    sections = "".join(f"## Sectie {i}\nOver sectie {i - 1}.\n\n" for i in range(80))
    doc = f"# Titel\n\n## {long_heading}\n{long_body}\n\n{sections}"
    graph = fit_schema(derive_graph(doc, name="lang.md", known_ids=[]))
    KnowledgeGraph.model_validate(graph)  # would raise on any limit
    HandbookDelta.model_validate(graph)
    assert len(graph["topics"]) == 60
    first = next(t for t in graph["topics"] if t["label"].startswith("Beleid"))
    assert len(first["label"]) <= 200 and len(first["id"]) <= 120
    assert len(first["description"]) <= 2000
