"""Block Kit for R42 chat: the working indicator, answers, proposal chips and admin reviews."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    ContextActionsBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    InputBlock,
    PlainTextInputElement,
)
from slack_sdk.models.views import View

from services.gateway.core.text import (
    PROPOSAL_STATUS_NL,
    dutch,
)
from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import (
    MAX_MESSAGE_BLOCKS,
    MAX_MESSAGE_CHARS,
    Blocks,
    block_chars,
    button,
    chunk_blocks,
    context,
    escape,
    mention,
    replace_block,
    section,
    text_sections,
    to_mrkdwn,
    truncate,
)
from shared.bus import ChatReply

THINKING_TEXT = "R42 denkt na…"
FEEDBACK_THANKS = "Bedankt voor je feedback!"
FEEDBACK_INPUT_BLOCK, FEEDBACK_INPUT_ACTION = "feedback_reason", "reason"
PROPOSAL_QUESTION = "Wil je dit toevoegen aan de kennisgraaf?"


def thinking_blocks() -> Blocks:
    """The working indicator posted while R42 thinks (later replaced by the answer)."""
    return [context(f":hourglass_flowing_sand: _{THINKING_TEXT}_")]


def answer_messages(reply: ChatReply, *, turn_id: str) -> list[Blocks]:
    """R42's answer as one or more messages: text, sources, proposal chip, feedback buttons."""
    body = text_sections(reply.text or "…")
    tail = answer_tail(reply, turn_id=turn_id)
    messages = chunk_blocks(body)
    tail_chars = sum(block_chars(b) for b in tail)
    last = messages[-1]
    if len(last) + len(tail) > MAX_MESSAGE_BLOCKS or (
        sum(block_chars(b) for b in last) + tail_chars > MAX_MESSAGE_CHARS
    ):
        messages.append([])
    messages[-1].extend(tail)
    return messages


def answer_tail(reply: ChatReply, *, turn_id: str) -> Blocks:
    """What goes under an answer's text: sources, markers, the proposal chip, feedback."""
    tail: Blocks = []
    if reply.sources:
        labels = " · ".join(escape(s.label) for s in reply.sources[:20])
        tail.append(context(f":books: {reply.sources_label}: {labels}"))
    if reply.offline:
        tail.append(
            context(":electric_plug: offline-modus: een voorbeeldantwoord zonder taalmodel")
        )
    if reply.error_ref:
        tail.append(context(f"Referentie: `{escape(reply.error_ref)}`"))
    if reply.proposal is not None:
        tail.extend(
            proposal_blocks(
                reply.proposal.summary or reply.proposal.delta.reason, proposal_id=reply.proposal.id
            )
        )
    if not reply.refused and not reply.error_ref:
        tail.append(feedback_block(turn_id))
    return tail


def feedback_block(turn_id: str) -> dict[str, Any]:
    """Slack's native 👍 / 👎 under an answer (values say which turn and which way)."""
    return ContextActionsBlock(
        block_id=ids.BLOCK_FEEDBACK,
        elements=[
            FeedbackButtonsElement(
                action_id=ids.FEEDBACK,
                positive_button=FeedbackButtonObject(
                    text="👍", accessibility_label="Goed antwoord", value=f"up:{turn_id}"
                ),
                negative_button=FeedbackButtonObject(
                    text="👎", accessibility_label="Slecht antwoord", value=f"down:{turn_id}"
                ),
            )
        ],
    ).to_dict()


def parse_feedback(value: str) -> tuple[bool, str] | None:
    """(positive?, turn id) from a feedback button value; None when malformed."""
    way, _, turn_id = value.partition(":")
    if way not in ("up", "down") or not turn_id or len(turn_id) > 200:
        return None
    return way == "up", turn_id


def feedback_thanks(blocks: Blocks) -> Blocks:
    """The answer after a vote: the buttons become a thank-you."""
    return replace_block(blocks, ids.BLOCK_FEEDBACK, [context(FEEDBACK_THANKS)])


def feedback_modal(*, turn_id: str) -> dict[str, Any]:
    """After a 👎: what was wrong (optional, short)."""
    return View(
        type="modal",
        callback_id=ids.FEEDBACK_VIEW,
        private_metadata=json.dumps({"t": turn_id}, separators=(",", ":")),
        title="Wat was er mis?",
        submit="Versturen",
        close="Overslaan",
        blocks=[
            InputBlock(
                block_id=FEEDBACK_INPUT_BLOCK,
                label="Wat klopte er niet aan het antwoord?",
                optional=True,
                element=PlainTextInputElement(
                    action_id=FEEDBACK_INPUT_ACTION, multiline=True, max_length=1000
                ),
            )
        ],
    ).to_dict()


def proposal_blocks(summary: str, *, proposal_id: str) -> Blocks:
    """The chip under an answer: the question, what would change, and Yes / No."""
    text = f"*{PROPOSAL_QUESTION}*\n{to_mrkdwn(truncate(summary, 2500))}"
    return [
        section(text, block_id=ids.BLOCK_PROPOSAL),
        ActionsBlock(
            block_id=ids.BLOCK_PROPOSAL_ACTIONS,
            elements=[
                button("Ja, toevoegen", ids.PROPOSAL_YES, proposal_id, style="primary"),
                button("Nee", ids.PROPOSAL_NO, proposal_id),
            ],
        ).to_dict(),
    ]


PROPOSAL_OUTCOMES = {
    "applied": ":white_check_mark: Toegevoegd aan de kennisgraaf door {who}.",
    "pending_review": ":hourglass: {who} stelde dit voor; een beheerder beoordeelt het.",
    "declined": ":no_entry_sign: Niet toegevoegd ({who} koos nee).",
    "already_decided": "Over dit voorstel is al besloten.",
    "not_found": "Dit voorstel bestaat niet meer (verlopen of al verwerkt).",
}


def proposal_outcome(blocks: Blocks, *, status: str, user_id: str) -> Blocks:
    """The answer message after a Yes / No: the chip's buttons become who decided what."""
    unknown = "{who}: " + dutch(status, PROPOSAL_STATUS_NL)
    line = PROPOSAL_OUTCOMES.get(status, unknown).format(who=mention(user_id))
    return replace_block(blocks, ids.BLOCK_PROPOSAL_ACTIONS, [context(line)])
