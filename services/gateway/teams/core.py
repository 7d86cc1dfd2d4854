"""The one place the Teams surface reaches the gateway core (client API and shared views)."""

from __future__ import annotations

from services.gateway.core import ForbiddenError, GatewayClient, user_message
from services.gateway.core.background import Background
from services.gateway.core.quiz import LETTERS, QuestionView, parse_question
from services.gateway.core.uploads import check_text

__all__ = [
    "LETTERS",
    "Background",
    "ForbiddenError",
    "GatewayClient",
    "QuestionView",
    "check_text",
    "parse_question",
    "user_message",
]
