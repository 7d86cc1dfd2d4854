"""Block Kit for admin reviews: the full proposal card, the /r42 suggestions list, outcomes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from slack_sdk.models.blocks import ActionsBlock, ButtonElement

from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import (
    MAX_BUTTON_VALUE,
    MAX_MESSAGE_BLOCKS,
    SAFE_SECTION_TEXT,
    Blocks,
    button,
    context,
    divider,
    escape,
    header,
    mention,
    replace_block,
    section,
    split_text,
    to_mrkdwn,
    truncate,
)
from shared.bus import KbDelta, KbDeltaApplied
from shared.store import Suggestion

REVIEW_TITLE = "Voorstel voor de kennisgraaf"
_PER_ROW = 3  # section + actions (or outcome) + divider


def delta_lines(delta: KbDelta) -> list[str]:
    """Every topic and relation of a delta in full: the text that will be stored (mrkdwn)."""
    lines = []
    for t in delta.topics:
        relevance = f", relevantie: {escape(t.learning_relevance)}" if t.learning_relevance else ""
        lines.append(f"• *{escape(t.label)}* (`{escape(t.id)}`, {t.type}{relevance})")
        if t.description:
            lines.append(f"    {escape(t.description)}")
    for r in delta.relations:
        lines.append(f"• `{escape(r.source)}` —{r.type}→ `{escape(r.target)}`")
        if r.description:
            lines.append(f"    {escape(r.description)}")
    return lines


def review_blocks(
    *, suggestion_id: str, delta: KbDelta, proposed_by: str, summary: str = ""
) -> Blocks:
    """The admin-channel card: everything that would be stored, who proposed it, the buttons."""
    intro = f"*Reden:* {escape(truncate(delta.reason, 1500))}"
    if summary and summary != delta.reason:
        intro += f"\n{to_mrkdwn(truncate(summary, 1000))}"
    blocks: Blocks = [header(REVIEW_TITLE), section(intro)]
    pieces = split_text("\n".join(delta_lines(delta)) or "(geen wijzigingen)")
    room = MAX_MESSAGE_BLOCKS - 5
    blocks.extend(section(p) for p in pieces[:room])
    if len(pieces) > room:  # only a delta of ~130,000 characters gets here
        blocks.append(context(f"… en nog {len(pieces) - room} delen: zie `r42 kb export`"))
    blocks.append(context(f"Voorgesteld door {mention(proposed_by)} · `{escape(suggestion_id)}`"))
    blocks.append(
        ActionsBlock(block_id=ids.BLOCK_REVIEW_ACTIONS, elements=_buttons(suggestion_id)).to_dict()
    )
    return blocks


def _buttons(value: str) -> list[ButtonElement]:
    return [
        button("Goedkeuren", ids.SUGGESTION_APPROVE, value, style="primary"),
        button("Afwijzen", ids.SUGGESTION_REJECT, value, style="danger"),
    ]


def when(at: datetime) -> str:
    """A time every viewer sees in their own time zone (UTC as the fallback)."""
    return f"<!date^{int(at.timestamp())}^{{date_short}} {{time}}|{at:%d-%m-%Y %H:%M} UTC>"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def working_line(*, approve: bool, by: str, at: datetime) -> str:
    """Said while the KG owner has not reported yet: nothing is claimed as done."""
    what = "goedkeuring" if approve else "afwijzing"
    return f":hourglass: {mention(by)} gaf de {what} om {when(at)}; de kennisgraaf verwerkt het…"


def queued_line(*, approve: bool, by: str, at: datetime) -> str:
    """No report within the wait: the decision is queued, not applied."""
    what = "goedkeuring" if approve else "afwijzing"
    return (
        f":hourglass: De {what} van {mention(by)} ({when(at)}) staat in de wachtrij: "
        "de kennisgraaf heeft het nog niet verwerkt. Kijk later in `/r42 suggestions`."
    )


def outcome_line(report: KbDeltaApplied, *, at: datetime) -> str:
    """What the KG owner reported, with who decided and when."""
    by, stamp = mention(report.decided_by), when(at)
    if report.outcome == "applied":
        added = ", ".join(
            part
            for part in (
                _count(report.topics, "onderwerp", "onderwerpen") if report.topics else "",
                _count(report.relations, "relatie", "relaties") if report.relations else "",
            )
            if part
        )
        return f":white_check_mark: Goedgekeurd door {by} om {stamp}; toegevoegd: {added}."
    if report.outcome == "nothing_to_apply":
        return (
            f":white_check_mark: Goedgekeurd door {by} om {stamp}; "
            "alles stond al in de kennisgraaf."
        )
    if report.outcome == "rejected":
        return f":x: Afgewezen door {by} om {stamp}."
    error = escape(truncate(report.error or "onbekende fout", 1500))
    return (
        f":warning: Het besluit van {by} ({stamp}) kon niet worden toegepast: {error}. "
        "Het voorstel staat nog open."
    )


def stored_line(s: Suggestion) -> str:
    """A decided suggestion as stored (the KG owner marks it only after applying)."""
    by = mention(s.decided_by or "?")
    stamp = f" om {when(s.decided_at)}" if s.decided_at else ""
    if s.status == "approved":
        return f":white_check_mark: Goedgekeurd en toegepast door {by}{stamp}."
    return f":x: Afgewezen door {by}{stamp}."


def card_outcome(blocks: Blocks, line: str) -> Blocks:
    """The admin card with its buttons replaced by what happened."""
    return replace_block(blocks, ids.BLOCK_REVIEW_ACTIONS, [context(line)])


# -- the /r42 suggestions list ------------------------------------------------------------


def list_value(suggestion_id: str, listed: Sequence[str]) -> str:
    """A list row's button value: this suggestion and the whole list (Slack sends no message)."""
    return json.dumps({"s": suggestion_id, "l": list(listed)}, separators=(",", ":"))


def parse_value(value: str) -> tuple[str, list[str] | None]:
    """(suggestion id, ids of the list it was clicked in, or None for an admin card)."""
    if not value.startswith("{"):
        return value, None
    try:
        data = json.loads(value)
        listed = [str(i) for i in data["l"] if isinstance(i, str) and i][: _max_rows()]
        return str(data["s"]), listed
    except (ValueError, KeyError, TypeError):
        return "", None


def _max_rows() -> int:
    return (MAX_MESSAGE_BLOCKS - 2) // _PER_ROW


def fitting_ids(suggestions: Sequence[Suggestion]) -> list[str]:
    """The ids the list shows: as many as fit in the blocks and in every button's value."""
    shown: list[str] = []
    for s in suggestions[: _max_rows()]:
        if len(list_value(s.id, [*shown, s.id])) > MAX_BUTTON_VALUE:
            break
        shown.append(s.id)
    return shown


def _row_text(s: Suggestion) -> str:
    try:
        delta = KbDelta.model_validate(s.delta)
        lines = [f"*{escape(truncate(delta.reason, 500))}*", *delta_lines(delta)]
    except ValueError:
        lines = ["_(onleesbaar voorstel)_"]
    lines.append(f"_door {mention(s.proposed_by)} · `{escape(s.id)}`_")
    text = "\n".join(lines)
    if len(text) > SAFE_SECTION_TEXT:
        text = truncate(text, SAFE_SECTION_TEXT - 60) + "\n_(ingekort; de kaart toont alles)_"
    return text


def suggestions_blocks(
    suggestions: Sequence[Suggestion], *, lines: Mapping[str, str] | None = None, total: int = 0
) -> Blocks:
    """The list: pending rows with Approve / Reject, decided rows with who and when."""
    if not suggestions:
        return [section("Er zijn geen openstaande voorstellen.")]
    lines = lines or {}
    shown = fitting_ids(suggestions)
    blocks: Blocks = [header("Voorstellen")]
    for s in (s for s in suggestions if s.id in shown):
        blocks.append(section(_row_text(s)))
        line = lines.get(s.id) or (stored_line(s) if s.status != "pending" else "")
        if line:
            blocks.append(context(line))
        else:
            blocks.append(
                ActionsBlock(
                    block_id=f"review_{truncate(s.id, 200)}",
                    elements=_buttons(list_value(s.id, shown)),
                ).to_dict()
            )
        blocks.append(divider())
    more = max(total, len(suggestions)) - len(shown)
    if more > 0:
        blocks.append(context(f"… en nog {more} voorstellen"))
    return blocks
