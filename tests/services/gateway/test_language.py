"""Slack and Teams speak Dutch: no stored enum value (status, type, relation) reaches a reader.

Every renderer that shows a status or a type is fed every value of its enum (taken from the
models, so a new value is checked too) and the texts people read are scanned for the raw
English identifiers. Ids in `code` and mentions are left out: those are data, not words.
"""

from __future__ import annotations

import json
import re
from typing import Any, get_args

from services.gateway.core.insights import FeedbackReport, Gap, TopicRate, WeekTotal
from services.gateway.core.models import GraphView
from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.blocks import chat as bc
from services.gateway.slack.blocks import reviews as br
from services.gateway.slack.blocks.feedback import feedback_home_blocks
from services.gateway.teams import views as tv
from shared.bus import ChatReply, KbDelta, ProposalDecisionReply, Relation, SourceRef, Topic
from shared.store import Source
from shared.store import Topic as StoreTopic
from shared.store.models import (
    LearningRelevance,
    RelationType,
    SourceStatus,
    SuggestionStatus,
    TopicType,
)
from shared.store.models_learning import AttemptStatus, Difficulty

PROPOSAL_STATUSES = get_args(ProposalDecisionReply.model_fields["status"].annotation)
DUTCH_TOO = {"concept"}  # an English value that is also the Dutch word
ENUM_WORDS = sorted(
    {
        *get_args(SourceStatus), *get_args(SuggestionStatus), *get_args(TopicType),
        *get_args(RelationType), *get_args(AttemptStatus), *get_args(Difficulty),
        *get_args(LearningRelevance),
        *PROPOSAL_STATUSES, "chunks", "topics", "relations", "reason",
    } - DUTCH_TOO
)  # fmt: skip
_NOT_WORDS = re.compile(r"`[^`]*`|<@[^>]+>|:[a-z_]+:")


def readable_texts(payload: Any) -> list[str]:
    """Every text a person reads in blocks or an Adaptive Card (not ids, values, urls)."""
    found: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k not in ("value", "action_id", "block_id", "url", "callback_id", "data"):
                    walk(v, k)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key in ("text", "title", "label", ""):
            found.append(node)

    walk(payload)
    return found


def leaks(payload: Any) -> list[str]:
    """The enum identifiers found in the readable texts."""
    hits = []
    for text in readable_texts(payload):
        words = _NOT_WORDS.sub(" ", text)
        hits += [w for w in ENUM_WORDS if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", words)]
    return hits


def every_type_delta() -> KbDelta:
    relevance = get_args(LearningRelevance)
    topics = [
        Topic(
            id=f"t-{kind}-{level}",
            label=f"Onderwerp {i}",
            type=kind,
            description="Iets.",
            learning_relevance=level,
        )
        for i, (kind, level) in enumerate((k, lv) for k in get_args(TopicType) for lv in relevance)
    ]
    relations = [
        Relation(source="t-concept-core", target="t-role-core", type=kind)
        for kind in get_args(RelationType)
    ]
    return KbDelta(reason="Ontbreekt nog", topics=topics, relations=relations)


def test_the_scanner_catches_a_raw_status() -> None:
    assert leaks([{"type": "section", "text": {"type": "mrkdwn", "text": "Voorstel: applied"}}])
    assert not leaks([{"type": "context", "elements": [{"text": "`pending_review` is een id"}]}])


def test_slack_chat_and_review_blocks_translate_every_status_and_type() -> None:
    reply = ChatReply(text="Antwoord", sources=[SourceRef(id="verlof", label="Verlof")])
    (message,) = bc.answer_messages(reply, turn_id="t1")
    for status in (*PROPOSAL_STATUSES, "something_new"):
        outcome = bc.proposal_outcome([*message, bc.proposal_blocks("x", proposal_id="p")[1]],
                                      status=status, user_id="U1")  # fmt: skip
        assert leaks(outcome) == [], status
    delta = every_type_delta()
    assert leaks(br.review_blocks(suggestion_id="s1", delta=delta, proposed_by="U1")) == []


def test_slack_admin_views_translate_source_statuses_and_relation_types() -> None:
    sources = [
        Source(
            id=f"s-{status}",
            name=f"bron-{status}.md",
            sha256="a" * 64,
            status=status,
            chunks_done=1,
            chunks_total=2,
        )
        for status in get_args(SourceStatus)
    ]
    assert leaks(ba.sources_blocks(sources, admin=True)) == []
    for kind in get_args(TopicType):
        topic = StoreTopic(id="t", label="Onderwerp", type=kind, description="Iets.")
        other = StoreTopic(id="n", label="Buur", type="role")
        neighbours = [(rel, i % 2 == 0, other) for i, rel in enumerate(get_args(RelationType))]
        assert leaks(ba.graph_blocks(GraphView(topic=topic, neighbours=neighbours))) == [], kind


def test_the_feedback_digest_is_dutch() -> None:
    report = FeedbackReport(
        weeks=[WeekTotal("2026-W49", 3, 1)],
        topics=[TopicRate("2026-W49", "verlof", "Verlof", 1, 1)],
        gaps=[
            Gap(question="Mag de hond mee?", count=2, last_at=None, reasons={"down", "unanswered"})
        ],
    )
    assert leaks(feedback_home_blocks(report)) == []


def test_teams_cards_translate_every_status() -> None:
    for status in (*PROPOSAL_STATUSES, "something_new"):
        card = tv.proposal_outcome_card("Antwoord", status)
        assert leaks(card) == [], (status, json.dumps(card))
    card = tv.review_card(suggestion_id="s1", delta=every_type_delta(), proposed_by="U1",
                          summary="")  # fmt: skip
    assert leaks(card) == [], json.dumps(card, ensure_ascii=False)
