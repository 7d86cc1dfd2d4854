"""The Bolt AsyncApp: each feature registers its listeners; every listener acks at once."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk.web.async_client import AsyncWebClient

from services.gateway.slack.gateway import SlackGateway
from services.gateway.slack.listeners import (
    admin,
    analyze,
    assistant,
    chat,
    curriculum,
    fallbacks,
    learn,
    quiz,
    sources,
    stale,
    topics,
)


class _TokenFromEnvironment(logging.Filter):
    """Drops Bolt's "token will be unused" warning: we hand it the client built from
    SLACK_BOT_TOKEN, and Bolt reads the same variable again on its own (no option stops it)."""

    message = warning_client_prioritized_and_token_skipped()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.message


def build_app(
    gw: SlackGateway, *, client: AsyncWebClient, signing_secret: str | None, http: bool
) -> AsyncApp:
    """An AsyncApp with every R42 listener (request verification on in HTTP mode)."""
    logger = logging.getLogger("services.gateway.bolt")
    if not any(isinstance(f, _TokenFromEnvironment) for f in logger.filters):
        logger.addFilter(_TokenFromEnvironment())
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=http,
        # Listeners ack and hand slow work to the background themselves; running them inline
        # spares Bolt's wait for the ack (it polls every 10 ms per request).
        process_before_response=True,
        name="r42-gateway",
        logger=logger,
    )
    assistant.register(app, gw)  # middleware: takes DM thread messages before `message`
    for feature in (chat, learn, quiz, admin, sources, topics, analyze, curriculum, stale):
        feature.register(app, gw)
    fallbacks.register(app)  # last: Bolt runs the first listener that matches
    return app
