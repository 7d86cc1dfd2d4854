"""Block Kit for /r42: help, sources, suggestions, diagnostics, graph, ingest, upload progress."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    CheckboxesElement,
    InputBlock,
    Option,
    PlainTextInputElement,
    SectionBlock,
)
from slack_sdk.models.views import View

from services.gateway.core.models import Diagnostics, GraphView, Progress
from services.gateway.core.text import (
    RELATION_TYPES_NL,
    SOURCE_STATUS_NL,
    TOPIC_TYPES_NL,
    dutch,
)
from services.gateway.slack import ids
from services.gateway.slack.blocks import sources as bs
from services.gateway.slack.blocks.kit import (
    MAX_MESSAGE_BLOCKS,
    Blocks,
    button,
    context,
    escape,
    header,
    section,
    truncate,
)
from shared.store import Source

HELP_TEXT = """*R42 — wat kan ik?*
• Stel een vraag in een DM of noem @R42 in een kanaal.
• `/learn [article|slides|infographic]` — het onderwerp van deze week.
• `/quiz` — de quiz van deze week (in je DM); `/quiz stop` stopt hem.
• `/leaderboard` — de ranglijst van deze week en aller tijden.
• `/r42 clear` — begin een nieuw gesprek.
• `/r42 sources` — bronnen en hun status (beheerders: annuleren of verwijderen).
• `/r42 graph ONDERWERP` — een onderwerp en zijn buren in de kennisgraaf.
• `/r42 topic ONDERWERP` — de kaart van een onderwerp (beheerders: bewerken, vergrendelen).
• Iets toevoegen? Vraag het gewoon: "Kun je een onderwerp toevoegen over …?" of "Voeg toe \
dat …". Je bevestigt het voorstel en een beheerder keurt het goed.
*Beheerders*
• `/r42 ingest` — plak een bron of deel een tekstbestand met R42 in een DM.
• `/r42 suggestions` — openstaande voorstellen beoordelen.
• `/r42 analyze` — de kennisgraaf laten analyseren; kies welke acties je toepast.
• `/r42 stale` — verouderde leerinhoud; vernieuw wat je aanvinkt.
• `/r42 curriculum` — de onderwerpen van de komende weken (beheerders: de volgorde).
• `/r42 diagnostics` — recente LLM-aanroepen en kosten."""

INGEST_NAME_BLOCK, INGEST_NAME_ACTION = "ingest_name", "name"
INGEST_TEXT_BLOCK, INGEST_TEXT_ACTION = "ingest_text", "text"
INGEST_SYNC_BLOCK, INGEST_SYNC_ACTION, INGEST_SYNC_VALUE = "ingest_sync", "sync", "handbook"
STATUS_ICONS = {
    "pending": ":hourglass:",
    "processing": ":gear:",
    "completed": ":white_check_mark:",
    "failed": ":x:",
    "cancelled": ":no_entry_sign:",
}
CANCELLABLE = frozenset({"pending", "processing"})


CLEAR_QUESTION = "Wil je dit gesprek met R42 wissen? R42 vergeet dan wat je hier vroeg."
CLEAR_IN_CHANNEL = (
    "In een kanaal onthoud ik elk gesprek per thread, los van je DM's. "
    "Begin een nieuwe thread voor een nieuw gesprek, of gebruik `/r42 clear` in je DM met mij."
)


def clear_prompt(conversation: str | None) -> tuple[Blocks, str]:
    """/r42 clear: Wissen / Annuleren for a DM's conversation; in a channel, how memory works."""
    if conversation is None:
        return [section(CLEAR_IN_CHANNEL)], CLEAR_IN_CHANNEL
    blocks = [
        section(CLEAR_QUESTION),
        ActionsBlock(
            elements=[
                button("Wissen", ids.CLEAR_CONFIRM, conversation, style="danger"),
                button("Annuleren", ids.CLEAR_CANCEL, conversation),
            ],
        ).to_dict(),
    ]
    return blocks, CLEAR_QUESTION


def help_blocks() -> Blocks:
    """The /r42 help text."""
    return [section(HELP_TEXT)]


def sources_blocks(sources: Sequence[Source], *, admin: bool) -> Blocks:
    """Sources with their status; for admins a Cancel (running) or Delete button on each."""
    if not sources:
        return [section("Er zijn nog geen bronnen ingelezen.")]
    blocks: Blocks = [header("Bronnen")]
    for i, src in enumerate(sources[: MAX_MESSAGE_BLOCKS - 2]):
        chunks = f"{src.chunks_done}/{src.chunks_total}" if src.chunks_total else "–"
        text = (
            f"{STATUS_ICONS.get(src.status, '')} *{escape(truncate(src.name, 200))}* · "
            f"{dutch(src.status, SOURCE_STATUS_NL)} · delen {chunks}"
        )
        if src.error:
            text += f"\n_{escape(truncate(src.error, 500))}_"
        accessory = None
        if admin and src.status in CANCELLABLE:
            accessory = button(
                "Annuleren", f"{ids.SOURCE_CANCEL_PREFIX}{i}", src.id, style="danger"
            )
        elif admin:
            accessory = bs.delete_button(i, src.id)
        blocks.append(SectionBlock(text=text, accessory=accessory).to_dict())
    if len(sources) > MAX_MESSAGE_BLOCKS - 2:
        blocks.append(context(f"… en nog {len(sources) - (MAX_MESSAGE_BLOCKS - 2)} bronnen"))
    return blocks


def diagnostics_blocks(diag: Diagnostics) -> Blocks:
    """Recent LLM calls and this week's cost per task."""
    blocks: Blocks = [header("Diagnostiek")]
    blocks.append(
        section(
            f"*Deze week:* {diag.week_calls} aanroepen, {diag.week_errors} fouten, "
            f"${diag.week_cost_usd:.4f} · totaal opgeslagen: {diag.total_calls}"
        )
    )
    if diag.by_task:
        lines = [
            f"• `{escape(a.key)}`: {a.calls}× · in {a.input_tokens} / uit {a.output_tokens} tok"
            f" · ${a.cost_usd:.4f}"
            for a in diag.by_task[:20]
        ]
        blocks.append(section(truncate("*Per taak (deze week)*\n" + "\n".join(lines), 2900)))
    if diag.recent:
        lines = []
        for c in diag.recent[:15]:
            state = "ok" if c.ok else f"fout: {escape(truncate(c.error_msg or '?', 80))}"
            lines.append(
                f"• {c.occurred_at:%d-%m %H:%M} `{escape(c.task)}` {escape(c.model)} · "
                f"{c.input_tokens}/{c.output_tokens} tok · {c.duration_ms:.0f} ms · "
                f"${c.cost_usd:.4f} · {state}"
            )
        blocks.append(section(truncate("*Recente aanroepen*\n" + "\n".join(lines), 2900)))
    else:
        blocks.append(context("Nog geen LLM-aanroepen vastgelegd."))
    return blocks


def graph_blocks(view: GraphView) -> Blocks:
    """A topic, its relations and a button per neighbour to follow."""
    t = view.topic
    blocks: Blocks = [
        header(t.label),
        context(f"`{escape(t.id)}` · {dutch(t.type, TOPIC_TYPES_NL)}"),
    ]
    if t.description:
        blocks.append(section(escape(truncate(t.description, 2900))))
    if not view.neighbours:
        blocks.append(context("Geen relaties."))
        return blocks
    lines = [
        (
            f"• {dutch(rel, RELATION_TYPES_NL)} → *{escape(n.label)}*"
            if out
            else f"• *{escape(n.label)}* {dutch(rel, RELATION_TYPES_NL)} → dit"
        )
        for rel, out, n in view.neighbours
    ]
    blocks.append(section(truncate("\n".join(lines), 2900)))
    seen: list[str] = []
    for _, _, n in view.neighbours:
        if n.id not in seen:
            seen.append(n.id)
    elements = [
        button(truncate(label_of(view, tid), 75), f"{ids.GRAPH_FOLLOW_PREFIX}{i}", tid)
        for i, tid in enumerate(seen[:25])
    ]
    blocks.append(ActionsBlock(elements=elements).to_dict())
    return blocks


def label_of(view: GraphView, topic_id: str) -> str:
    """The label of a neighbour (its id when unknown)."""
    return next((n.label for _, _, n in view.neighbours if n.id == topic_id), topic_id)


def ingest_modal(*, channel: str | None) -> dict[str, Any]:
    """The admin's ingest modal: paste a source (name + text), or start a handbook sync."""
    sync = Option(value=INGEST_SYNC_VALUE, label="Ook het GitHub-handboek synchroniseren")
    return View(
        type="modal",
        callback_id=ids.INGEST_VIEW,
        private_metadata=channel or "",
        title="Bron toevoegen",
        submit="Starten",
        close="Annuleren",
        blocks=[
            section(
                "Plak de tekst van een bron (markdown mag), of synchroniseer het handboek. "
                "Grotere documenten: deel een tekst- of markdownbestand met R42 in een DM."
            ),
            InputBlock(
                block_id=INGEST_NAME_BLOCK,
                label="Naam",
                optional=True,
                element=PlainTextInputElement(action_id=INGEST_NAME_ACTION, max_length=200),
            ),
            InputBlock(
                block_id=INGEST_TEXT_BLOCK,
                label="Tekst",
                optional=True,
                element=PlainTextInputElement(
                    action_id=INGEST_TEXT_ACTION, multiline=True, max_length=3000
                ),
            ),
            InputBlock(
                block_id=INGEST_SYNC_BLOCK,
                label="Handboek",
                optional=True,
                element=CheckboxesElement(action_id=INGEST_SYNC_ACTION, options=[sync]),
            ),
        ],
    ).to_dict()


def progress_text(name: str, p: Progress) -> str:
    """A one-line progress report of a source (mrkdwn)."""
    label = escape(truncate(name, 200))
    if p.state == "failed":
        return f":x: *{label}*: inlezen mislukt — {escape(truncate(p.error or '?', 1500))}"
    if p.state == "cancelled":
        return f":no_entry_sign: *{label}*: geannuleerd."
    counts = (
        f"{p.topics_added} onderwerpen toegevoegd, {p.topics_updated} bijgewerkt, "
        f"{p.relations_added} relaties toegevoegd"
    )
    if p.state == "completed":
        return f":white_check_mark: *{label}* is ingelezen: {counts}."
    total = p.chunks_total or "?"
    return f":gear: *{label}*: deel {p.chunks_done}/{total} verwerkt · {counts}"


def progress_blocks(name: str, p: Progress) -> Blocks:
    """The progress message of an upload."""
    return [section(progress_text(name, p))]
