"""The console adapter: R42 in the terminal that `r42 up` opens when Slack is not configured."""

from services.gateway.console.base import ask
from services.gateway.console.session import ConsoleSession, console_user, run

__all__ = ["ConsoleSession", "ask", "console_user", "run"]
