"""validate_delta: cleanup of proposed graph deltas against the KB."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from shared.kb import GraphDelta, KbTopic, validate_delta

KB = [
    KbTopic("ouderschapsverlof", "Ouderschapsverlof", "process"),
    KbTopic("people-partner", "People partner", "role"),
    KbTopic("pensioenregeling", "Pensioenregeling", "concept"),
]


def _topic(topic_id: str, label: str, kind: str = "concept", **extra: Any) -> dict[str, Any]:
    return {"id": topic_id, "label": label, "type": kind, "description": "", **extra}


def _rel(source: str, target: str, kind: str = "related_to") -> dict[str, str]:
    return {"source": source, "target": target, "type": kind}


def _delta(topics: list | None = None, relations: list | None = None, **extra: Any) -> dict:
    return {
        "reason": "De gebruiker noemde dit",
        "topics": topics or [],
        "relations": relations or [],
        **extra,
    }


def _triples(delta: GraphDelta) -> list[tuple[str, str, str]]:
    return [(r.source, r.target, r.type) for r in delta.relations]


Check = Callable[[GraphDelta | None], bool]

CASES: list[tuple[str, Any, Check]] = [
    (
        "valid topic with a relation to the KB",
        _delta(
            [_topic("geboorteverlof", "Geboorteverlof", "process")],
            [_rel("geboorteverlof", "ouderschapsverlof")],
        ),
        lambda d: (
            d is not None
            and [t.id for t in d.topics] == ["geboorteverlof"]
            and _triples(d) == [("geboorteverlof", "ouderschapsverlof", "related_to")]
        ),
    ),
    (
        "topic already in the KB by id is dropped, its relation kept",
        _delta(
            [_topic("pensioenregeling", "Pensioen")], [_rel("pensioenregeling", "people-partner")]
        ),
        lambda d: (
            d is not None
            and d.topics == ()
            and _triples(d) == [("pensioenregeling", "people-partner", "related_to")]
        ),
    ),
    (
        "topic already in the KB by label is dropped, relations re-pointed",
        _delta(
            [_topic("ouderschaps-verlof", "OUDERSCHAPSVERLOF ")],
            [_rel("ouderschaps-verlof", "people-partner", "executed_by")],
        ),
        lambda d: (
            d is not None
            and d.topics == ()
            and _triples(d) == [("ouderschapsverlof", "people-partner", "executed_by")]
        ),
    ),
    (
        "two delta topics with the same label keep the first",
        _delta(
            [_topic("thuiswerk", "Thuiswerk"), _topic("thuis-werk", "thuiswerk")],
            [_rel("thuis-werk", "pensioenregeling")],
        ),
        lambda d: (
            d is not None
            and [t.id for t in d.topics] == ["thuiswerk"]
            and _triples(d) == [("thuiswerk", "pensioenregeling", "related_to")]
        ),
    ),
    (
        "non-kebab id is dropped and nothing is left",
        _delta([_topic("code_review", "Code review")]),
        lambda d: d is None,
    ),
    (
        "upper-case id is normalised, not rejected",
        _delta([_topic("Code-Review", "Code review", "PROCESS")]),
        lambda d: (
            d is not None and d.topics[0].id == "code-review" and d.topics[0].type == "process"
        ),
    ),
    (
        "missing id is derived from the label",
        _delta([{"label": "Zwangerschapsverlof (betaald)", "type": "process"}]),
        lambda d: d is not None and d.topics[0].id == "zwangerschapsverlof-betaald",
    ),
    (
        "unknown topic type drops the topic and its relations",
        _delta(
            [_topic("budget", "Budget", "thing"), _topic("declaratie", "Declaratie", "process")],
            [_rel("budget", "declaratie")],
        ),
        lambda d: (
            d is not None and [t.id for t in d.topics] == ["declaratie"] and d.relations == ()
        ),
    ),
    (
        "invalid relevance drops the topic, missing relevance defaults to standard",
        _delta([_topic("a-topic", "A", learning_relevance="vital"), _topic("b-topic", "B")]),
        lambda d: (
            d is not None
            and [(t.id, t.learning_relevance) for t in d.topics] == [("b-topic", "standard")]
        ),
    ),
    (
        "unknown relation type is dropped",
        _delta(
            relations=[
                _rel("pensioenregeling", "people-partner", "owns"),
                _rel("pensioenregeling", "people-partner", "depends_on"),
            ]
        ),
        lambda d: (
            d is not None and _triples(d) == [("pensioenregeling", "people-partner", "depends_on")]
        ),
    ),
    (
        "legacy executes becomes executed_by with endpoints swapped",
        _delta(relations=[_rel("people-partner", "ouderschapsverlof", "executes")]),
        lambda d: (
            d is not None
            and _triples(d) == [("ouderschapsverlof", "people-partner", "executed_by")]
        ),
    ),
    (
        "relation to an unknown topic is dropped",
        _delta([_topic("nieuw", "Nieuw")], [_rel("nieuw", "bestaat-niet"), _rel("nieuw", "cfo")]),
        lambda d: d is not None and d.relations == () and len(d.topics) == 1,
    ),
    (
        "self-reference is dropped, also after re-pointing a duplicate",
        _delta(
            [_topic("pensioen", "pensioenregeling")],
            [_rel("pensioenregeling", "pensioenregeling"), _rel("pensioen", "pensioenregeling")],
        ),
        lambda d: d is None,
    ),
    (
        "caps keep the first 3 topics and 5 relations",
        _delta(
            [_topic(f"t-{i}", f"T {i}") for i in range(5)],
            [
                _rel(f"t-{i}", t, k)
                for i in range(3)
                for t in ("people-partner", "pensioenregeling")
                for k in ("related_to", "depends_on")
            ],
        ),
        lambda d: (
            d is not None
            and [t.id for t in d.topics] == ["t-0", "t-1", "t-2"]
            and len(d.relations) == 5
            and _triples(d)[0] == ("t-0", "people-partner", "related_to")
        ),
    ),
    (
        "relations to topics beyond the cap are dropped",
        _delta([_topic(f"t-{i}", f"T {i}") for i in range(4)], [_rel("t-3", "people-partner")]),
        lambda d: d is not None and d.relations == (),
    ),
    (
        "duplicate relations collapse to one",
        _delta(
            relations=[
                _rel("pensioenregeling", "people-partner"),
                _rel("pensioenregeling", "people-partner"),
                _rel(" Pensioenregeling ", "people-partner"),
            ]
        ),
        lambda d: d is not None and len(d.relations) == 1,
    ),
    ("missing reason", {"topics": [_topic("nieuw", "Nieuw")]}, lambda d: d is None),
    ("blank reason", _delta([_topic("nieuw", "Nieuw")], reason="   "), lambda d: d is None),
    (
        "topics is not a list",
        _delta(topics=None, relations=None) | {"topics": {"id": "x"}},
        lambda d: d is None,
    ),
    ("not a mapping at all", "voeg pensioen toe", lambda d: d is None),
    (
        "items that are not objects are skipped",
        _delta(["pensioen", 3], [None, "x"]),
        lambda d: d is None,
    ),
    (
        "only duplicates and nothing else",
        _delta([_topic("cfo-x", "People Partner")]),
        lambda d: d is None,
    ),
]


@pytest.mark.parametrize(("name", "delta", "check"), CASES, ids=[c[0] for c in CASES])
def test_validate_delta_table(name: str, delta: Any, check: Check) -> None:
    before = copy.deepcopy(delta)
    result = validate_delta(delta, KB)
    assert check(result), f"{name}: got {result!r}"
    assert delta == before, "validate_delta must not mutate its input"
    if result is not None:
        # Whatever comes out is itself a valid delta and stable under re-validation.
        assert GraphDelta.model_validate(result.model_dump()) == result
        assert validate_delta(result, [*KB]) == result


def test_accepts_a_graph_delta_instance() -> None:
    delta = GraphDelta(
        reason="ontbreekt",
        topics=[{"id": "geboorteverlof", "label": "Geboorteverlof", "type": "process"}],
        relations=[
            {"source": "geboorteverlof", "target": "ouderschapsverlof", "type": "related_to"}
        ],
    )
    assert validate_delta(delta, KB) == delta
    kb_with_it = [*KB, KbTopic("geboorteverlof", "Geboorteverlof", "process")]
    cleaned = validate_delta(delta, kb_with_it)
    assert cleaned is not None and cleaned.topics == () and len(cleaned.relations) == 1


def test_the_model_enforces_the_contract() -> None:
    with pytest.raises(ValidationError):
        GraphDelta(
            reason="x", topics=[{"id": f"t-{i}", "label": "T", "type": "concept"} for i in range(4)]
        )
    with pytest.raises(ValidationError):
        GraphDelta(reason="x", relations=[{"source": "a", "target": "b", "type": "executes"}])
    with pytest.raises(ValidationError):
        GraphDelta(reason="", topics=[])
    with pytest.raises(ValidationError):
        GraphDelta(reason="x", topics=[{"id": "Bad Id", "label": "T", "type": "concept"}])
    schema = GraphDelta.model_json_schema()
    assert schema["properties"]["topics"]["maxItems"] == 3
    assert schema["properties"]["relations"]["maxItems"] == 5


def test_long_fields_are_trimmed_not_rejected() -> None:
    delta = _delta([_topic("lang", "Lang", description="x" * 5000)], reason="r" * 5000)
    result = validate_delta(delta, KB)
    assert result is not None
    assert len(result.reason) <= 1000 and len(result.topics[0].description) <= 2000


def test_kb_may_be_given_as_a_mapping() -> None:
    by_id = {t.id: t for t in KB}
    delta = _delta([_topic("pensioenregeling", "Pensioen")], [_rel("pensioenregeling", "cfo-x")])
    assert validate_delta(delta, by_id) is None
