"""/learn and the quiz in Teams: placeholders, bus requests, and the answer events' cards.

A request posts a placeholder card and carries {via: teams, conversation, activity} in its
reply_to; the answer event (content.ready, quiz.ready, quiz.scored) replaces that card
proactively. Clicks on quiz options are Action.Execute invokes: the invoke answer locks
the card at once (answer once), the verdict replaces it when quiz.scored arrives.
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_agents.activity import ConversationReference

from services.gateway.teams import cards, views
from services.gateway.teams import views_learn as vl
from services.gateway.teams.core import LETTERS, QuestionView, parse_question, user_message
from services.gateway.teams.surface import TeamsGateway
from shared.bus import ContentReady, ContentType, QuizReady, QuizScored
from shared.errors import BadInputError, R42Error

log = logging.getLogger(__name__)

KINDS: dict[str, ContentType] = {
    "article": "article",
    "slides": "slides",
    "infographic": "infographic",
}


async def learn(
    gw: TeamsGateway,
    *,
    ref: ConversationReference,
    user: str,
    kind: ContentType,
    topic_id: str | None = None,
) -> None:
    """Placeholder card, then content.requested (content.ready replaces the placeholder)."""
    try:
        weekly = await gw.client.learning.weekly_topic(user)
        topic_id = topic_id or weekly.topic_id
        topic = await gw.client.learning.topic(topic_id)
    except R42Error as exc:
        await gw.notify(ref, user_message(exc))
        return
    placeholder = await gw.post(
        ref, vl.pending_card(label=topic.label, kind=kind), summary="Even geduld…"
    )
    await gw.client.learning.request_content(
        user_id=user,
        topic_id=topic_id,
        kind=kind,
        reply_to=gw.reply_to(
            conversation=ref.conversation.id, user=user, activity=placeholder, week=weekly.week
        ),
    )


async def content_card(
    gw: TeamsGateway, *, topic_id: str, kind: str, week: str, slide: int = 0
) -> tuple[cards.Card, list[dict[str, Any]]]:
    """The stored content of a topic as a card (plus the infographic image attachment)."""
    content = await gw.client.learning.content(topic_id)
    kind = "article" if kind == "all" else kind
    part = getattr(content, kind, None) if content is not None else None
    if not isinstance(part, dict):
        return cards.notice("Deze inhoud is er (nog) niet."), []
    if kind == "article":
        return vl.article_card(part, topic_id=topic_id, week=week or "-"), []
    if kind == "slides":
        return vl.slide_card(part, topic_id=topic_id, index=slide), []
    image = vl.infographic_image(part)
    return vl.infographic_card(part, topic_id=topic_id, with_image=image is not None), [
        image
    ] if image else []


async def on_content_ready(gw: TeamsGateway, event: ContentReady) -> None:
    """Replace the placeholder with the article, the first slide or the infographic."""
    rt = event.reply_to
    ref = await gw.ref_for(rt)
    if ref is None:
        return
    extra: list[dict[str, Any]]
    if not event.ok:
        card, extra = (
            cards.notice(f"De inhoud kon niet worden gemaakt: {event.error or '?'}", warning=True),
            [],
        )
    else:
        card, extra = await content_card(
            gw, topic_id=event.topic_id, kind=event.content_type, week=str(rt.get("week", ""))
        )
    activity = rt.get("activity")
    if extra or not isinstance(activity, str):  # an image cannot go into an updated card
        await gw.post(ref, card, summary="Leren", extra=extra)
    else:
        await gw.replace(ref, activity, card, summary="Leren")


async def slide(gw: TeamsGateway, *, data: dict[str, Any]) -> dict[str, Any]:
    """Previous / next: the invoke answer is the neighbouring slide (the card refreshes)."""
    topic, index = data.get("topic"), data.get("i")
    if not isinstance(topic, str) or not isinstance(index, int) or index < 0:
        return cards.invoke_message("Deze knop is ongeldig.")
    card, _ = await content_card(gw, topic_id=topic, kind="slides", week="", slide=index)
    return cards.invoke_card(card)


async def open_format(
    gw: TeamsGateway, *, ref: ConversationReference, user: str, data: dict[str, Any]
) -> dict[str, Any]:
    """Another format of the same topic: a new placeholder and request."""
    kind, topic = data.get("kind"), data.get("topic")
    if kind not in KINDS or not isinstance(topic, str):
        return cards.invoke_message("Deze knop is ongeldig.")
    gw.background.spawn(
        learn(gw, ref=ref, user=user, kind=KINDS[kind], topic_id=topic), name="teams-learn"
    )
    return cards.invoke_message("Komt eraan…")


# -- quiz ---------------------------------------------------------------------------------


async def start_quiz(gw: TeamsGateway, *, ref: ConversationReference, user: str) -> None:
    """A placeholder, then quiz.requested (quiz.ready replaces it with the first question)."""
    placeholder = await gw.post(ref, cards.notice("De quiz wordt klaargezet…"), summary="Quiz")
    try:
        await gw.client.quiz.start(
            user_id=user,
            reply_to=gw.reply_to(conversation=ref.conversation.id, user=user, activity=placeholder),
        )
    except Exception as exc:
        await gw.replace(ref, placeholder, cards.notice(user_message(exc), warning=True))


async def on_quiz_ready(gw: TeamsGateway, event: QuizReady) -> None:
    """The first (or current) question, or why the quiz could not start."""
    rt = event.reply_to
    ref = await gw.ref_for(rt)
    activity = rt.get("activity")
    if ref is None or not isinstance(activity, str):
        return
    if not event.ok or not event.attempt_id:
        await gw.replace(
            ref, activity, cards.notice(event.error or "De quiz kon niet starten.", warning=True)
        )
        return
    try:
        q = parse_question(event.question)
    except BadInputError as exc:
        await gw.replace(ref, activity, cards.notice(str(exc), warning=True))
        return
    await gw.replace(
        ref,
        activity,
        vl.question_card(q, attempt_id=event.attempt_id),
        summary=f"Vraag {q.index + 1}/{q.count}",
    )


async def answer(
    gw: TeamsGateway,
    *,
    ref: ConversationReference,
    user: str,
    data: dict[str, Any],
    card_activity: str | None,
    question: dict[str, Any],
) -> dict[str, Any]:
    """A click on an option: publish quiz.answered and lock the card (the verdict follows)."""
    attempt, q_index, choice = data.get("a"), data.get("q"), data.get("c")
    if (
        not isinstance(attempt, str)
        or not isinstance(q_index, int)
        or not isinstance(choice, int)
        or not 0 <= choice < len(LETTERS)
    ):
        return cards.invoke_message("Deze knop is ongeldig.")
    try:
        q = parse_question(question)
    except BadInputError:
        q = QuestionView(q_index, q_index + 1, "Vraag", tuple(LETTERS[: max(choice + 1, 2)]))
    try:
        await gw.client.quiz.answer(
            attempt_id=attempt,
            user_id=user,
            question_index=q_index,
            choice_index=choice,
            reply_to=gw.reply_to(
                conversation=ref.conversation.id,
                user=user,
                activity=card_activity,
                choice=choice,
                question={
                    "index": q.index,
                    "count": q.count,
                    "text": q.text,
                    "options": list(q.options),
                },
            ),
        )
    except Exception as exc:
        return cards.invoke_message(user_message(exc))
    return cards.invoke_card(vl.locked_card(q, choice=choice))


async def on_quiz_scored(gw: TeamsGateway, event: QuizScored) -> None:
    """Verdict and explanation on the answered card, then the next question or the score."""
    rt = event.reply_to
    ref = await gw.ref_for(rt)
    if ref is None or event.duplicate:
        return  # a duplicate was scored before: its card already shows the outcome
    activity = rt.get("activity") if isinstance(rt.get("activity"), str) else None
    if event.error:
        await gw.notify(ref, f"Dit antwoord telt niet: {event.error}", warning=True)
        return
    try:
        q = parse_question(rt.get("question"), count=event.question_count)
    except BadInputError:
        q = QuestionView(event.question_index, event.question_count, "Vraag", ("?", "?"))
    choice = rt.get("choice") if isinstance(rt.get("choice"), int) else None
    verdict = vl.verdict_card(
        q,
        choice=choice,
        correct=event.correct,
        correct_index=event.correct_index,
        explanation=event.explanation,
    )
    if activity:
        await gw.replace(ref, activity, verdict, summary="Goed!" if event.correct else "Helaas.")
    else:
        await gw.post(ref, verdict)
    if event.finished:
        await gw.post(
            ref,
            vl.final_card(score=event.score, count=event.question_count, week=event.week),
            summary="Score",
        )
        return
    if event.next_question is None:
        return
    try:
        nxt = parse_question(event.next_question, count=event.question_count)
    except BadInputError as exc:
        await gw.notify(ref, f"De volgende vraag is onleesbaar: {exc}", warning=True)
        return
    await gw.post(
        ref,
        vl.question_card(nxt, attempt_id=event.attempt_id),
        summary=f"Vraag {nxt.index + 1}/{nxt.count}",
    )


async def leaderboard(gw: TeamsGateway) -> cards.Card:
    """The ranking card."""
    return views.leaderboard_card(await gw.client.quiz.leaderboards(limit=10))
