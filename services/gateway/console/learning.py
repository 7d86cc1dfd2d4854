"""Console commands for learning: /learn, /quiz, /leaderboard."""

from __future__ import annotations

import base64
from typing import Any

from rich.text import Text

from services.gateway.console import render
from services.gateway.console.base import VIA, ConsoleBase
from services.gateway.core import new_request_id
from services.gateway.core.learning import parse_learn
from services.gateway.core.quiz import LETTERS, parse_question
from services.gateway.core.waiter import next_event
from shared.bus import ContentReady, QuizReady, QuizScored
from shared.errors import BadInputError

CONTENT_TIMEOUT_S = 300.0
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def is_kind(word: str) -> bool:
    """Whether a /learn word names a content format."""
    try:
        parse_learn(word)
    except BadInputError:
        return False
    return True


QUIZ_TIMEOUT_S = 120.0


class LearningCommands(ConsoleBase):
    """This week's content, the quiz and the rankings."""

    async def learn(self, arg: str) -> None:
        """This week's (or a named topic's) article, slides or infographic."""
        words = arg.split()
        kind = parse_learn(words.pop() if words and is_kind(words[-1]) else "")
        if words:
            topic = (await self.client.reads.graph(" ".join(words))).topic
            topic_id, label, heading = topic.id, topic.label, f"Onderwerp: {topic.label}"
        else:
            weekly = await self.client.learning.weekly_topic(self.user)
            topic_id, label = weekly.topic_id, weekly.label
            heading = f"Onderwerp van week {weekly.week}: {weekly.label}"
        ready = await self._request_content(topic_id, kind)
        if not ready.ok:
            self.out.print(Text(f"De inhoud kon niet worden gemaakt: {ready.error}", style="red"))
            return
        content = await self.client.learning.content(topic_id)
        part = getattr(content, kind, None) if content else None
        if not isinstance(part, dict):
            self.out.print(Text("Deze inhoud is er (nog) niet.", style="yellow"))
            return
        self.out.print(Text(heading, style="bold"))
        if kind == "article":
            self.out.print(render.article(part, label=label))
        elif kind == "slides":
            for i in range(len(part.get("slides") or [])):
                self.out.print(render.slide(part, i))
        else:
            for piece in render.infographic(part):
                self.out.print(piece)
            self._save_picture(part, topic_id)

    def _save_picture(self, part: dict[str, Any], topic_id: str) -> None:
        """Write the stored infographic PNG under the data dir and say where it is."""
        image = part.get("image") if isinstance(part.get("image"), dict) else None
        try:
            png = base64.b64decode(str((image or {}).get("base64") or ""), validate=True)
        except ValueError:
            png = b""
        if not png.startswith(PNG_SIGNATURE):
            self.out.print(Text("Er is (nog) geen afbeelding bij deze infographic.", style="dim"))
            return
        folder = self.client.settings.data_dir.resolve() / "infographics"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{topic_id}.png"
        partial = path.with_suffix(".png.part")
        partial.write_bytes(png)
        partial.replace(path)  # a viewer never sees half a picture
        self.out.print(Text(f"Afbeelding opgeslagen: {path}", style="cyan"), soft_wrap=True)

    async def _request_content(self, topic_id: str, kind: str) -> ContentReady:
        key = new_request_id()
        async with self.waiter.watch(key) as queue:
            with self.out.status(f"De inhoud wordt gemaakt… ({kind})"):
                await self.client.learning.request_content(
                    user_id=self.user,
                    topic_id=topic_id,
                    kind=kind,  # type: ignore[arg-type]
                    reply_to={"via": VIA, "request_id": key},
                )
                event = await next_event(queue, timeout=CONTENT_TIMEOUT_S, what="content")
        assert isinstance(event, ContentReady)
        return event

    async def quiz(self, _arg: str) -> None:
        """This week's quiz: one question at a time, then the score."""
        key = new_request_id()
        async with self.waiter.watch(key) as queue:
            with self.out.status("De quiz wordt klaargezet…"):
                await self.client.quiz.start(
                    user_id=self.user, reply_to={"via": VIA, "request_id": key}
                )
                ready = await next_event(queue, timeout=QUIZ_TIMEOUT_S, what="quiz")
        assert isinstance(ready, QuizReady)
        if not ready.ok or not ready.attempt_id:
            self.out.print(Text(f"De quiz kon niet starten: {ready.error}", style="red"))
            return
        q = parse_question(ready.question)
        while True:
            self.out.print(render.question(q))
            choice = await self._choice(len(q.options))
            if choice is None:
                self.out.print(Text("Quiz gepauzeerd; ga verder met /quiz.", style="dim"))
                return
            scored = await self._answer(ready.attempt_id, q.index, choice)
            if scored.error:
                self.out.print(Text(f"Dit antwoord telt niet: {scored.error}", style="red"))
                return
            verdict = (
                "Goed!" if scored.correct else f"Helaas, het was {LETTERS[scored.correct_index]}."
            )
            self.out.print(Text(verdict, style="green" if scored.correct else "red"))
            if scored.explanation:
                self.out.print(Text(scored.explanation, style="dim"))
            if scored.finished or scored.next_question is None:
                self.out.print(
                    Text(
                        f"Quiz afgerond: {scored.score} van de {scored.question_count} goed.",
                        style="bold",
                    )
                )
                return
            q = parse_question(scored.next_question, count=scored.question_count)

    async def _choice(self, n: int) -> int | None:
        letters = LETTERS[:n]
        while True:
            line = await self.prompt(f"antwoord ({'/'.join(letters)}, of 'stop')> ")
            if line is None or line.strip().lower() in ("stop", "/quit"):
                return None
            pick = line.strip().upper()[:1]
            if pick and pick in letters:
                return letters.index(pick)
            self.out.print(Text(f"Kies een van {', '.join(letters)}.", style="yellow"))

    async def _answer(self, attempt_id: str, index: int, choice: int) -> QuizScored:
        key = new_request_id()
        async with self.waiter.watch(key) as queue:
            await self.client.quiz.answer(
                attempt_id=attempt_id,
                user_id=self.user,
                question_index=index,
                choice_index=choice,
                reply_to={"via": VIA, "request_id": key},
            )
            event = await next_event(queue, timeout=QUIZ_TIMEOUT_S, what="the quiz answer")
        assert isinstance(event, QuizScored)
        return event

    async def leaderboard(self, _arg: str) -> None:
        """Weekly and all-time rankings."""
        for table in render.leaderboards(await self.client.quiz.leaderboards(), me=self.user):
            self.out.print(table)
