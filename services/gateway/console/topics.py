"""Console topic commands: `/topic ONDERWERP` shows the card; edit, delete, merge, relate and
unrelate go to the KG owner like every surface's (it decides who is an admin, and audits)."""

from __future__ import annotations

import argparse
import shlex
from typing import Any, NoReturn

from rich.text import Text

from services.gateway.console.base import ConsoleBase
from services.gateway.core.topics import outcome_text
from shared.bus.topic_rpc import TopicAction, TopicCard
from shared.errors import BadInputError
from shared.store import LEARNING_RELEVANCES, RELATION_TYPES, TOPIC_TYPES

TOPIC_HELP = """/topic ONDERWERP                      de kaart van een onderwerp
  /topic edit ID [--label T] [--type T] [--description T] [--relevance R] [--lock|--unlock]
  /topic delete ID | /topic merge ID IN_ID
  /topic relate ID ANDER [--type T] [--in] | /topic unrelate ID ANDER [--type T] [--in]"""


BAD_IDS = (
    "dat kan niet: een id bestaat uit kleine letters, cijfers en streepjes, en een onderwerp "
    "gaat niet op in zichzelf"
)


class _Parser(argparse.ArgumentParser):
    """argparse that raises (in Dutch) instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise BadInputError(f"dat commando klopt niet ({message}); typ /help")


def _edit_parser() -> _Parser:
    parser = _Parser(prog="/topic edit", add_help=False)
    parser.add_argument("topic_id")
    parser.add_argument("--label")
    parser.add_argument("--type", choices=TOPIC_TYPES)
    parser.add_argument("--description")
    parser.add_argument("--relevance", choices=LEARNING_RELEVANCES)
    lock = parser.add_mutually_exclusive_group()
    lock.add_argument("--lock", dest="lock", action="store_true", default=None)
    lock.add_argument("--unlock", dest="lock", action="store_false")
    return parser


def _relation_parser(name: str) -> _Parser:
    parser = _Parser(prog=f"/topic {name}", add_help=False)
    parser.add_argument("topic_id")
    parser.add_argument("other")
    parser.add_argument("--type", choices=RELATION_TYPES, default="related_to")
    parser.add_argument("--in", dest="incoming", action="store_true")
    return parser


def card_text(card: TopicCard) -> Text:
    """The card for a terminal (Dutch, like every console view)."""
    t = card.topic
    lock = "vergrendeld" if t.relevance_locked else "niet vergrendeld"
    text = Text(f"{t.label}", style="bold")
    text.append(f"  [{t.id}]\n", style="dim")
    text.append(f"soort: {t.type} · relevantie: {t.learning_relevance} ({lock})\n")
    text.append(f"{t.description or '(geen beschrijving)'}\n")
    if card.curated:
        text.append(f"door een beheerder ingesteld: {', '.join(card.curated)}\n", style="dim")
    sources = [f"{s.name} ({s.url})" if s.url else s.name for s in card.sources]
    text.append("bronnen: " + (", ".join(sources) or "geen") + "\n")
    text.append("relaties:" + ("" if card.relations else " geen") + "\n")
    for n in card.relations:
        arrow = f"  —{n.type}→ {n.label}" if n.outgoing else f"  {n.label} —{n.type}→ dit"
        text.append(arrow + f" [{n.topic_id}]\n")
    return text


class TopicCommands(ConsoleBase):
    """The topic card and admin topic actions."""

    async def topic(self, arg: str) -> None:
        """/topic ONDERWERP, or /topic edit|delete|merge|relate|unrelate …"""
        try:
            words = shlex.split(arg)
        except ValueError as exc:
            raise BadInputError(f"dat commando klopt niet ({exc})") from None
        if not words:
            self.out.print(Text(TOPIC_HELP, style="yellow"))
            return
        sub, rest = words[0].lower(), words[1:]
        if sub == "edit":
            await self._act(self._edit(rest), "Bijgewerkt.")
        elif sub == "delete" and len(rest) == 1:
            await self._delete(rest[0])
        elif sub == "merge" and len(rest) == 2:
            await self._act(self._action("merge", rest[0], into=rest[1]), "Samengevoegd.")
        elif sub in ("relate", "unrelate"):
            args = _relation_parser(sub).parse_args(rest)
            relation = {"other": args.other, "type": args.type, "outgoing": not args.incoming}
            kind = "relation_add" if sub == "relate" else "relation_remove"
            done = "Relatie toegevoegd." if sub == "relate" else "Relatie verwijderd."
            await self._act(self._action(kind, args.topic_id, relation=relation), done)
        else:
            self.out.print(card_text(await self.client.topics.card(arg)))

    def _action(self, kind: str, topic_id: str, **fields: Any) -> TopicAction:
        try:
            return TopicAction.model_validate(
                {"actor": self.user, "surface": "console", "action": kind, "topic_id": topic_id,
                 **fields}
            )  # fmt: skip
        except ValueError:
            raise BadInputError(BAD_IDS) from None

    def _edit(self, rest: list[str]) -> TopicAction:
        args = _edit_parser().parse_args(rest)
        edit = {"label": args.label, "type": args.type, "description": args.description,
                "learning_relevance": args.relevance, "lock": args.lock}  # fmt: skip
        if all(v is None for v in edit.values()):
            raise BadInputError("niets te wijzigen: geef --label, --type, --description, "
                                "--relevance, --lock of --unlock")  # fmt: skip
        return self._action("edit", args.topic_id, edit=edit)

    async def _delete(self, topic_id: str) -> None:
        card = await self.client.topics.card(topic_id)
        impact = await self.client.topics.impact(card.topic.id)
        content = ", ".join(impact.content_parts) or "geen leerinhoud"
        question = (
            f"{card.topic.label} verwijderen? Dit gaat mee: {impact.relations} relatie(s), "
            f"{content}, {impact.quiz_questions} quizvraag/-vragen."
        )
        if not await self.yes_no(question):
            self.out.print("Niet verwijderd.")
            return
        await self._act(self._action("delete", card.topic.id), "Verwijderd.")

    async def _act(self, action: TopicAction, done: str) -> None:
        reply = await self.client.topics.act(action)
        style = "cyan" if reply.outcome in ("done", "unchanged") else "red"
        undo = f" (terugdraaien: r42 graph undo {reply.undo_batch})" if reply.undo_batch else ""
        self.out.print(Text(outcome_text(reply, done) + undo, style=style))

    async def yes_no(self, question: str) -> bool:
        """Implemented by the session (j/n prompt)."""
        raise NotImplementedError
