"""Block Kit for /quiz and /leaderboard: one question at a time, feedback, score, rankings."""

from __future__ import annotations

import json
from collections.abc import Sequence

from slack_sdk.models.blocks import ActionsBlock

from services.gateway.core.quiz import LETTERS, QuestionView, progress
from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import (
    Blocks,
    button,
    context,
    escape,
    header,
    mention,
    section,
    truncate,
)
from shared.bus.quiz_rpc import BankRegenerateReply
from shared.store import LeaderboardEntry

MEDALS = {1: ":first_place_medal:", 2: ":second_place_medal:", 3: ":third_place_medal:"}


def answer_value(attempt_id: str, question_index: int, choice: int) -> str:
    """The button value of one answer option."""
    return json.dumps({"a": attempt_id, "q": question_index, "c": choice}, separators=(",", ":"))


def parse_answer_value(value: str) -> tuple[str, int, int] | None:
    """(attempt id, question index, choice) from a button value; None when malformed."""
    try:
        data = json.loads(value)
        attempt, q, c = data["a"], data["q"], data["c"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(attempt, str) and attempt and isinstance(q, int) and isinstance(c, int)):
        return None
    if q < 0 or not 0 <= c < len(LETTERS):
        return None
    return attempt, q, c


def _options_text(q: QuestionView) -> str:
    return "\n".join(f"*{LETTERS[i]}.* {escape(truncate(o, 300))}" for i, o in enumerate(q.options))


def question_blocks(q: QuestionView, *, attempt_id: str) -> Blocks:
    """A question with its options and one button per option."""
    text = f"*{progress(q.index, q.count).capitalize()}*\n{escape(q.text)}\n\n{_options_text(q)}"
    buttons = [
        button(
            truncate(f"{LETTERS[i]} · {o}", 75),
            f"{ids.QUIZ_ANSWER_PREFIX}{i}",
            answer_value(attempt_id, q.index, i),
        )
        for i, o in enumerate(q.options)
    ]
    return [
        section(truncate(text, 2900)),
        ActionsBlock(block_id=ids.BLOCK_QUIZ_ACTIONS, elements=buttons).to_dict(),
    ]


def verdict_blocks(
    *, shown: Blocks, choice: int | None, correct: bool, correct_index: int, explanation: str
) -> Blocks:
    """The question as it was shown, followed by right or wrong, the right letter and why."""
    right = LETTERS[correct_index] if correct_index < len(LETTERS) else str(correct_index + 1)
    if correct:
        verdict = f":white_check_mark: *Goed!* Het antwoord is {right}."
    else:
        picked = f" Jij koos {LETTERS[choice]}." if choice is not None and choice < 8 else ""
        verdict = f":x: *Helaas.*{picked} Het juiste antwoord is {right}."
    if explanation.strip():
        verdict += f"\n{escape(truncate(explanation.strip(), 2000))}"
    kept = [b for b in shown if b.get("type") == "section"][:3]
    return [*kept, section(verdict)]


def final_blocks(*, score: int, count: int, week: str) -> Blocks:
    """The end of a quiz: the score and where to look next."""
    cheer = ":tada:" if count and score * 2 >= count else ":muscle:"
    return [
        header("Quiz afgerond"),
        section(f"{cheer} Je hebt *{score}* van de {count} vragen goed (week {escape(week)})."),
        context("Bekijk de ranglijst met `/leaderboard`."),
    ]


def quiz_unavailable_blocks(reason: str, *, retry: bool = False) -> Blocks:
    """Why the quiz could not start; with `retry` a button that asks again (new questions)."""
    blocks = [section(f":warning: De quiz kon niet starten: {escape(truncate(reason, 2000))}")]
    if retry:
        blocks.append(
            context(
                "Keurde de kwaliteitscontrole de vragen af? Opnieuw proberen laat een nieuwe "
                "reeks maken."
            )
        )
        blocks.append(
            ActionsBlock(
                block_id="quiz_retry",
                elements=[button("Opnieuw proberen", ids.QUIZ_START, "retry", style="primary")],
            ).to_dict()
        )
    return blocks


def ranking_text(entries: Sequence[LeaderboardEntry], *, me: str | None) -> str:
    """A ranking as mrkdwn lines (medals for the top three, the viewer in bold)."""
    if not entries:
        return "_Nog geen scores._"
    lines = []
    for e in entries:
        mark = MEDALS.get(e.rank, f"{e.rank}.")
        who = mention(e.user)
        lines.append(f"{mark} {'*' + who + '*' if e.user == me else who} · {e.points} pt")
    return truncate("\n".join(lines), 2900)


def leaderboard_blocks(
    *,
    week: str,
    weekly: Sequence[LeaderboardEntry],
    all_time: Sequence[LeaderboardEntry],
    me: str | None = None,
) -> Blocks:
    """Weekly and all-time rankings."""
    return [
        header("Ranglijst"),
        section(f"*Deze week ({escape(week)})*\n{ranking_text(weekly, me=me)}"),
        section(f"*Aller tijden*\n{ranking_text(all_time, me=me)}"),
    ]


# -- an admin's "Quizbank opnieuw maken" on the topic card --------------------------------

BANK_WORKING = ":hourglass_flowing_sand: De quizbank van `{topic}` wordt opnieuw gemaakt…"


def bank_outcome_blocks(topic_id: str, reply: BankRegenerateReply) -> tuple[Blocks, str]:
    """What came of a regeneration: the new bank, or the gate's reason with a Retry button."""
    topic = escape(topic_id)
    if reply.status == "ok":
        text = (
            f":white_check_mark: Nieuwe quizbank voor `{topic}`: {reply.added} nieuwe "
            f"vraag/vragen, {reply.removed} oude verwijderd; de bank telt nu {reply.size}."
        )
        return [section(text)], text
    if reply.status == "rejected":
        text = (f":warning: De kwaliteitscontrole keurde de nieuwe vragen voor `{topic}` af; de "
                f"quizbank bleef zoals hij was ({reply.size} vragen). Reden: "
                f"`{escape(truncate(reply.reason or 'onbekend', 1500))}`")  # fmt: skip
        retry = button("Opnieuw proberen", ids.QUIZ_BANK, topic_id, style="primary")
        return [section(text), ActionsBlock(elements=[retry]).to_dict()], text
    text = (
        "Alleen beheerders kunnen een quizbank opnieuw maken."
        if reply.status == "forbidden"
        else f"Het onderwerp `{topic}` bestaat niet (meer)."
    )
    return [section(text)], text
