"""topics_from_markdown, the sample handbook and the retrieval golden set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.errors import BadInputError
from shared.kb import (
    RELEVANCE_LEVELS,
    TOPIC_TYPES,
    KbTopic,
    RetrievalIndex,
    is_kebab_id,
    topics_from_markdown,
)

ROOT = Path(__file__).resolve().parents[3]
HANDBOOK = ROOT / "services" / "extractor" / "sample_handbook"
GOLDEN = ROOT / "evals" / "retrieval" / "golden.jsonl"
OFFTOPIC = ROOT / "evals" / "retrieval" / "offtopic.jsonl"
KINDS = {"plain", "plural", "one-word", "inflection", "paraphrase", "situation"}

DOC = """---
type: process
title: Voorbeeld
---

# Titel

Inleiding die bij geen onderwerp hoort.

## Ouderschapsverlof (betaald)

Eerste alinea met **nadruk** en een [link](https://example.org).

### Aanvragen

- stap een
- stap twee

## Budgethouder
<!-- type: role -->

Beheert het budget.

```
## Geen kop in code
```

## Ouderschapsverlof (betaald)

Nog een alinea.
"""


def test_headings_become_topics() -> None:
    topics = topics_from_markdown(DOC, source="voorbeeld.md")
    assert [t.id for t in topics] == ["ouderschapsverlof-betaald", "budgethouder"]
    verlof, budget = topics
    assert verlof.label == "Ouderschapsverlof (betaald)"
    assert verlof.type == "process"  # from the front matter
    assert budget.type == "role"  # from the comment under the heading
    assert verlof.source == budget.source == "voorbeeld.md"
    assert verlof.description == (
        "Eerste alinea met nadruk en een link. Aanvragen stap een stap twee Nog een alinea."
    )
    assert "Geen kop in code" in budget.description
    assert "Inleiding" not in verlof.description + budget.description


def test_without_front_matter_topics_are_concepts() -> None:
    topics = topics_from_markdown("## Kernwaarden\n\nOpen en eerlijk.\n", source="x.md")
    assert topics == [
        KbTopic("kernwaarden", "Kernwaarden", "concept", "Open en eerlijk.", source="x.md")
    ]
    assert topics_from_markdown("Geen koppen hier.", source="x.md") == []


def test_bad_input_is_rejected() -> None:
    with pytest.raises(BadInputError):
        topics_from_markdown(None, source="x.md")  # type: ignore[arg-type]
    with pytest.raises(BadInputError):
        topics_from_markdown("## A", source=" ")


def _handbook() -> list[KbTopic]:
    topics = []
    for path in sorted(HANDBOOK.glob("*.md")):
        topics.extend(topics_from_markdown(path.read_text(encoding="utf-8"), source=path.name))
    return topics


def test_sample_handbook_is_well_formed() -> None:
    files = sorted(HANDBOOK.glob("*.md"))
    assert 8 <= len(files) <= 12
    size = sum(len(p.read_bytes()) for p in files)
    assert 25_000 <= size <= 50_000
    topics = _handbook()
    ids = [t.id for t in topics]
    assert len(ids) == len(set(ids)), "a heading is repeated across files"
    for topic in topics:
        assert is_kebab_id(topic.id) and topic.type in TOPIC_TYPES
        assert topic.learning_relevance in RELEVANCE_LEVELS
        assert len(topic.description) >= 200, f"{topic.id} has too little text"
    assert {t.type for t in topics} == set(TOPIC_TYPES)
    for path in files:
        assert len(topics_from_markdown(path.read_text(encoding="utf-8"), source=path.name)) >= 3


def test_golden_set_matches_the_handbook() -> None:
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line]
    known = {t.id for t in _handbook()}
    assert len({r["question"] for r in rows}) == len(rows)
    for row in rows:
        assert (
            {"question", "expected", "compound"}
            <= set(row)
            <= {"question", "expected", "compound", "lang", "kind"}
        ), row
        assert row.get("lang", "nl") in {"nl", "en"} and row.get("kind", "plain") in KINDS, row
        assert row["expected"] and set(row["expected"]) <= known, row
    dutch = [r for r in rows if r.get("lang", "nl") == "nl"]
    assert len(dutch) >= 150 and len(rows) - len(dutch) >= 30
    assert sum(r["compound"] for r in dutch) / len(dutch) >= 0.3
    # Every kind of miss seen in the field is represented.
    assert {r.get("kind") for r in dutch} >= KINDS - {"plain"}
    offtopic = [json.loads(line) for line in OFFTOPIC.read_text(encoding="utf-8").splitlines()]
    assert len(offtopic) >= 20 and all(set(r) <= {"question", "lang"} for r in offtopic)


def test_golden_compound_questions_really_hinge_on_a_compound() -> None:
    """Each compound question has a word that only occurs inside a longer word of its topic."""
    from shared.kb import tokenize

    topics = {t.id: t for t in _handbook()}
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line]
    for row in (r for r in rows if r["compound"]):
        words = {
            w
            for t in row["expected"]
            for w in tokenize(f"{topics[t].label} {topics[t].description}")
        }
        label_words = {w for t in row["expected"] for w in tokenize(topics[t].label)}
        query = [w for w in tokenize(row["question"]) if len(w) >= 6]
        assert any(
            any(q != w and (q in w or w in q or q[:6] == w[:6]) for w in words | label_words)
            and q not in label_words
            for q in query
        ), row["question"]


def test_golden_set_retrieval_does_not_regress() -> None:
    """Quality floor on the golden set (bench/bench_retrieval_quality.py prints the details)."""
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line]
    topics = _handbook()
    ours = RetrievalIndex.build(topics)
    plain = RetrievalIndex.build(topics, compound_weight=0.0)

    def recall(index: RetrievalIndex, subset: list[dict]) -> float:
        found = 0.0
        for row in subset:
            top = {h.topic_id for h in index.search(row["question"], k=10)}
            found += len(top & set(row["expected"])) / len(row["expected"])
        return found / len(subset)

    compound = [r for r in rows if r["compound"]]
    assert recall(ours, rows) >= 0.9
    assert recall(ours, compound) > recall(plain, compound)
