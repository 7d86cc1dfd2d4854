"""Console curation commands, as in Slack: /analyze (apply chosen actions), /undo, /stale,
/curriculum. Every call goes through the same core client (server-side admin checks, audit)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from services.gateway.console.base import ConsoleBase
from services.gateway.core.text import (
    CONTENT_KINDS_NL,
    PLAN_KINDS_NL,
    dutch,
    stale_reason_nl,
)


class CurationCommands(ConsoleBase):
    """Graph analysis, stale content and the curriculum."""

    async def analyze(self, _arg: str) -> None:
        """Show the plan, then apply the keys the admin types (empty: nothing)."""
        with self.out.status("De kennisgraaf wordt geanalyseerd…"):
            plan = await self.client.analysis.analyze(user_id=self.user, surface="console")
        if plan.summary:
            self.out.print(Text(plan.summary))
        if not plan.actions:
            self.out.print(Text("De analyse stelt geen wijzigingen voor.", style="green"))
            return
        table = Table(title=f"Plan {plan.plan_id}", title_justify="left")
        for column in ("sleutel", "actie", "wat", "waarom"):
            table.add_column(column, overflow="fold")
        for a in plan.actions:
            table.add_row(a.key, dutch(a.kind, PLAN_KINDS_NL), Text(a.what), Text(a.why))
        self.out.print(table)
        answer = await self.prompt("Welke toepassen? (bv. m0,d1; 'alles'; leeg = geen) ")
        chosen = (answer or "").strip()
        if not chosen:
            await self.client.analysis.discard(
                user_id=self.user, plan_id=plan.plan_id, surface="console"
            )
            self.out.print(Text("Niets toegepast; het plan is verworpen.", style="yellow"))
            return
        keys = (
            [a.key for a in plan.actions]
            if chosen.lower() == "alles"
            else [k.strip() for k in chosen.split(",") if k.strip()]
        )
        reply = await self.client.analysis.apply(
            user_id=self.user, plan_id=plan.plan_id, keys=keys, surface="console"
        )
        self.out.print(Text(
            f"Toegepast: {reply.merged} samengevoegd, {reply.deleted} verwijderd, "
            f"{reply.relations} relaties, {reply.relevance} relevanties. "
            f"Ongedaan maken: /undo {reply.undo_id}", style="green"))  # fmt: skip

    async def undo(self, arg: str) -> None:
        """Undo an applied analysis by its id."""
        if not arg:
            self.out.print(Text("Noem de wijziging, bijvoorbeeld /undo undo-…", style="yellow"))
            return
        reply = await self.client.analysis.undo(user_id=self.user, undo_id=arg, surface="console")
        self.out.print(Text(f"Ongedaan gemaakt: {reply.topics} onderwerpen hersteld.", "green"))

    async def stale(self, _arg: str) -> None:
        """The stale parts; regenerate all of them after a yes."""
        reply = await self.client.stale.list(user_id=self.user, surface="console")
        if not reply.parts:
            self.out.print(Text("Alle leerinhoud is actueel.", style="green"))
            return
        for p in reply.parts:
            why = "; ".join(stale_reason_nl(r) for r in p.reasons)
            kind = dutch(p.kind, CONTENT_KINDS_NL)
            self.out.print(Text(f"  {p.label or p.topic_id} ({kind}): {why}"))
        if not await self.yes_no(f"Deze {len(reply.parts)} onderdelen vernieuwen?"):
            return
        with self.out.status("De inhoud wordt vernieuwd…"):
            done = await self.client.stale.regenerate(
                user_id=self.user, parts=[p.part for p in reply.parts], surface="console"
            )
        for t in done.topics:
            kinds = ", ".join(dutch(k, CONTENT_KINDS_NL) for k in t.kinds)
            line = f"  {t.topic_id}: {kinds or 'niets'} vernieuwd"
            self.out.print(Text(line + (f"; mislukt: {t.error}" if t.error else ""),
                                style="red" if t.error else "green"))  # fmt: skip

    async def curriculum(self, arg: str) -> None:
        """The coming weeks; with `A; B; C` the order from this week on (admins)."""
        calls = self.client.curriculum
        if arg:
            await calls.set_order(user_id=self.user, refs=arg.split(";"), surface="console")
        for w in await calls.schedule():
            topic = w.label or w.topic_id or "vrije keuze (gewogen per persoon)"
            self.out.print(Text(f"  {w.week}  {topic}", style="" if w.topic_id else "dim"))

    async def yes_no(self, question: str) -> bool:
        """Ask until yes or no (the session provides it)."""
        raise NotImplementedError
