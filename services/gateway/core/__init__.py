"""The gateway's core: the client API every surface uses and the views they render.

Surfaces (slack/, console/, teams/) import this package; it imports no surface.
"""

from services.gateway.core.client import GatewayClient
from services.gateway.core.context import CoreContext, ForbiddenError, new_request_id
from services.gateway.core.messages import user_message

__all__ = ["CoreContext", "ForbiddenError", "GatewayClient", "new_request_id", "user_message"]
