"""Domain model validation: ids, vocabularies, questions, timestamps, weeks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from shared.errors import BadInputError
from shared.store import (
    QuizAttempt,
    QuizQuestion,
    Relation,
    Source,
    Suggestion,
    Topic,
    iso_week,
    normalise_question_key,
)
from shared.store._common import build, describe_validation, normalise_time


@pytest.mark.parametrize("tid", ["scrum", "product-owner", "okr-2026", "a1-b2-c3"])
def test_kebab_ids_accepted(tid: str) -> None:
    assert Topic(id=tid, label="x", type="concept").id == tid


@pytest.mark.parametrize(
    "tid", ["Scrum", "product_owner", "-lead", "trail-", "a--b", "", "één", "a b"]
)
def test_non_kebab_ids_rejected(tid: str) -> None:
    with pytest.raises(ValidationError) as info:
        Topic(id=tid, label="x", type="concept")
    assert describe_validation(info.value) == f"id: {tid!r} is not a lowercase kebab-case id " + (
        "(letters a-z, digits, single hyphens)"
    )


def test_topic_vocabularies_and_defaults() -> None:
    topic = Topic(id="a", label="  A  ", type="role")
    assert (topic.label, topic.learning_relevance, topic.relevance_locked) == (
        "A",
        "standard",
        False,
    )
    with pytest.raises(ValidationError):
        Topic(id="a", label="A", type="person")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Topic(id="a", label="A", type="role", learning_relevance="vital")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Topic(id="a", label="   ", type="role")
    with pytest.raises(ValidationError, match="Extra inputs"):
        Topic.model_validate({"id": "a", "label": "A", "type": "role", "colour": "red"})


def test_relation_rules() -> None:
    with pytest.raises(ValidationError, match="itself"):
        Relation(source="a", target="a", type="related_to")
    with pytest.raises(ValidationError):
        Relation(source="a", target="b", type="executes")  # type: ignore[arg-type]
    assert Relation(source="a", target="b", type="executed_by").key.as_tuple() == (
        "a",
        "b",
        "executed_by",
    )


def test_question_key_and_answer_range() -> None:
    question = QuizQuestion(text="Wát is  een Sprint?!", options=["a", "b"], correct_index=1)
    assert question.key == "wat is een sprint" == normalise_question_key(" wat IS een sprint ")
    assert question.difficulty == "medium"
    with pytest.raises(ValidationError, match="out of range"):
        QuizQuestion(text="Q?", options=["a", "b"], correct_index=2)
    with pytest.raises(ValidationError):
        QuizQuestion(text="Q?", options=["only one"], correct_index=0)
    with pytest.raises(ValidationError, match="no letters"):
        QuizQuestion(text="?!", options=["a", "b"], correct_index=0)


def test_timestamps_are_utc_milliseconds() -> None:
    amsterdam = timezone(timedelta(hours=1))
    moment = normalise_time(datetime(2026, 3, 2, 10, 0, 0, 123456, tzinfo=amsterdam))
    assert moment == datetime(2026, 3, 2, 9, 0, 0, 123000, tzinfo=UTC)
    assert normalise_time(datetime(2026, 3, 2, 9, 0)).tzinfo is UTC  # naive means UTC
    source = Source(
        id="s", name="n", sha256="0" * 64, created_at=datetime(2026, 1, 1, 0, 0, 0, 999999)
    )
    assert source.created_at == datetime(2026, 1, 1, 0, 0, 0, 999000, tzinfo=UTC)


def test_weeks() -> None:
    assert iso_week(datetime(2026, 1, 1, tzinfo=UTC)) == "2026-W01"
    assert iso_week(datetime(2027, 1, 1, tzinfo=UTC)) == "2026-W53"
    with pytest.raises(ValidationError, match="ISO week"):
        QuizAttempt(id="a", user="u", week="2026-10", question_keys=["k"])


def test_build_turns_validation_into_bad_input() -> None:
    with pytest.raises(BadInputError, match="sha256"):
        build(Source, id="s", name="n", sha256="not-a-hash")
    with pytest.raises(BadInputError, match="non-empty delta"):
        build(Suggestion, id="s", delta={}, proposed_by="U1")
