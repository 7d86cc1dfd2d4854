"""The curriculum: which topic each coming ISO week teaches (/learn and the quiz follow it).

The week's topic itself is decided in one place (shared/kb/weekly.py, asked through the
quiz service); this module only reads and writes the schedule, for admins, audited.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from services.gateway.core.audit import audit
from services.gateway.core.context import CoreContext
from shared.errors import BadInputError
from shared.kb.weekly import iso_week
from shared.store import AuditSurface, Topic

MAX_WEEKS = 52
SHOWN_WEEKS = 12


@dataclass(frozen=True)
class ScheduledWeek:
    """One week of the schedule (topic None: the stable weighted draw decides)."""

    week: str
    topic_id: str | None
    label: str | None


def week_after(week: str, n: int) -> str:
    """The ISO week `n` weeks after `week` ('YYYY-Www')."""
    year, number = int(week[:4]), int(week[6:])
    return iso_week(date.fromisocalendar(year, number, 1) + timedelta(weeks=n))


def this_week() -> str:
    """The current ISO week (UTC)."""
    return iso_week(datetime.now(UTC))


def resolve(refs: list[str], topics: list[Topic]) -> tuple[list[Topic], list[str]]:
    """Topics by id or label (case-insensitive); the refs that match none or are excluded."""
    by_key = {t.id.lower(): t for t in topics} | {t.label.lower(): t for t in topics}
    found, problems = [], []
    for ref in refs:
        topic = by_key.get(ref.strip().lower())
        if topic is None:
            problems.append(f"‘{ref}’ bestaat niet in de kennisgraaf")
        elif topic.learning_relevance == "exclude":
            problems.append(f"‘{topic.label}’ is uitgesloten van leren (relevantie exclude)")
        else:
            found.append(topic)
    return found, problems


class CurriculumCalls:
    """Read the schedule (anyone); set or clear it (admins)."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def schedule(
        self, *, start: str | None = None, weeks: int = SHOWN_WEEKS
    ) -> list[ScheduledWeek]:
        """The coming weeks from `start` (default: this week), scheduled or not."""
        start = start or this_week()
        planned = {e.week: e.topic_id for e in await self.ctx.store.curriculum.all()}
        ids = [planned.get(week_after(start, i)) for i in range(weeks)]
        labels = {
            t.id: t.label for t in await self.ctx.store.topics.get_many({i for i in ids if i})
        }
        return [
            ScheduledWeek(week_after(start, i), tid, labels.get(tid) if tid else None)
            for i, tid in enumerate(ids)
        ]

    async def set_order(
        self, *, user_id: str, refs: list[str], surface: AuditSurface, start: str | None = None
    ) -> list[ScheduledWeek]:
        """Teach `refs` in this order from `start`; later scheduled weeks are cleared."""
        await self._admin(user_id, "curriculum.set", surface)
        refs = [r for r in (r.strip() for r in refs) if r]
        if not refs:
            raise BadInputError("noem minstens één onderwerp, één per regel")
        if len(refs) > MAX_WEEKS:
            raise BadInputError(f"plan hoogstens {MAX_WEEKS} weken vooruit")
        topics, problems = resolve(refs, await self.ctx.store.topics.list())
        if problems:
            raise BadInputError("; ".join(problems[:10]))
        start = start or this_week()
        before = await self._planned_from(start)
        repo = self.ctx.store.curriculum
        for week in before:
            await repo.delete(week)
        for i, topic in enumerate(topics):
            await repo.set(week_after(start, i), topic.id)
        after = {week_after(start, i): t.id for i, t in enumerate(topics)}
        await audit(self.ctx, actor=user_id, action="curriculum.set", target=start, allowed=True,
                    surface=surface, before=before, after=after)  # fmt: skip
        return await self.schedule(start=start, weeks=max(len(topics), 1))

    async def clear(self, *, user_id: str, surface: AuditSurface) -> int:
        """Unschedule every week from this one on; how many were scheduled."""
        await self._admin(user_id, "curriculum.clear", surface)
        start = this_week()
        before = await self._planned_from(start)
        for week in before:
            await self.ctx.store.curriculum.delete(week)
        await audit(self.ctx, actor=user_id, action="curriculum.clear", target=start,
                    allowed=True, surface=surface, before=before)  # fmt: skip
        return len(before)

    async def _planned_from(self, start: str) -> dict[str, str]:
        return {
            e.week: e.topic_id for e in await self.ctx.store.curriculum.all() if e.week >= start
        }

    async def _admin(self, user_id: str, action: str, surface: AuditSurface) -> None:
        if not self.ctx.is_admin(user_id):
            await audit(self.ctx, actor=user_id, action=action, target="curriculum",
                        allowed=False, surface=surface, after={"outcome": "refused"})  # fmt: skip
        self.ctx.require_admin(user_id, "het curriculum instellen")
