"""The client every surface uses: one small object per feature over one shared context.

Bus calls and store reads live in the feature modules, so Slack, Teams and the console
behave the same; admin-only calls check the server-side admin list there, not in a surface.
"""

from __future__ import annotations

from collections.abc import Iterable

from faststream.nats import NatsBroker

from services.gateway.core.analysis import AnalysisCalls
from services.gateway.core.chat import ChatCalls
from services.gateway.core.context import CoreContext
from services.gateway.core.curriculum import CurriculumCalls
from services.gateway.core.feedback import FeedbackCalls
from services.gateway.core.learning import LearningCalls
from services.gateway.core.quiz import QuizCalls
from services.gateway.core.reads import ReadCalls
from services.gateway.core.reviews import ReviewCalls
from services.gateway.core.sources import SourceCalls
from services.gateway.core.stale import StaleCalls
from services.gateway.core.topics import TopicCalls
from shared.config import Settings
from shared.store import Store


class GatewayClient:
    """chat, feedback, learning, quiz, sources, reviews and reads over one context."""

    def __init__(
        self,
        *,
        broker: NatsBroker,
        store: Store,
        settings: Settings,
        namespace: str = "",
        actor: str = "gateway",
        admins: Iterable[str] | None = None,
        chat_timeout: float = 150.0,
    ) -> None:
        self.ctx = CoreContext.create(
            broker=broker,
            store=store,
            settings=settings,
            namespace=namespace,
            actor=actor,
            admins=admins,
            chat_timeout=chat_timeout,
        )
        self.chat = ChatCalls(self.ctx)
        self.feedback = FeedbackCalls(self.ctx)
        self.learning = LearningCalls(self.ctx)
        self.quiz = QuizCalls(self.ctx)
        self.sources = SourceCalls(self.ctx)
        self.reviews = ReviewCalls(self.ctx)
        self.reads = ReadCalls(self.ctx)
        self.analysis = AnalysisCalls(self.ctx)
        self.curriculum = CurriculumCalls(self.ctx)
        self.stale = StaleCalls(self.ctx)
        self.topics = TopicCalls(self.ctx)

    @property
    def settings(self) -> Settings:
        """The settings the client was built with."""
        return self.ctx.settings

    @property
    def admins(self) -> frozenset[str]:
        """The server-side admin list."""
        return self.ctx.admins

    def is_admin(self, user_id: str) -> bool:
        """Whether a user is on the server-side admin list."""
        return self.ctx.is_admin(user_id)

    def require_admin(self, user_id: str, what: str) -> None:
        """ForbiddenError unless the user is an admin."""
        self.ctx.require_admin(user_id, what)
