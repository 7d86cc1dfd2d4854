"""The sources line under an answer is in the answer's language on every surface."""

from __future__ import annotations

import json

from rich.console import Console

from services.gateway.console.render import answer
from services.gateway.slack.blocks.chat import answer_tail
from services.gateway.teams.views import answer_card
from shared.bus import ChatReply, SourceRef

SOURCES = [SourceRef(id="verlof", label="Verlof")]


def rendered(reply: ChatReply) -> tuple[str, str, str]:
    slack = json.dumps(answer_tail(reply, turn_id="t1"), ensure_ascii=False)
    teams = json.dumps(answer_card(reply, turn_id="t1"), ensure_ascii=False)
    console = Console(width=120, record=True)
    for part in answer(reply):
        console.print(part)
    return slack, teams, console.export_text()


def test_an_english_answer_lists_sources_and_a_dutch_one_bronnen() -> None:
    english = ChatReply(text="You request leave in the portal.", sources=SOURCES, language="en")
    dutch = ChatReply(text="Via het portaal.", sources=SOURCES)
    for shown in rendered(english):
        assert "Sources: Verlof" in shown and "Bronnen" not in shown
    for shown in rendered(dutch):
        assert "Bronnen: Verlof" in shown and "Sources" not in shown
