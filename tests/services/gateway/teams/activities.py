"""Teams activities as Teams sends them (shapes from the Agents SDK's own tests and samples)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
BOT = {"id": "28:0f6a1e52-5b7f-4a39-9a4e-0d6b2c2b7f11", "name": "R42"}
ADMIN_AAD = "6b9e3a21-4c8d-4f2e-9a1b-3c5d7e9f0a12"
USER_AAD = "2c4e6a8b-1d3f-4b5a-8c7e-9f0a1b2c3d4e"
TEAM = "19:7d2e4f9a3b1c4e8f@thread.tacv2"
CHANNEL = "19:c3a9b1e2d4f64a7b@thread.tacv2"

_ids = itertools.count(1_700_000_000_001)


def person(aad: str, name: str) -> dict[str, Any]:
    """A Teams user: a 29: id plus the AAD object id."""
    return {"id": f"29:1{aad.replace('-', '')[:20]}", "name": name, "aadObjectId": aad}


def personal_conversation(aad: str) -> str:
    """The id Teams gives a user's 1:1 chat with the bot."""
    return f"a:1{aad.replace('-', '')}"


def _base(service_url: str, sender: dict[str, Any], conversation: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(next(_ids)),
        "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "localTimestamp": datetime.now(UTC).isoformat(),
        "channelId": "msteams",
        "serviceUrl": service_url,
        "from": sender,
        "conversation": conversation,
        "recipient": BOT,
        "locale": "nl-NL",
    }


def personal_message(
    service_url: str, text: str, *, aad: str = USER_AAD, name: str = "Anna de Vries", **extra: Any
) -> dict[str, Any]:
    """A message in the user's personal chat with the bot."""
    conversation = {
        "conversationType": "personal",
        "tenantId": TENANT,
        "id": personal_conversation(aad),
    }
    activity = _base(service_url, person(aad, name), conversation)
    activity.update(
        type="message",
        text=text,
        textFormat="plain",
        channelData={"tenant": {"id": TENANT}},
        **extra,
    )
    return activity


def channel_mention(
    service_url: str,
    text: str,
    *,
    aad: str = USER_AAD,
    name: str = "Anna de Vries",
    thread: str | None = None,
) -> dict[str, Any]:
    """A channel post (or thread reply) that @mentions the bot."""
    activity_id = str(next(_ids))
    conversation = {
        "isGroup": True,
        "conversationType": "channel",
        "tenantId": TENANT,
        "id": f"{CHANNEL};messageid={thread or activity_id}",
    }
    activity = _base(service_url, person(aad, name), conversation)
    markup = f"<at>{BOT['name']}</at>"
    activity.update(
        id=activity_id,
        type="message",
        text=f"{markup} {text}",
        textFormat="plain",
        entities=[{"type": "mention", "text": markup, "mentioned": BOT}],
        channelData={
            "teamsChannelId": CHANNEL,
            "teamsTeamId": TEAM,
            "channel": {"id": CHANNEL},
            "team": {"id": TEAM},
            "tenant": {"id": TENANT},
        },
    )
    return activity


def card_action(
    service_url: str,
    verb: str,
    data: dict[str, Any],
    *,
    reply_to_id: str,
    aad: str = USER_AAD,
    name: str = "Anna de Vries",
    conversation_id: str | None = None,
) -> dict[str, Any]:
    """An Action.Execute click (invoke adaptiveCard/action) on a card in the personal chat."""
    conversation = {
        "conversationType": "personal",
        "tenantId": TENANT,
        "id": conversation_id or personal_conversation(aad),
    }
    activity = _base(service_url, person(aad, name), conversation)
    activity.update(
        type="invoke",
        name="adaptiveCard/action",
        replyToId=reply_to_id,
        value={
            "action": {"type": "Action.Execute", "verb": verb, "data": data},
            "trigger": "manual",
        },
        channelData={"tenant": {"id": TENANT}, "source": {"name": "message"}},
    )
    return activity
