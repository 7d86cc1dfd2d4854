"""The cards of chat, proposals, reviews, the leaderboard and help (Dutch, like every surface)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from services.gateway.core.text import (
    PROPOSAL_STATUS_NL,
    RELATION_TYPES_NL,
    TOPIC_TYPES_NL,
    dutch,
)
from services.gateway.teams.cards import (
    Card,
    Element,
    action_set,
    card,
    execute,
    facts,
    heading,
    text,
    truncate,
)
from shared.bus import ChatReply, KbDelta, KbDeltaApplied

VERB_FEEDBACK = "feedback"
VERB_PROPOSAL = "proposal"
VERB_REVIEW = "review"
VERB_QUIZ_START = "quiz.start"
VERB_QUIZ_ANSWER = "quiz.answer"
VERB_LEADERBOARD = "leaderboard"
VERB_LEARN = "learn.open"
VERB_SLIDE = "learn.slide"

HELP_TEXT = (
    "Stel me gewoon een vraag. Verder kan ik:\n\n"
    "- **learn** — het onderwerp van deze week (ook: learn slides, learn infographic)\n"
    "- **quiz** — de quiz van deze week\n"
    "- **leaderboard** — de ranglijst\n"
    "- **clear** — begin een nieuw gesprek\n"
    '- iets toevoegen: vraag het gewoon ("Kun je een onderwerp toevoegen over …?", '
    '"Voeg toe dat …"); je bevestigt het voorstel en een beheerder keurt het goed\n'
    "- beheerders: **ingest**, **sources**, **suggestions**, **diagnostics**, **graph ONDERWERP**"
)
PROPOSAL_OUTCOMES = {
    "applied": "Toegepast op de kennisgraaf.",
    "pending_review": "Doorgestuurd naar de beheerders ter beoordeling.",
    "declined": "Niet toegepast.",
    "not_found": "Dit voorstel bestaat niet (meer).",
    "already_decided": "Over dit voorstel is al besloten.",
}


def help_card() -> Card:
    """What the bot can do."""
    return card([heading("R42"), text(HELP_TEXT)])


def answer_card(reply: ChatReply, *, turn_id: str) -> Card:
    """R42's answer with its sources, the proposal chip and feedback buttons."""
    body: list[Element] = [text(reply.text or "…")]
    if reply.sources:
        labels = ", ".join(s.label for s in reply.sources[:12])
        body.append(
            text(f"{reply.sources_label}: {truncate(labels, 900)}", subtle=True, size="Small")
        )
    if reply.offline:
        body.append(text("Offline antwoord (geen taalmodel ingesteld)", subtle=True, size="Small"))
    if reply.truncated_input:
        body.append(text("Je vraag was te lang en is ingekort.", subtle=True, size="Small"))
    if reply.proposal is not None:
        body.append(text(f"**Voorstel:** {reply.proposal.summary or 'de kennisgraaf aanpassen'}"))
        body.append(
            action_set(
                [
                    execute(
                        "Ja", VERB_PROPOSAL, {"p": reply.proposal.id, "ok": True}, style="positive"
                    ),
                    execute("Nee", VERB_PROPOSAL, {"p": reply.proposal.id, "ok": False}),
                ]
            )
        )
    actions = [
        execute("👍", VERB_FEEDBACK, {"t": turn_id, "up": True}),
        execute("👎", VERB_FEEDBACK, {"t": turn_id, "up": False}),
    ]
    return card(body, actions=actions)


def proposal_outcome_card(previous: str, status: str) -> Card:
    """The answer card after a Yes / No: the outcome instead of the buttons."""
    return card(
        [
            text(previous or "Voorstel"),
            text(PROPOSAL_OUTCOMES.get(status, dutch(status, PROPOSAL_STATUS_NL))),
        ]
    )


def delta_lines(delta: KbDelta) -> list[str]:
    """A readable summary of a graph change (in Dutch: types and relations translated)."""
    lines = []
    if delta.topics:
        names = [f"{t.label} ({dutch(t.type, TOPIC_TYPES_NL)})" for t in delta.topics[:10]]
        lines.append(f"Onderwerpen: {truncate(', '.join(names), 400)}")
    if delta.relations:
        pairs = [
            f"{r.source} {dutch(r.type, RELATION_TYPES_NL)} {r.target}"
            for r in delta.relations[:10]
        ]
        lines.append(f"Relaties: {truncate('; '.join(pairs), 400)}")
    return lines or ["(geen wijzigingen)"]


def review_card(*, suggestion_id: str, delta: KbDelta, proposed_by: str, summary: str) -> Card:
    """An Approve / Reject request for the admins."""
    body = [heading("Voorstel voor de kennisgraaf")]
    if summary:
        body.append(text(summary))
    body.append(text("\n\n".join(f"- {line}" for line in delta_lines(delta))))
    body.append(text(f"Voorgesteld door {proposed_by}", subtle=True, size="Small"))
    actions = [
        execute("Goedkeuren", VERB_REVIEW, {"s": suggestion_id, "ok": True}, style="positive"),
        execute("Afwijzen", VERB_REVIEW, {"s": suggestion_id, "ok": False}, style="destructive"),
    ]
    return card(body, actions=actions)


def _when(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%H:%M UTC")


def _review_state(line: str, summary: str) -> Card:
    return card([heading("Voorstel voor de kennisgraaf"), text(summary or " "), text(line)])


def review_working_card(*, approve: bool, decided_by: str, at: datetime, summary: str) -> Card:
    """The clicked card until the KG owner reports: the decision, nothing claimed as done."""
    what = "goedkeuring" if approve else "afwijzing"
    return _review_state(
        f"{decided_by} gaf de {what} om {_when(at)}; de kennisgraaf wordt verwerkt…", summary
    )


def review_queued_card(*, approve: bool, decided_by: str, at: datetime, summary: str) -> Card:
    """No report in time: the decision waits in the queue."""
    what = "goedkeuring" if approve else "afwijzing"
    return _review_state(
        f"De {what} van {decided_by} ({_when(at)}) staat in de wachtrij: de kennisgraaf heeft "
        "het nog niet verwerkt. Kijk later bij **suggestions**.",
        summary,
    )


def report_line(report: KbDeltaApplied | None) -> str:
    """What the KG owner did with a decision, in one line."""
    if report is None:
        return "het besluit staat in de wachtrij; de kennisgraaf heeft het nog niet verwerkt."
    by = report.decided_by
    if report.outcome == "applied":
        parts = [f"{report.topics} onderwerp(en)" if report.topics else "",
                 f"{report.relations} relatie(s)" if report.relations else ""]  # fmt: skip
        return f"goedgekeurd door {by}; toegevoegd: {', '.join(p for p in parts if p)}."
    if report.outcome == "nothing_to_apply":
        return f"goedgekeurd door {by}; alles stond al in de kennisgraaf."
    if report.outcome == "rejected":
        return f"afgewezen door {by}."
    error = truncate(report.error or "onbekende fout", 1500)
    return f"het besluit van {by} kon niet worden toegepast: {error}"


def review_report_card(report: KbDeltaApplied, *, at: datetime, summary: str) -> Card:
    """The clicked card once the KG owner reported (applied, nothing new, rejected, failed)."""
    line = report_line(report)
    return _review_state(f"{line[:1].upper()}{line[1:]} ({_when(at)})", summary)


def leaderboard_card(boards: Any) -> Card:
    """This week's and the all-time ranking."""
    body: list[Element] = [heading(f"Ranglijst · week {boards.week}")]
    for title, rows in (("Deze week", boards.weekly), ("Altijd", boards.all_time)):
        body.append(text(title, weight="Bolder"))
        if not rows:
            body.append(text("Nog niemand.", subtle=True))
            continue
        body.append(facts([(f"{r.rank}. {r.user}", f"{r.points} punten") for r in rows[:10]]))
    return card(body)


def suggestions_card(rows: list[Any]) -> Card:
    """Pending suggestions, each with its Approve / Reject buttons."""
    if not rows:
        return card([text("Er wachten geen voorstellen.")])
    body: list[Element] = [heading(f"{len(rows)} voorstel(len) wachten")]
    for s in rows[:10]:
        body.append(text(str(s.context.get("summary") or s.id), weight="Bolder"))
        body.append(
            action_set(
                [
                    execute("Goedkeuren", VERB_REVIEW, {"s": s.id, "ok": True}, style="positive"),
                    execute("Afwijzen", VERB_REVIEW, {"s": s.id, "ok": False}),
                ]
            )
        )
    return card(body)
