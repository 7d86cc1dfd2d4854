"""Console admin commands: /ingest, /sources, /suggestions, /sync, /graph, /diagnostics."""

from __future__ import annotations

import asyncio

from rich.text import Text

from services.gateway.console import render
from services.gateway.console.sources import SourceCommands
from services.gateway.core.models import Progress, SuggestionDecision
from services.gateway.core.sources import describe_sync
from services.gateway.core.uploads import read_upload
from services.gateway.core.waiter import next_event
from shared.bus import SourceFailed, SourceProgress

INGEST_TIMEOUT_S = 1800.0


class AdminCommands(SourceCommands):
    """Sources, reviews and the graph (the console user is an admin)."""

    async def ingest(self, arg: str) -> None:
        """Read a text or markdown file and follow its extraction to the end."""
        name, text = await asyncio.to_thread(
            read_upload, arg, max_bytes=self.client.settings.max_upload_bytes
        )
        result = await self.client.sources.ingest_text(name=name, text=text, user_id=self.user)
        if result.duplicate:
            self.out.print(
                Text(
                    f"Al ingelezen als {result.source.name} ({result.source.status}).",
                    style="yellow",
                )
            )
            return
        await self._follow(result.source.id, result.source.name)

    async def _follow(self, source_id: str, name: str) -> None:
        async with self.waiter.watch(source_id) as queue:
            # The source may have progressed before the watch began: the store is the truth.
            stored = await self.client.sources.get(source_id)
            if stored is not None and stored.status in ("completed", "failed", "cancelled"):
                self.out.print(Text(f"{name}: {stored.status} {stored.error or ''}".strip()))
                return
            with self.out.status(f"{name} wordt ingelezen…"):
                while True:
                    event = await next_event(queue, timeout=INGEST_TIMEOUT_S, what=name)
                    assert isinstance(event, (SourceProgress, SourceFailed))
                    progress = Progress.of(event)
                    self.out.print(render.progress_line(name, progress))
                    if progress.final:
                        return

    async def sources(self, arg: str) -> None:
        """Sources and their status; /sources delete … goes to SourceCommands."""
        if arg.strip():
            await self.source_command(arg)
            return
        self.out.print(render.sources(await self.client.sources.list()))

    async def suggestions(self, _arg: str) -> None:
        """Pending suggestions: approve, reject or skip each."""
        pending = await self.client.reviews.pending(user_id=self.user)
        if not pending:
            self.out.print("Er zijn geen openstaande voorstellen.")
        questions: list[str] = []
        for s in pending:
            self.out.print(render.suggestion(s))
            choice = await self._review_choice(questions)
            if choice not in ("g", "a"):
                continue
            decision = await self.client.reviews.decide(
                suggestion_id=s.id, user_id=self.user, approve=choice == "g", surface="console"
            )
            self.out.print(Text(f"{s.id}: {describe_decision(decision)}", style="cyan"))
        # A question typed at the review prompt is answered once the review is done.
        for question in questions:
            self.out.print(Text(f"Je vraag: {question}", style="dim"))
            await self.chat(question)

    async def _review_choice(self, questions: list[str]) -> str:
        """g, a or o (also at end of input); anything longer is kept as a question."""
        while True:
            line = (await self.prompt("[g]oedkeuren / [a]fwijzen / [o]verslaan> ") or "o").strip()
            word = line.lower()
            if word in ("g", "goedkeuren", "a", "afwijzen", "o", "overslaan", ""):
                return word[:1] or "o"
            if len(line.split()) > 1 or line.endswith("?"):
                questions.append(line)
                self.out.print(
                    Text("Je vraag beantwoord ik na de beoordeling. Kies nu g, a of o.", "yellow")
                )
            else:
                self.out.print(Text("Kies g (goedkeuren), a (afwijzen) of o (overslaan).", "red"))

    async def chat(self, text: str) -> None:
        """One chat turn (the session provides it)."""
        raise NotImplementedError

    async def sync(self, _arg: str) -> None:
        """Sync the GitHub handbook through the extractor."""
        with self.out.status("Het handboek wordt gesynchroniseerd…"):
            reply = await self.client.sources.sync_handbook(user_id=self.user)
        self.out.print(Text(describe_sync(reply), style="green"))

    async def graph(self, arg: str) -> None:
        """A topic and its neighbours."""
        if not arg:
            self.out.print(Text("Noem een onderwerp, bijvoorbeeld /graph onboarding.", "yellow"))
            return
        for part in render.graph(await self.client.reads.graph(arg)):
            self.out.print(part)

    async def diagnostics(self, _arg: str) -> None:
        """Recent LLM calls and this week's cost."""
        for part in render.diagnostics(await self.client.reads.diagnostics(user_id=self.user)):
            self.out.print(part)


def describe_decision(decision: SuggestionDecision) -> str:
    """One line on what an Approve / Reject did."""
    verdict = {"approved": "goedgekeurd", "rejected": "afgewezen"}.get(decision.decision or "", "")
    if decision.status == "decided":
        return f"{verdict}; de kennisgraaf wordt bijgewerkt" if decision.approved else verdict
    if decision.status == "already_decided":
        return f"al {verdict or 'besloten'}" + (
            f" door {decision.decided_by}" if decision.decided_by else ""
        )
    return {"not_found": "bestaat niet (meer)", "forbidden": "alleen voor beheerders"}.get(
        decision.status, decision.status
    )
