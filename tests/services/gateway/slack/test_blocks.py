"""Every Block Kit builder stays within Slack's limits, even with oversized input."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.gateway.core.models import (
    Diagnostics,
    GraphView,
    HomeData,
    Leaderboards,
    Progress,
    WeeklyTopic,
)
from services.gateway.core.quiz import QuestionView
from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.blocks import chat as bc
from services.gateway.slack.blocks import kit
from services.gateway.slack.blocks import learn as bl
from services.gateway.slack.blocks import quiz as bq
from services.gateway.slack.blocks import reviews as br
from services.gateway.slack.blocks.home import home_view
from services.gateway.slack.blocks.kit import (
    MAX_SECTION_TEXT,
    block_problems,
    check_blocks,
    chunk_blocks,
    escape,
    split_text,
    strip_mentions,
    to_mrkdwn,
)
from shared.bus import ChatReply, KbDelta, Proposal, Relation, SourceRef, Topic
from shared.errors import BadInputError
from shared.store import (
    CallAggregate,
    LeaderboardEntry,
    LlmCall,
    QuizAttempt,
    Source,
    Suggestion,
)
from shared.store import Topic as StoreTopic

HUGE = ("Lorem ipsum dolor sit amet " * 2000).strip()  # ~54k chars
LONG_WORD = "x" * 10_000
DELTA = KbDelta(
    reason=HUGE[:4000],
    topics=[
        Topic(id=f"t-{i}", label=HUGE[:300], type="concept", description=HUGE[:8000])
        for i in range(40)
    ],
    relations=[
        Relation(source=f"t-{i}", target=f"t-{i + 1}", type="related_to") for i in range(60)
    ],
)


def ok(blocks, *, max_blocks: int = 50) -> None:
    assert block_problems(blocks, max_blocks=max_blocks) == []


def test_answer_messages_split_long_answers() -> None:
    reply = ChatReply(
        text=HUGE + "\n\n" + LONG_WORD,
        sources=[SourceRef(id=f"s{i}", label=HUGE[:200]) for i in range(50)],
        proposal=Proposal(id="p" * 200, delta=DELTA, summary=HUGE[:3000]),
        offline=True,
    )
    messages = bc.answer_messages(reply, turn_id="t" * 200)
    assert len(messages) > 1
    for blocks in messages:
        ok(blocks)
    shown = "".join(b["text"]["text"] for m in messages for b in m if b["type"] == "section")
    assert shown.count("Lorem") >= HUGE.count("Lorem")  # nothing of the answer is lost
    assert shown.count("x") >= len(LONG_WORD)


def test_chat_builders_within_limits() -> None:
    ok(bc.thinking_blocks())
    ok(bc.proposal_blocks(HUGE, proposal_id="p1"))
    review = br.review_blocks(suggestion_id="s" * 200, delta=DELTA, proposed_by="U1", summary=HUGE)
    ok(review)
    ok(br.card_outcome(review, br.stored_line(Suggestion(
        id="s", delta={"reason": "x"}, proposed_by="U1", status="approved", decided_by="UADMIN",
        decided_at=datetime.now(UTC),
    ))))  # fmt: skip
    ok(bc.proposal_outcome(bc.proposal_blocks("x", proposal_id="p"), status="weird", user_id="U1"))
    ok(kit.notice_blocks(HUGE))


def test_learn_builders_within_limits() -> None:
    article = {
        "title": HUGE[:500],
        "intro": HUGE,
        "key_takeaways": [HUGE[:200]] * 30,
        "sections": [{"heading": HUGE[:300], "body": HUGE} for _ in range(10)],
    }
    ok(bl.article_blocks(article, topic_id="t", week="2026-W48", admin=True))
    deck = {
        "title": HUGE[:300],
        "slides": [
            {"title": HUGE[:300], "bullets": [HUGE[:500]] * 20, "speaker_note": HUGE}
            for _ in range(12)
        ],
    }
    for i in (-5, 0, 5, 11, 99):
        ok(bl.slide_blocks(deck, topic_id="t", index=i))
    ok(bl.slide_blocks({"slides": []}, topic_id="t", index=0))
    info = {
        "headline": HUGE[:300],
        "tagline": HUGE,
        "quote": HUGE,
        "stats": [{"value": HUGE[:50], "label": HUGE[:300]}] * 20,
        "steps": [{"number": i, "text": HUGE[:300]} for i in range(20)],
    }
    ok(bl.infographic_blocks(info, topic_id="t"))
    ok(bl.infographic_blocks(info, topic_id="t", with_image=True))
    ok(bl.refine_modal(topic_id="t" * 200, channel="C1")["blocks"], max_blocks=100)
    ok(bl.content_pending_blocks(label=HUGE[:300], kind="article"))


def test_quiz_builders_within_limits() -> None:
    q = QuestionView(index=2, count=10, text=HUGE[:3000], options=tuple([HUGE[:300]] * 4))
    question = bq.question_blocks(q, attempt_id="a" * 200)
    ok(question)
    ok(
        bq.verdict_blocks(
            shown=question, choice=0, correct=False, correct_index=3, explanation=HUGE
        )
    )
    ok(bq.final_blocks(score=7, count=10, week="2026-W48"))
    ok(bq.quiz_unavailable_blocks(HUGE))
    entries = [LeaderboardEntry(rank=i, user=f"U{i:08d}", points=100 - i) for i in range(1, 200)]
    ok(bq.leaderboard_blocks(week="2026-W48", weekly=entries, all_time=entries, me="U00000001"))


def test_admin_and_home_builders_within_limits() -> None:
    sources = [
        Source(id=f"src-{i}", name=HUGE[:400], sha256="a" * 64, status="failed", error=HUGE)
        for i in range(120)
    ]
    ok(ba.sources_blocks(sources, admin=True))
    suggestions = [
        Suggestion(id=f"sug-{i}", delta=DELTA.model_dump(mode="json"), proposed_by="U1")
        for i in range(40)
    ]
    ok(br.suggestions_blocks(suggestions))
    long_ids = [
        s.model_copy(update={"id": f"{i:03d}" + "x" * 190}) for i, s in enumerate(suggestions)
    ]
    listed = br.suggestions_blocks(long_ids)
    ok(listed)  # every row's value carries the list's ids: fewer rows fit, all within 2000
    assert 0 < sum(b["type"] == "actions" for b in listed) < 16
    call = LlmCall(
        id="c", task=HUGE[:100], model="m", tier="fast", duration_ms=1.0, ok=False, error_msg=HUGE
    )
    agg = CallAggregate(
        key=HUGE[:100],
        calls=1,
        errors=0,
        input_tokens=1,
        output_tokens=1,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
        cost_usd=0.5,
        duration_ms_total=1.0,
    )
    ok(
        ba.diagnostics_blocks(
            Diagnostics(
                recent=[call] * 40,
                by_task=[agg] * 40,
                week_calls=1,
                week_errors=0,
                week_cost_usd=0.5,
                total_calls=1,
            )
        )
    )
    topic = StoreTopic(id="t", label=HUGE[:200], type="concept", description=HUGE)
    others = [StoreTopic(id=f"n-{i}", label=HUGE[:200], type="role") for i in range(60)]
    ok(
        ba.graph_blocks(
            GraphView(
                topic=topic,
                neighbours=[("related_to", i % 2 == 0, n) for i, n in enumerate(others)],
            )
        )
    )
    ok(ba.ingest_modal(channel="C1")["blocks"], max_blocks=100)
    for p in (
        Progress("running", 3, 10),
        Progress("completed", 10, 10, 5, 2, 9),
        Progress("failed", error=HUGE),
        Progress("cancelled"),
    ):
        ok(ba.progress_blocks(HUGE[:500], p))
    ok(ba.help_blocks())
    boards = Leaderboards(week="2026-W48", weekly=[], all_time=[])
    attempt = QuizAttempt(id="a", user="U1", week="2026-W48", question_keys=["q"] * 10)
    data = HomeData(
        weekly=WeeklyTopic("2026-W48", "t", HUGE[:200]),
        attempt=attempt,
        week_points=3,
        leaderboards=boards,
        pending=suggestions,
        running=sources,
        week_cost_usd=1.5,
    )
    ok(home_view(data, user_id="U1")["blocks"], max_blocks=100)


def test_check_blocks_names_each_problem() -> None:
    too_many = [kit.section("x")] * 51
    with pytest.raises(BadInputError, match="51 blocks"):
        check_blocks(too_many)
    with pytest.raises(BadInputError, match="3001 chars"):
        check_blocks([{"type": "section", "text": {"type": "mrkdwn", "text": "y" * 3001}}])
    bad_button = {
        "type": "actions",
        "elements": [
            {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "z" * 80}},
            {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "ok"}},
        ],
    }
    problems = block_problems([bad_button, {"type": "image", "image_url": "http://x"}])
    assert any("button text" in p for p in problems)
    assert any("duplicate action_id" in p for p in problems)
    assert any("alt_text" in p for p in problems)
    assert check_blocks([kit.section("fine")]) == [kit.section("fine")]


def test_split_and_chunk_keep_every_character() -> None:
    text = "\n\n".join(["alinea " * 200] * 10) + LONG_WORD
    pieces = split_text(text, 1000)
    assert all(len(p) <= 1000 for p in pieces)
    assert "".join(pieces).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )
    blocks = [kit.section("a" * 2900) for _ in range(20)]
    chunks = chunk_blocks(blocks)
    assert sum(len(c) for c in chunks) == 20 and all(len(c) <= 4 for c in chunks)
    assert split_text("   ") == []


def test_text_helpers() -> None:
    assert escape("a < b & c > d") == "a &lt; b &amp; c &gt; d"
    md = "# Titel\nZie **dit** en [de site](https://example.org).\n- punt"
    assert to_mrkdwn(md) == "*Titel*\nZie *dit* en <https://example.org|de site>.\n• punt"
    assert strip_mentions("<@U123ABC> hoi <@U999|naam>") == "hoi"
    assert MAX_SECTION_TEXT == 3000
    assert datetime.now(UTC)  # timezone-aware clocks only
