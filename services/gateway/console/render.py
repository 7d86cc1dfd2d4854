"""Rich renderings of the gateway's views for the console (the terminal twin of the Block Kit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from services.gateway.core.models import Diagnostics, GraphView, Leaderboards, Progress
from services.gateway.core.quiz import LETTERS, QuestionView, progress
from shared.bus import ChatReply, KbDelta
from shared.store import Source, Suggestion

CONSOLE_HELP = """Typ een vraag voor R42, of een commando:
  /learn [ONDERWERP] [article|slides|infographic]
                                        het onderwerp van deze week, of een ander
  /quiz                                 de quiz van deze week
  /leaderboard                          ranglijst (week en aller tijden)
  /ingest PAD                           een tekst- of markdownbestand inlezen
  /sources                              bronnen en hun status; /sources delete ID
                                        [--max-deletions N] verwijdert er een (beheerders)
  /suggestions                          openstaande voorstellen beoordelen
  /sync                                 het GitHub-handboek synchroniseren
  /graph ONDERWERP                      een onderwerp en zijn buren
  /topic ONDERWERP                      de kaart van een onderwerp; /topic edit|delete|
                                        merge|relate|unrelate ID … (beheerders)
  /analyze                              de kennisgraaf analyseren; acties kiezen (beheerders)
  /undo ID                              een toegepaste analyse ongedaan maken
  /stale                                verouderde leerinhoud vernieuwen (beheerders)
  /curriculum [A; B; …]                 de komende weken; met onderwerpen: de volgorde
  /diagnostics                          recente LLM-aanroepen en kosten
  /clear                                begin een nieuw gesprek
  /help, /quit
Een onderwerp voorstellen: vraag het R42 gewoon, bijvoorbeeld "Kun je een onderwerp
toevoegen over thuiswerken?", "Voeg toe dat de fietsvergoeding 23 cent per km is" of "Er
is een rol Scrum Master die de sprints begeleidt". R42 laat het voorstel zien; antwoord
met j om het in te dienen."""

ADMIN_NOTE = (
    "In de console ben je beheerder: voorstellen die je bevestigt, worden meteen toegepast."
)
MEMBER_NOTE = (
    "R42_ADMINS noemt jou niet als beheerder: voorstellen die je bevestigt, gaan ter "
    "beoordeling naar een beheerder en /sync wordt geweigerd. Voorstellen beoordelen met "
    "/suggestions en bestanden inlezen met /ingest kan hier wel, want dit is je eigen terminal."
)
PROPOSAL_STATUS = {
    "applied": "toegepast",
    "pending_review": "ter beoordeling bij een beheerder",
    "declined": "niet ingediend",
    "not_found": "niet gevonden",
    "already_decided": "al besloten",
}


def help_text(*, admin: bool) -> str:
    """The console's help, truthful about the user's role."""
    return f"{CONSOLE_HELP}\n{ADMIN_NOTE if admin else MEMBER_NOTE}"


def plural(n: int, one: str, many: str) -> str:
    """`1 onderwerp`, `2 onderwerpen`."""
    return f"{n} {one if n == 1 else many}"


def answer(reply: ChatReply) -> list[Any]:
    """R42's answer: markdown text, then the sources and markers."""
    parts: list[Any] = [Panel(Markdown(reply.text or "…"), title="R42", title_align="left")]
    if reply.sources:
        labels = " · ".join(s.label for s in reply.sources)
        parts.append(Text(f"{reply.sources_label}: {labels}", style="dim"))
    if reply.offline:
        parts.append(Text("offline-modus: een voorbeeldantwoord zonder taalmodel", style="dim"))
    if reply.error_ref:
        parts.append(Text(f"referentie: {reply.error_ref}", style="dim"))
    return parts


def delta(d: KbDelta) -> Text:
    """A proposed change, one line per topic and relation."""
    text = Text(d.reason + "\n", style="bold")
    for t in d.topics:
        text.append(f"  + {t.label} ({t.id}, {t.type})\n")
    for r in d.relations:
        text.append(f"  + {r.source} —{r.type}→ {r.target}\n")
    return text


def article(data: dict[str, Any], *, label: str) -> Markdown:
    """An article as markdown."""
    lines = [f"# {data.get('title') or label}", "", str(data.get("intro") or "")]
    for section in data.get("sections") or []:
        if isinstance(section, dict):
            lines += ["", f"## {section.get('heading', '')}", "", str(section.get("body", ""))]
    takeaways = [str(t) for t in data.get("key_takeaways") or []]
    if takeaways:
        lines += ["", "**Kernpunten**", ""] + [f"- {t}" for t in takeaways]
    return Markdown("\n".join(lines))


def slide(deck: dict[str, Any], index: int) -> Panel:
    """One slide."""
    slides = [s for s in deck.get("slides") or [] if isinstance(s, dict)]
    s = slides[index]
    body = "\n".join(f"• {b}" for b in s.get("bullets") or [])
    note = s.get("speaker_note")
    if note:
        body += f"\n\n[dim]{note}[/dim]"
    return Panel(
        body, title=f"{index + 1}/{len(slides)} · {s.get('title', '')}", title_align="left"
    )


def infographic(data: dict[str, Any]) -> list[Any]:
    """The infographic's parts as text."""
    parts: list[Any] = [
        Text(str(data.get("headline", "")), style="bold"),
        Text(str(data.get("tagline", ""))),
    ]
    stats = Table(show_header=False)
    for s in data.get("stats") or []:
        if isinstance(s, dict):
            stats.add_row(Text(str(s.get("value", "")), style="bold"), str(s.get("label", "")))
    parts.append(stats)
    for i, step in enumerate(data.get("steps") or []):
        if isinstance(step, dict):
            parts.append(Text(f"{step.get('number', i + 1)}. {step.get('text', '')}"))
    if data.get("quote"):
        parts.append(Text(f"“{data['quote']}”", style="italic"))
    return parts


def question(q: QuestionView) -> Panel:
    """A quiz question with lettered options."""
    options = "\n".join(f"  {LETTERS[i]}. {o}" for i, o in enumerate(q.options))
    return Panel(f"{q.text}\n\n{options}", title=progress(q.index, q.count), title_align="left")


def leaderboards(boards: Leaderboards, *, me: str) -> list[Table]:
    """Weekly and all-time tables."""
    tables = []
    for title, rows in (
        (f"Deze week ({boards.week})", boards.weekly),
        ("Aller tijden", boards.all_time),
    ):
        table = Table(title=title, title_justify="left")
        table.add_column("#", justify="right")
        table.add_column("wie")
        table.add_column("punten", justify="right")
        for e in rows:
            table.add_row(
                str(e.rank), Text(e.user, style="bold" if e.user == me else ""), str(e.points)
            )
        if not rows:
            table.add_row("", "nog geen scores", "")
        tables.append(table)
    return tables


def sources(rows: Sequence[Source]) -> Table:
    """Sources and their status."""
    table = Table(title="Bronnen", title_justify="left")
    for name in ("id", "naam", "status", "chunks", "fout"):
        table.add_column(name)
    for s in rows:
        chunks = f"{s.chunks_done}/{s.chunks_total}" if s.chunks_total else "–"
        table.add_row(s.id, Text(s.name), s.status, chunks, Text(s.error or ""))
    return table


def suggestion(s: Suggestion) -> Panel:
    """One pending suggestion."""
    try:
        body: Any = delta(KbDelta.model_validate(s.delta))
    except ValueError:
        body = Text("(onleesbaar voorstel)")
    return Panel(body, title=f"{s.id} · door {s.proposed_by}", title_align="left")


def progress_line(name: str, p: Progress) -> Text:
    """One progress line of an ingest."""
    if p.state == "failed":
        return Text(f"{name}: mislukt — {p.error}", style="red")
    if p.state == "cancelled":
        return Text(f"{name}: geannuleerd", style="yellow")
    counts = (
        f"{plural(p.topics_added, 'onderwerp', 'onderwerpen')} toegevoegd, "
        f"{p.topics_updated} bijgewerkt, "
        f"{plural(p.relations_added, 'relatie', 'relaties')} toegevoegd"
    )
    if p.state == "completed":
        return Text(f"{name}: klaar — {counts}", style="green")
    return Text(f"{name}: deel {p.chunks_done}/{p.chunks_total or '?'} · {counts}")


def graph(view: GraphView) -> list[Any]:
    """A topic and its neighbours."""
    t = view.topic
    parts: list[Any] = [Text(f"{t.label} ({t.id}, {t.type})", style="bold")]
    if t.description:
        parts.append(Text(t.description))
    for rel, outgoing, n in view.neighbours:
        parts.append(Text(f"  {rel} → {n.label}" if outgoing else f"  {n.label} {rel} → dit"))
    if not view.neighbours:
        parts.append(Text("  geen relaties", style="dim"))
    return parts


def diagnostics(diag: Diagnostics) -> list[Any]:
    """This week's totals and the recent calls."""
    parts: list[Any] = [
        Text(
            f"Deze week: {diag.week_calls} aanroepen, {diag.week_errors} fouten, "
            f"${diag.week_cost_usd:.4f} (totaal opgeslagen: {diag.total_calls})"
        )
    ]
    table = Table(title="Recente aanroepen", title_justify="left")
    for name in ("tijd", "taak", "model", "in", "uit", "ms", "$", "ok"):
        table.add_column(name)
    for c in diag.recent:
        table.add_row(
            f"{c.occurred_at:%d-%m %H:%M}",
            c.task,
            c.model,
            str(c.input_tokens),
            str(c.output_tokens),
            f"{c.duration_ms:.0f}",
            f"{c.cost_usd:.4f}",
            "ok" if c.ok else (c.error_msg or "fout"),
        )
    parts.append(table)
    return parts
