"""The quiz in a DM: one question at a time, right / wrong with the explanation, the score."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from services.gateway.core import user_message
from services.gateway.core.quiz import LETTERS, parse_question, progress
from services.gateway.slack import ids
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import quiz as bq
from services.gateway.slack.blocks.kit import context, escape, notice_blocks
from services.gateway.slack.gateway import SlackGateway
from shared.bus import QuizReady, QuizScored
from shared.errors import BadInputError, is_transient
from shared.store import QuizAttempt

log = logging.getLogger(__name__)

PREPARING = "De quiz wordt klaargezet…"
Respond = Callable[[Blocks, str], Awaitable[None]]


async def start_quiz(gw: SlackGateway, *, user: str) -> None:
    """Open the user's DM with a placeholder and ask the quiz service for the week's quiz."""
    channel = await gw.api.dm_channel(user)
    ts = await gw.api.post(
        channel, notice_blocks(f":hourglass_flowing_sand: _{PREPARING}_"), text=PREPARING
    )
    try:
        await gw.client.quiz.start(
            user_id=user, reply_to=gw.reply_to(channel=channel, user=user, ts=ts)
        )
    except Exception as exc:
        text = user_message(exc)
        await gw.api.update(channel, ts, bq.quiz_unavailable_blocks(text), text=text)


async def on_quiz_ready(gw: SlackGateway, event: QuizReady) -> None:
    """Show the first (or current) question, or why the quiz could not start."""
    rt = event.reply_to
    channel, ts = rt.get("channel"), rt.get("ts")
    if not channel or not ts:
        log.warning("quiz.ready %s without a Slack message to update", event.event_id)
        return
    if not event.ok or not event.attempt_id:
        reason = event.error or "onbekende fout"
        blocks = bq.quiz_unavailable_blocks(reason, retry=True)
        await gw.api.update(channel, ts, blocks, text=reason)
        return
    try:
        q = parse_question(event.question)
    except BadInputError as exc:
        await gw.api.update(channel, ts, bq.quiz_unavailable_blocks(str(exc)), text=str(exc))
        return
    await gw.api.update(
        channel,
        ts,
        bq.question_blocks(q, attempt_id=event.attempt_id),
        text=progress(q.index, q.count),
    )


async def answer(
    gw: SlackGateway, *, user: str, value: str, channel: str, ts: str, message_blocks: Blocks
) -> None:
    """A click on an option: lock the buttons, then send quiz.answered (scored later)."""
    parsed = bq.parse_answer_value(value)
    if parsed is None:
        log.warning("malformed quiz answer value from %s: %r", user, value[:200])
        return
    attempt_id, q_index, choice = parsed
    question = [b for b in message_blocks if b.get("block_id") != ids.BLOCK_QUIZ_ACTIONS][:3]
    attempt = await gw.client.quiz.attempt(attempt_id)
    if attempt is None or attempt.user != user:
        await gw.api.ephemeral(channel, user, "Deze quiz is niet van jou.")
        return
    stale = _stale(attempt, q_index)
    if stale is None and not await gw.deduper.claim(f"quiz:{attempt_id}:{q_index}"):
        stale = "Je antwoord op deze vraag is al verstuurd — even kijken…"  # a double click
    if stale is not None:  # never a "Je koos …" that is not the answer that counts
        await gw.api.update(channel, ts, [*question, context(stale)], text=stale)
        return
    chosen = f"Je koos {LETTERS[choice]} — even kijken…"
    # Locked before publishing: the verdict may arrive before a later update would land.
    await gw.api.update(channel, ts, [*question, context(chosen)], text=chosen)
    try:
        await gw.client.quiz.answer(
            attempt_id=attempt_id,
            user_id=user,
            question_index=q_index,
            choice_index=choice,
            reply_to=gw.reply_to(channel=channel, user=user, ts=ts, shown=question, choice=choice),
        )
    except Exception as exc:
        if message_blocks and is_transient(exc):  # let the user try again
            await gw.api.update(channel, ts, message_blocks, text="Kies een antwoord")
        await gw.api.ephemeral(channel, user, user_message(exc))


def _stale(attempt: QuizAttempt, q_index: int) -> str | None:
    """What a click on an answered question or an ended quiz shows (None: a fresh click)."""
    stored = attempt.answers.get(q_index)
    letter = LETTERS[stored.choice] if stored is not None and stored.choice < 8 else None
    if attempt.status != "active":
        tail = f" Je koos {letter}." if letter else ""
        return f"Deze quiz is afgelopen.{tail}"
    if letter:
        return f"Je koos {letter}; dat antwoord telt."
    return None


async def stop_quiz(gw: SlackGateway, *, user: str, respond: Respond) -> None:
    """/quiz stop: abandon the running quiz (answered questions keep their points)."""
    stopped = await gw.client.quiz.stop(user_id=user)
    text = (
        "Je quiz is gestopt. Je punten voor beantwoorde vragen blijven staan."
        if stopped
        else "Je hebt geen lopende quiz."
    )
    await respond(notice_blocks(text), text)


async def on_quiz_scored(gw: SlackGateway, event: QuizScored) -> None:
    """Right / wrong and why on the answered question, then the next question or the score."""
    rt = event.reply_to
    channel, ts = rt.get("channel"), rt.get("ts")
    if not channel:
        log.warning("quiz.scored %s without a Slack channel", event.event_id)
        return
    if event.duplicate:
        return  # scored before: its message already shows the outcome
    if event.error:
        text = f":warning: Dit antwoord telt niet: {escape(event.error)}"
        if ts:
            await gw.api.update(channel, ts, notice_blocks(text), text=text)
        else:
            await gw.notify(channel, text)
        return
    shown = [b for b in rt.get("shown") or [] if isinstance(b, dict)]
    choice = rt.get("choice") if isinstance(rt.get("choice"), int) else None
    blocks = bq.verdict_blocks(
        shown=shown,
        choice=choice,
        correct=event.correct,
        correct_index=event.correct_index,
        explanation=event.explanation,
    )
    verdict = "Goed!" if event.correct else "Helaas."
    if ts:
        await gw.api.update(channel, ts, blocks, text=verdict)
    else:
        await gw.api.post(channel, blocks, text=verdict)
    if event.finished:
        await gw.api.post(
            channel,
            bq.final_blocks(score=event.score, count=event.question_count, week=event.week),
            text=f"Je hebt {event.score} van de {event.question_count} vragen goed",
        )
        return
    if event.next_question is None:
        return
    try:
        nxt = parse_question(event.next_question, count=event.question_count)
    except BadInputError as exc:
        await gw.notify(channel, f":warning: De volgende vraag is onleesbaar: {exc}")
        return
    await gw.api.post(
        channel,
        bq.question_blocks(nxt, attempt_id=event.attempt_id),
        text=progress(nxt.index, nxt.count),
    )


async def leaderboard_command(gw: SlackGateway, *, user: str, respond: Respond) -> None:
    """/leaderboard: weekly and all-time."""
    boards = await gw.client.quiz.leaderboards()
    blocks = bq.leaderboard_blocks(
        week=boards.week, weekly=boards.weekly, all_time=boards.all_time, me=user
    )
    await respond(blocks, "Ranglijst")
