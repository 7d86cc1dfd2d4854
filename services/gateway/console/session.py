"""The console chat `r42 up` opens without Slack tokens: the same features through the same client.

The gateway treats the console user as an admin (it is the operator's own terminal), so
/ingest, /suggestions and /diagnostics are open to them; the services re-check R42_ADMINS,
so when that list does not name them, their chat proposals wait for review and /sync is
refused, and /help says so.
Input runs in a daemon thread so the event loop keeps serving bus events while waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from rich.console import Console
from rich.text import Text

from services.gateway.console import render, warmup
from services.gateway.console.admin import AdminCommands
from services.gateway.console.base import InputFn, ask
from services.gateway.console.curation import CurationCommands
from services.gateway.console.learning import LearningCommands
from services.gateway.console.topics import TopicCommands
from services.gateway.core import GatewayClient
from services.gateway.core.waiter import EventWaiter, reply_key, source_key
from shared.bus import (
    ContentReady,
    QuizReady,
    QuizScored,
    SourceCompleted,
    SourceFailed,
    SourceProgress,
    build_broker,
    start_broker,
)
from shared.config import Settings
from shared.errors import R42Error
from shared.identity import local_user_id
from shared.runtime.service import resolve_nats_url
from shared.runtime.session import client_auth
from shared.store import open_store

THINKING = "R42 denkt na…"
GREETINGS = frozenset(
    {"hallo", "hoi", "hey", "hi", "dag", "goedemorgen", "goedemiddag", "goedenavond", "hallo r42"}
)
YES, NO = ("j", "ja", "y", "yes"), ("n", "nee", "no")


class ConsoleSession(LearningCommands, AdminCommands, TopicCommands, CurationCommands):
    """One console user talking to R42."""

    _sample_checked = False  # the sample handbook was read (or waited for) once

    async def loop(self) -> None:
        """Read commands until /quit or end of input."""
        self.out.print(Text("R42 console — typ /help voor de commando's.", style="bold"))
        while (line := await self.prompt("jij> ")) is not None:
            line = line.strip()
            if not line:
                continue
            if line in ("/quit", "/exit", "/q"):
                break
            try:
                await self.dispatch(line)
            except R42Error as exc:
                self.out.print(Text(f"! {exc}", style="red"))
        self.out.print(Text("Tot ziens!", style="dim"))

    async def dispatch(self, line: str) -> None:
        """Run one command or chat turn."""
        if not line.startswith("/"):
            await self.chat(line)
            return
        cmd, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        handlers = {
            "help": self.help,
            "learn": self.learn,
            "quiz": self.quiz,
            "leaderboard": self.leaderboard,
            "ingest": self.ingest,
            "sources": self.sources,
            "suggestions": self.suggestions,
            "graph": self.graph,
            "topic": self.topic,
            "analyze": self.analyze,
            "undo": self.undo,
            "stale": self.stale,
            "curriculum": self.curriculum,
            "diagnostics": self.diagnostics,
            "sync": self.sync,
            "clear": self.clear,
        }
        handler = handlers.get(cmd.lower())
        if handler is None:
            self.out.print(Text(f"Onbekend commando /{cmd}; typ /help.", style="yellow"))
            return
        await handler(arg)

    async def help(self, _arg: str) -> None:
        """Show the commands."""
        # The services' rule: an admin is on R42_ADMINS (an empty list names nobody).
        admin = self.user in self.client.settings.admins
        self.out.print(render.help_text(admin=admin), markup=False)

    async def yes_no(self, question: str) -> bool:
        """Ask until the answer is yes or no; end of input counts as no."""
        while True:
            answer = await self.prompt(f"{question} [j/n] ")
            if answer is None:
                return False
            if answer.strip().lower() in YES + NO:
                return answer.strip().lower() in YES
            self.out.print(Text("Antwoord met j (ja) of n (nee).", style="yellow"))

    async def chat(self, text: str) -> None:
        """One turn with R42, then the proposal question if there is one."""
        if " ".join(text.lower().strip(" !.,?").split()) in GREETINGS:
            self.out.print(
                Text(
                    "Hallo! Stel me een vraag over het bedrijf, bijvoorbeeld "
                    '"Hoe vraag ik verlof aan?", of typ /help voor wat ik nog meer kan.'
                )
            )
            return
        if await self.client.chat.quiz_active(self.user):
            self.out.print(Text("Je quiz loopt nog; R42 antwoordt weer na de quiz.", style="dim"))
            return
        first = not self._sample_checked
        await self._sample_read()
        with self.out.status(THINKING):
            # The first question of a session waits until R42 has applied what was just read.
            reply = await self.client.chat.ask(
                user_id=self.user, text=text, user_name=self.user, turn_id=uuid.uuid4().hex,
                settle_kb=first,
            )  # fmt: skip
        for part in render.answer(reply):
            self.out.print(part)
        if reply.proposal is None:
            return
        self.out.print(render.delta(reply.proposal.delta))
        accept = await self.yes_no("Wil je dit toevoegen aan de kennisgraaf?")
        result = await self.client.chat.decide_proposal(
            proposal_id=reply.proposal.id, user_id=self.user, accept=accept
        )
        status = render.PROPOSAL_STATUS.get(result.status, result.status)
        self.out.print(Text(f"Voorstel {status}. {result.message}".strip(), style="cyan"))

    async def _sample_read(self) -> None:
        """On a first start, wait (and say so) until the sample handbook is read."""
        if self._sample_checked:
            return
        sources = self.client.ctx.store.sources
        progress = await warmup.sample_progress(sources)
        if progress is not None:
            done, total = progress
            self.out.print(Text(warmup.READING.format(done=done, total=total), style="dim"))
            with self.out.status(THINKING):
                read = await warmup.wait_for_sample(sources)
            if not read:
                self.out.print(Text(warmup.NOT_DONE, style="yellow"))
        self._sample_checked = True

    async def clear(self, _arg: str) -> None:
        """Start a new conversation."""
        cleared = await self.client.chat.clear(user_id=self.user)
        self.out.print(Text(f"Gesprek gewist ({cleared.removed} berichten). {cleared.greeting}"))


def console_user() -> str:
    """The console's user id: the OS user, the same id `r42 quiz take` scores."""
    return local_user_id()


async def run(
    *,
    settings: Settings,
    input_fn: InputFn | None = None,
    out: Console | None = None,
    namespace: str = "",
    user_id: str | None = None,
    opened: asyncio.Event | None = None,
) -> None:
    """Run the console until /quit or end of input (what `r42 up` opens without Slack).

    With `opened`, it connects at once but shows nothing until the event is set: `r42 up`
    starts it while the services start and opens it below its banner.
    """
    user = user_id or console_user()
    out = out or Console(highlight=False)
    broker = build_broker(
        resolve_nats_url(settings), name="r42-console", auth=client_auth(settings)
    )
    store = await open_store(settings.store_url)
    waiter = EventWaiter(broker, namespace=namespace)
    try:
        await start_broker(broker, namespace=namespace, replicas=settings.nats_replicas)
        await waiter.start(
            {
                ContentReady: reply_key,
                QuizReady: reply_key,
                QuizScored: reply_key,
                SourceProgress: source_key,
                SourceCompleted: source_key,
                SourceFailed: source_key,
            }
        )
        client = GatewayClient(
            broker=broker,
            store=store,
            settings=settings,
            namespace=namespace,
            actor="console",
            admins={*settings.admins, user},
        )
        session = ConsoleSession(client, waiter, out=out, input_fn=input_fn or input, user_id=user)
        if opened is not None:
            await opened.wait()
        await session.loop()
    finally:
        await waiter.close()
        with contextlib.suppress(Exception):
            await broker.stop()
        await store.close()


__all__ = ["ConsoleSession", "ask", "console_user", "run"]
