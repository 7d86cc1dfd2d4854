"""The one place the Teams surface reaches the gateway's client API (so a move is one edit)."""

from __future__ import annotations

from services.gateway.background import Background
from services.gateway.client import ForbiddenError, GatewayClient
from services.gateway.uploads import check_text

__all__ = ["Background", "ForbiddenError", "GatewayClient", "check_text"]
