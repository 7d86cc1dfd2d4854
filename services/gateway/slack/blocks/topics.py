"""Block Kit for topic cards: the card with its admin actions, the edit/merge/relation
modals and the delete confirmation that says what goes with the topic."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    CheckboxesElement,
    InputBlock,
    Option,
    PlainTextInputElement,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from services.gateway.core.topics import DeleteImpact
from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import (
    SAFE_SECTION_TEXT,
    Blocks,
    button,
    context,
    escape,
    header,
    section,
    truncate,
)
from shared.bus.topic_rpc import TopicCard, TopicNeighbour
from shared.store import LEARNING_RELEVANCES, RELATION_TYPES, TOPIC_TYPES

EDIT = "r42_topic_edit"
MERGE = "r42_topic_merge"
RELATE = "r42_topic_relate"
UNRELATE = "r42_topic_unrelate"
DELETE = "r42_topic_delete"
DELETE_CONFIRM = "r42_topic_delete_confirm"
DELETE_CANCEL = "r42_topic_delete_cancel"
CARD = "r42_topic_card"
EDIT_VIEW, MERGE_VIEW = "r42_topic_edit_view", "r42_topic_merge_view"
RELATE_VIEW, UNRELATE_VIEW = "r42_topic_relate_view", "r42_topic_unrelate_view"
ACTIONS_BLOCK = "r42_topic_actions"
# Input blocks and their single element share one id each.
LABEL, TYPE, DESCRIPTION, RELEVANCE, LOCK = "label", "type", "description", "relevance", "lock"
INTO, OTHER, RELATION_TYPE, DIRECTION, RELATION = "into", "other", "rtype", "direction", "rel"
LOCKED = "locked"

RELEVANCE_NL = {"core": "kern", "standard": "standaard", "peripheral": "rand",
                "exclude": "uitgesloten"}  # fmt: skip
TYPE_NL = {"concept": "begrip", "role": "rol", "process": "proces"}
FIELD_NL = {"label": "naam", "type": "soort", "description": "beschrijving",
            "learning_relevance": "relevantie", "created": "aangemaakt"}  # fmt: skip
MAX_RELATION_LINES = 30
UNDO_NOTE = (
    "Terugdraaien kan met `r42 graph undo` (de graaf; inhoud en quiz worden opnieuw gemaakt)."
)


def relation_line(n: TopicNeighbour) -> str:
    """One relation as mrkdwn: → `type` *Other*, or *Other* `type` → dit onderwerp."""
    if n.outgoing:
        return f"• → `{n.type}` *{escape(n.label)}*"
    return f"• *{escape(n.label)}* `{n.type}` → dit onderwerp"


def _link(url: str, name: str) -> str:
    safe = url.replace("|", "%7C").replace(">", "%3E").replace("<", "%3C")
    return f"<{safe}|{escape(name)}>"


def card_blocks(card: TopicCard, *, admin: bool, picture_note: str = "") -> Blocks:
    """The topic card; admins get Edit, Merge, relation and Delete buttons."""
    t = card.topic
    lock = ":lock: vergrendeld" if t.relevance_locked else ":unlock: niet vergrendeld"
    relevance = RELEVANCE_NL.get(t.learning_relevance, t.learning_relevance)
    blocks: Blocks = [
        header(t.label),
        section(
            f"*Soort:* {TYPE_NL.get(t.type, t.type)} · *Relevantie:* {relevance} ({lock})\n"
            + (escape(truncate(t.description, 2500)) if t.description else "_Geen beschrijving._")
        ),
    ]
    sources = [_link(s.url, s.name) if s.url else escape(s.name) for s in card.sources]
    blocks.append(section(truncate("*Bronnen*\n" + ("\n".join(f"• {s}" for s in sources)
                                                    or "_geen_"), SAFE_SECTION_TEXT)))  # fmt: skip
    lines = [relation_line(n) for n in card.relations[:MAX_RELATION_LINES]]
    if len(card.relations) > MAX_RELATION_LINES:
        lines.append(f"… en nog {len(card.relations) - MAX_RELATION_LINES}")
    blocks.append(section(truncate("*Relaties*\n" + ("\n".join(lines) or "_geen_"),
                                   SAFE_SECTION_TEXT)))  # fmt: skip
    note = f"`{escape(t.id)}`"
    if card.curated:
        note += " · door een beheerder ingesteld: " + ", ".join(
            FIELD_NL.get(f, f) for f in card.curated
        )
    if picture_note:
        note += f" · {picture_note}"
    blocks.append(context(note))
    if admin:
        elements = [
            button("Bewerken", EDIT, t.id, style="primary"),
            button("Samenvoegen met…", MERGE, t.id),
            button("Relatie toevoegen", RELATE, t.id),
        ]
        if card.relations:
            elements.append(button("Relatie verwijderen", UNRELATE, t.id))
        elements.append(button("Quizbank opnieuw maken", ids.QUIZ_BANK, t.id))
        elements.append(button("Verwijderen", DELETE, t.id, style="danger"))
        blocks.append(ActionsBlock(block_id=ACTIONS_BLOCK, elements=elements).to_dict())
    return blocks


def impact_text(label: str, impact: DeleteImpact) -> str:
    """What goes with a topic, in one sentence."""
    parts = [f"{impact.relations} relatie(s)"]
    if impact.content_parts:
        names = {"article": "artikel", "slides": "slides", "infographic": "infographic"}
        parts.append("de leerinhoud (" + ", ".join(names[p] for p in impact.content_parts) + ")")
    else:
        parts.append("geen leerinhoud")
    parts.append(f"de quizbank met {impact.quiz_questions} vraag/vragen"
                 if impact.quiz_questions else "geen quizvragen")  # fmt: skip
    return f"*{escape(label)}* verwijderen? Dit gaat mee: " + ", ".join(parts) + "."


def delete_confirm_blocks(topic_id: str, label: str, impact: DeleteImpact) -> Blocks:
    """The confirmation that replaces the card: what goes, then Yes / Cancel."""
    return [
        section(impact_text(label, impact)),
        context(UNDO_NOTE),
        ActionsBlock(
            elements=[
                button("Ja, verwijderen", DELETE_CONFIRM, topic_id, style="danger"),
                button("Annuleren", DELETE_CANCEL, topic_id),
            ]
        ).to_dict(),
    ]


def _options(values: tuple[str, ...], names: dict[str, str]) -> list[Option]:
    return [Option(value=v, label=f"{names.get(v, v)} ({v})" if v in names else v) for v in values]


def _select(action: str, values: tuple[str, ...], names: dict[str, str], initial: str | None
            ) -> StaticSelectElement:  # fmt: skip
    options = _options(values, names)
    chosen = next((o for o in options if o.value == initial), None)
    return StaticSelectElement(action_id=action, options=options, initial_option=chosen)


def metadata(topic_id: str, channel: str) -> str:
    """The private_metadata of a topic modal: which topic, where to answer."""
    return json.dumps({"t": topic_id, "c": channel})


def read_metadata(view: dict[str, Any]) -> tuple[str, str]:
    """(topic id, channel) from a topic modal ('' when missing or not ours)."""
    try:
        data = json.loads(str(view.get("private_metadata") or "{}"))
    except ValueError:
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    return str(data.get("t") or ""), str(data.get("c") or "")


def edit_modal(card: TopicCard, *, channel: str) -> dict[str, Any]:
    """Edit: label, type, description, relevance and the lock, prefilled."""
    t = card.topic
    lock = Option(value=LOCKED, label="Relevantie vergrendelen (extractie laat hem staan)")
    return View(
        type="modal", callback_id=EDIT_VIEW, private_metadata=metadata(t.id, channel),
        title="Onderwerp bewerken", submit="Opslaan", close="Annuleren",
        blocks=[
            InputBlock(block_id=LABEL, label="Naam", element=PlainTextInputElement(
                action_id=LABEL, initial_value=t.label, max_length=200)),
            InputBlock(block_id=TYPE, label="Soort",
                       element=_select(TYPE, TOPIC_TYPES, TYPE_NL, t.type)),
            InputBlock(block_id=DESCRIPTION, label="Beschrijving", optional=True,
                       element=PlainTextInputElement(
                           action_id=DESCRIPTION, multiline=True, max_length=3000,
                           initial_value=truncate(t.description, 3000) or None)),
            InputBlock(block_id=RELEVANCE, label="Relevantie",
                       element=_select(RELEVANCE, LEARNING_RELEVANCES, RELEVANCE_NL,
                                       t.learning_relevance)),
            InputBlock(block_id=LOCK, label="Vergrendeling", optional=True,
                       element=CheckboxesElement(action_id=LOCK, options=[lock],
                                                 initial_options=[lock] if t.relevance_locked
                                                 else None)),
        ],
    ).to_dict()  # fmt: skip


def merge_modal(card: TopicCard, *, channel: str) -> dict[str, Any]:
    """Merge into…: the topic that stays, by id or name."""
    return View(
        type="modal", callback_id=MERGE_VIEW, private_metadata=metadata(card.topic.id, channel),
        title="Samenvoegen", submit="Samenvoegen", close="Annuleren",
        blocks=[
            section(f"*{escape(card.topic.label)}* gaat op in het onderwerp dat je hier noemt; "
                    "de relaties gaan mee, dit onderwerp verdwijnt."),
            InputBlock(block_id=INTO, label="Samenvoegen met (id of naam)",
                       element=PlainTextInputElement(action_id=INTO, max_length=300)),
        ],
    ).to_dict()  # fmt: skip


DIRECTIONS = {"out": "van dit onderwerp naar het andere", "in": "van het andere naar dit onderwerp"}


def relate_modal(card: TopicCard, *, channel: str) -> dict[str, Any]:
    """Add a relation: the other topic, the type and the direction."""
    return View(
        type="modal", callback_id=RELATE_VIEW, private_metadata=metadata(card.topic.id, channel),
        title="Relatie toevoegen", submit="Toevoegen", close="Annuleren",
        blocks=[
            InputBlock(block_id=OTHER, label="Ander onderwerp (id of naam)",
                       element=PlainTextInputElement(action_id=OTHER, max_length=300)),
            InputBlock(block_id=RELATION_TYPE, label="Soort relatie",
                       element=_select(RELATION_TYPE, RELATION_TYPES, {}, "related_to")),
            InputBlock(block_id=DIRECTION, label="Richting",
                       element=_select(DIRECTION, ("out", "in"), DIRECTIONS, "out")),
        ],
    ).to_dict()  # fmt: skip


def relation_value(n: TopicNeighbour) -> str:
    """One relation as an option value: type|o or i|other id."""
    return f"{n.type}|{'o' if n.outgoing else 'i'}|{n.topic_id}"


def unrelate_modal(card: TopicCard, *, channel: str) -> dict[str, Any]:
    """Remove a relation: one of the card's (at most 100, Slack's option limit)."""
    options = [
        Option(value=relation_value(n),
               label=truncate(("→ " if n.outgoing else "← ") + f"{n.type} {n.label}", 75))
        for n in card.relations[:100]
    ]  # fmt: skip
    return View(
        type="modal", callback_id=UNRELATE_VIEW, private_metadata=metadata(card.topic.id, channel),
        title="Relatie verwijderen", submit="Verwijderen", close="Annuleren",
        blocks=[InputBlock(block_id=RELATION, label="Relatie",
                           element=StaticSelectElement(action_id=RELATION, options=options))],
    ).to_dict()  # fmt: skip


def home_blocks(weekly_topic_id: str | None, label: str = "") -> Blocks:
    """App Home for admins: open the week's topic card in the DM, or any with /r42 topic."""
    how = context("Een onderwerp bekijken of bewerken: `/r42 topic NAAM`.")
    if not weekly_topic_id:
        return [how]
    return [
        section(f"*Onderwerpkaart:* {escape(label)} (onderwerp van deze week)"),
        ActionsBlock(elements=[button("Kaart in je DM", CARD, weekly_topic_id)]).to_dict(),
        how,
    ]
