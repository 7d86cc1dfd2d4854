"""Request/reply contract of stale learning content (`rpc.content.stale`, `.regenerate`).

An admin lists the parts (article, slides, infographic) made with an older prompt or
before their topic changed, and regenerates a selection. The content service checks the
user against its own admin list; errors come back as error replies (bad_input).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

STALE_LIST_SUBJECT = "rpc.content.stale"
"""StaleListRequest → StaleListReply."""
STALE_REGENERATE_SUBJECT = "rpc.content.regenerate"
"""RegenerateRequest → RegenerateReply (one model call per part: allow minutes)."""

_User = Field(min_length=1, max_length=200)
_Part = Field(pattern=r"^[^|]{1,200}\|(article|slides|infographic)$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StaleListRequest(_Model):
    """Who asks (authorised by the content service)."""

    user_id: str = _User


class StalePart(_Model):
    """One stale part and why (`part` is 'TOPIC|KIND')."""

    part: str = _Part
    topic_id: str
    label: str = ""
    kind: str
    reasons: list[str] = Field(default_factory=list)
    refined: bool = False


class StaleListReply(_Model):
    """Every stale part, by topic then kind."""

    parts: list[StalePart] = Field(default_factory=list)


class RegenerateRequest(_Model):
    """Regenerate these parts ('TOPIC|KIND')."""

    user_id: str = _User
    parts: list[str] = Field(min_length=1, max_length=200)


class RegeneratedTopic(_Model):
    """What was regenerated for one topic, or why not."""

    topic_id: str
    kinds: list[str] = Field(default_factory=list)
    error: str = ""


class RegenerateReply(_Model):
    """One entry per topic of the request."""

    topics: list[RegeneratedTopic] = Field(default_factory=list)
