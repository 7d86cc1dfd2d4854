"""The KB context block: selection, relations, content budget, hash and token bound."""

from __future__ import annotations

import logging
import random
import re

import pytest

from shared.errors import BadInputError
from shared.kb import (
    DEFAULT_MAX_CONTEXT_TOKENS,
    KbContext,
    KbRelation,
    KbTopic,
    RelationIndex,
    RetrievalIndex,
    build_kb_context,
    estimate_tokens,
    kb_hash,
)

TOPICS = [
    KbTopic("pensioenregeling", "Pensioenregeling", "concept", "Premie en pensioen bij Horizon."),
    KbTopic("partnerpensioen", "Partnerpensioen", "concept", "Pensioen voor je partner."),
    KbTopic("nabestaandenpensioen", "Nabestaandenpensioen", "concept", "Pensioen voor wezen."),
    KbTopic("people-partner", "People partner", "role", "Helpt bij arbeidsvoorwaarden."),
    KbTopic("ziekmelding", "Ziekmelding", "process", "Meld je ziek voor negen uur."),
    KbTopic("cfo", "CFO", "role", "Beheert de begroting."),
]
RELATIONS = [
    KbRelation("partnerpensioen", "pensioenregeling", "part_of", "Onderdeel van de regeling"),
    KbRelation("nabestaandenpensioen", "pensioenregeling", "part_of"),
    KbRelation("pensioenregeling", "cfo", "executed_by"),  # cfo is not selected below
    KbRelation("ziekmelding", "people-partner", "executed_by"),
]


def _context(question: str, **kwargs: object) -> KbContext:
    topics = kwargs.pop("topics", TOPICS)
    index = kwargs.pop("index", None) or RetrievalIndex.build(topics)
    return build_kb_context(
        question,
        index=index,
        topics=topics,
        relations=kwargs.pop("relations", RELATIONS),
        **kwargs,
    )


def test_lists_the_top_topics_with_id_label_type_and_description() -> None:
    ctx = _context("Hoe werkt mijn pensioen?")
    assert set(ctx.topic_ids[:3]) == {"pensioenregeling", "nabestaandenpensioen", "partnerpensioen"}
    assert "- [partnerpensioen] Partnerpensioen (concept): Pensioen voor je partner." in ctx.text
    assert ctx.text.startswith("Onderwerpen:")
    assert "cfo" not in ctx.topic_ids


def test_relations_only_between_selected_topics() -> None:
    ctx = _context("Hoe werkt mijn pensioen?")
    assert "Relaties:" in ctx.text
    assert "- partnerpensioen part_of pensioenregeling: Onderdeel van de regeling" in ctx.text
    assert "- nabestaandenpensioen part_of pensioenregeling" in ctx.text
    assert "executed_by cfo" not in ctx.text
    assert "ziekmelding" not in ctx.text


def test_relation_index_and_plain_relations_give_the_same_text() -> None:
    plain = _context("pensioen en ziekmelding bij de people partner")
    indexed = _context(
        "pensioen en ziekmelding bij de people partner", relations=RelationIndex(RELATIONS)
    )
    assert plain == indexed
    assert "- ziekmelding executed_by people-partner" in plain.text


def test_no_relation_section_without_relations() -> None:
    assert "Relaties:" not in _context("ziekmelding", relations=[]).text


def test_content_is_capped_and_verbatim_topics_come_first() -> None:
    contents = {t.id: f"Artikel over {t.label}. " + "tekst " * 400 for t in TOPICS}
    # The CFO scores lowest for this question but is named, so its content leads.
    ctx = _context(
        "pensioen pensioen partner, vraag het de CFO", contents=contents, content_chars=300
    )
    assert ctx.topic_ids[0] == "cfo"
    content = ctx.text.split("Inhoud:\n", 1)[1]
    headings = re.findall(r"^## .* \[([a-z-]+)\]$", content, flags=re.MULTILINE)
    assert headings[0] == "cfo"
    assert len(headings) == 5  # max_content_topics
    for block in re.split(r"^## .*$", content, flags=re.MULTILINE)[1:]:
        body = block.strip().split("\n[kb_hash")[0]
        assert len(body) <= 300 and body.endswith("…")


def test_content_limits_are_respected() -> None:
    contents = {t.id: f"Inhoud van {t.label}" for t in TOPICS}
    ctx = _context("pensioen", contents=contents, max_content_topics=2)
    assert ctx.text.count("\n## ") == 2
    none = _context("pensioen", contents=contents, max_content_topics=0)
    assert "Inhoud:" not in none.text
    # Topics outside the selection never contribute content.
    only_cfo = _context("pensioen", contents={"cfo": "Geheim budget"})
    assert "Geheim budget" not in only_cfo.text


def test_content_keeps_its_line_structure() -> None:
    contents = {"ziekmelding": "Intro.\n\n## Stappen\n- bel je teamlead\n- meld in Lumen"}
    ctx = _context("ziekmelding", contents=contents)
    assert "Intro.\n\n## Stappen\n- bel je teamlead\n- meld in Lumen" in ctx.text


def test_kb_hash_covers_the_whole_kb_and_ignores_order() -> None:
    ctx = _context("pensioen")
    assert ctx.kb_hash == kb_hash(t.id for t in TOPICS)
    assert ctx.text.endswith(f"[kb_hash: {ctx.kb_hash}]")
    assert re.fullmatch(r"[0-9a-f]{8}", ctx.kb_hash)
    reordered = _context("pensioen", topics=list(reversed(TOPICS)))
    assert reordered.kb_hash == ctx.kb_hash
    grown = _context("pensioen", topics=[*TOPICS, KbTopic("nieuw", "Nieuw")])
    assert grown.kb_hash != ctx.kb_hash


def test_a_stale_index_is_detected_and_the_true_hash_used(caplog: pytest.LogCaptureFixture) -> None:
    stale = RetrievalIndex.build(TOPICS[:3])
    with caplog.at_level(logging.WARNING, logger="shared.kb.context"):
        ctx = _context("pensioen", index=stale)
    assert ctx.kb_hash == kb_hash(t.id for t in TOPICS) != stale.fingerprint
    assert "stale" in caplog.text


def test_no_match_still_yields_a_hash() -> None:
    ctx = _context("xyzzy quux")
    assert ctx.topic_ids == ()
    assert "(geen passende onderwerpen gevonden)" in ctx.text
    assert ctx.text.endswith(f"[kb_hash: {ctx.kb_hash}]")


def test_long_descriptions_are_truncated() -> None:
    long = [KbTopic("lang", "Lang", "concept", "pensioen " + "woord " * 1000)]
    ctx = _context("pensioen", topics=long, relations=[])
    line = next(line for line in ctx.text.splitlines() if line.startswith("- [lang]"))
    description = line.split(": ", 1)[1]
    assert len(description) <= 600 and description.endswith("…")


@pytest.mark.parametrize(
    "kwargs",
    [{"max_topics": 0}, {"max_tokens": 399}, {"content_chars": -1}, {"contents": ["x"]}],
)
def test_bad_arguments_are_rejected(kwargs: dict) -> None:
    with pytest.raises(BadInputError):
        _context("pensioen", **kwargs)
    with pytest.raises(BadInputError):
        _context(None)  # type: ignore[arg-type]


def test_context_stays_bounded_at_10k_topics() -> None:
    rng = random.Random(11)
    parts = ["pensioen", "verlof", "regeling", "vergoeding", "budget", "beleid", "proces"]
    topics = []
    for i in range(10_000):
        label = f"{rng.choice(parts)}{rng.choice(parts)} {i}"
        words = " ".join(rng.choice(parts) + rng.choice(parts) for _ in range(45))
        topics.append(KbTopic(f"topic-{i}", label.capitalize(), "concept", words))
    # The bound is the context's, not retrieval's: the index only needs to pick the hits, so
    # it reads ids and labels (seconds faster); the context gets the full descriptions.
    index = RetrievalIndex.build([KbTopic(t.id, t.label, t.type, "") for t in topics])
    by_id = {t.id: t for t in topics}
    ids = list(by_id)
    relations = [
        KbRelation(rng.choice(ids), rng.choice(ids), "related_to", "verband " * 80)
        for _ in range(20_000)
    ]
    hits = [h.topic_id for h in index.search("pensioenregeling verlofbudget", k=10)]
    # Make the selected topics densely related so the relation section is at its largest.
    relations += [KbRelation(a, b, "depends_on", "x " * 200) for a in hits for b in hits if a != b]
    contents = dict.fromkeys(ids, "inhoud " * 3000)  # one shared string, not 10k copies
    preamble_tokens = 1500
    for max_tokens in (DEFAULT_MAX_CONTEXT_TOKENS, 800, 400):
        ctx = build_kb_context(
            "pensioenregeling verlofbudget",
            index=index,
            topics=by_id,
            relations=RelationIndex(relations),
            contents=contents,
            max_tokens=max_tokens,
        )
        assert ctx.token_estimate == estimate_tokens(ctx.text) <= max_tokens
        assert len(ctx.text) <= max_tokens * 4
        assert ctx.topic_ids and ctx.text.endswith(f"[kb_hash: {index.fingerprint}]")
    assert preamble_tokens + DEFAULT_MAX_CONTEXT_TOKENS <= 4000


def test_given_hits_are_used_instead_of_a_second_search() -> None:
    index = RetrievalIndex.build(TOPICS)
    hits = index.search("Wie helpt bij ziekmelding?")
    searched = _context("Wie helpt bij ziekmelding?", index=index)
    given = _context("een andere tekst die niets vindt", index=index, hits=hits)
    assert given.text == searched.text and given.relevant


def test_off_topic_question_gets_no_topics_and_says_so() -> None:
    ctx = _context("Wat is de hoofdstad van Frankrijk?")
    assert ctx.topic_ids == () and not ctx.relevant
    assert "(geen passende onderwerpen gevonden)" in ctx.text
