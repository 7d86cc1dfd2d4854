"""Natural requests to add a topic: what they ask for, and what they do not."""

from __future__ import annotations

import pytest

from services.r42.intent import topic_request
from services.r42.offline import missing_topic_delta
from shared.kb import validate_delta
from tests.services.r42.conftest import TOPICS


@pytest.mark.parametrize(
    ("message", "label", "kind", "description"),
    [
        ("Kun je een onderwerp toevoegen over thuiswerken?", "Thuiswerken", "concept", ""),
        ("Kun je een onderwerp over thuiswerken toevoegen? Iedereen mag twee dagen per week "
         "thuis werken.", "Thuiswerken", "concept",
         "Iedereen mag twee dagen per week thuis werken."),
        ("Voeg een onderwerp toe over de fietsregeling", "Fietsregeling", "concept", ""),
        ("voeg het proces Declaraties goedkeuren toe.", "Declaraties goedkeuren", "process", ""),
        ("Voeg toe dat de fietsvergoeding 23 cent per kilometer is.", "Fietsvergoeding",
         "concept", "De fietsvergoeding is 23 cent per kilometer."),
        ("Kun je toevoegen dat het kantoor op vrijdag dicht is?", "Kantoor", "concept",
         "Het kantoor is op vrijdag dicht."),
        ("Voeg toe dat we op vrijdag een borrel hebben", "Borrel", "concept",
         "We hebben op vrijdag een borrel."),
        ("Can you add a topic about remote work?", "Remote work", "concept", ""),
        ("Please add a role called Scrum Master to the knowledge graph.", "Scrum Master", "role",
         ""),
        ("Add that the office closes at six.", "Office", "concept", "The office closes at six."),
    ],
)  # fmt: skip
def test_a_natural_request_names_what_to_add(
    message: str, label: str, kind: str, description: str
) -> None:
    request = topic_request(message)
    assert request is not None
    assert (request.label, request.type, request.description) == (label, kind, description)


@pytest.mark.parametrize(
    "message",
    [
        "Kun je het proces voor verlof uitleggen?",
        "How do I add a process for expenses?",
        "Hoe voeg ik een proces toe?",
        "Wat is de rol van de product owner?",
        "Hoe vraag ik verlof aan?",
        "Kun je iets vertellen over declaraties?",
    ],
)
def test_questions_are_not_requests(message: str) -> None:
    assert topic_request(message) is None


def test_a_request_becomes_a_valid_delta() -> None:
    delta = missing_topic_delta(
        "Kun je een onderwerp toevoegen over reiskosten? Die gaan net als declaraties via de bon.",
        None,
    )
    assert delta is not None
    valid = validate_delta(delta, TOPICS)
    assert valid is not None
    assert [t.id for t in valid.topics] == ["reiskosten"]
    assert "reiskosten" in valid.reason.lower()


def test_a_request_for_a_topic_that_exists_proposes_nothing() -> None:
    delta = missing_topic_delta("Voeg een onderwerp toe over declaraties", None)
    assert delta is not None and validate_delta(delta, TOPICS) is None
