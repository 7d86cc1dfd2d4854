"""Request/reply contract of the content service's refine call (`rpc.content.refine`).

An admin asks for a small change to a topic's article; the content service turns the
instruction into patch operations (never a rewrite), applies them to the stored article
and answers with the result. Callers: the gateway (Slack Refine modal, console).
Errors come back as error replies (bad_input for a non-admin, a missing article or an
invalid result). The fields mirror services/content/rpc.py, which serves it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

REFINE_SUBJECT = "rpc.content.refine"
"""Refine a topic's article: RefineRequest → RefineReply."""
MAX_INSTRUCTION_CHARS = 4000


class RefineRequest(BaseModel):
    """Refine the article of a topic (id, label or custom topic) by an instruction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topic: str = Field(min_length=1, max_length=200)
    instruction: str = Field(min_length=1, max_length=MAX_INSTRUCTION_CHARS)
    user_id: str = Field(min_length=1, max_length=200)


class RefineReply(BaseModel):
    """The refined article as stored, and the patch operations applied in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topic_id: str
    article: dict[str, Any]
    applied: list[str]
    offline: bool = False


__all__ = ["MAX_INSTRUCTION_CHARS", "REFINE_SUBJECT", "RefineReply", "RefineRequest"]
