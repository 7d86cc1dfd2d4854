"""rpc.quiz.bank_regenerate: an admin replaces a topic's quiz bank, the path of the CLI's command.

The quiz service decides who is an admin from its own settings (never from the request) and
runs the same `regenerate_bank` as `r42 quiz bank regenerate`: a batch the quality gate
refuses leaves the bank as it was and the reply says why.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from services.quiz.generation import regenerate_bank
from services.quiz.ports import QuizStore
from shared.bus.quiz_rpc import BankRegenerateReply, BankRegenerateRequest

log = logging.getLogger(__name__)


async def answer_bank_regenerate(
    request: BankRegenerateRequest, *, store: QuizStore, admins: Collection[str]
) -> BankRegenerateReply:
    """Regenerate one topic's bank for an admin; refuse everyone else."""
    if request.user_id not in admins:
        log.warning("non-admin %s asked to regenerate %s's bank", request.user_id, request.topic_id)
        return BankRegenerateReply(status="forbidden")
    if await store.topics.get(request.topic_id) is None:
        return BankRegenerateReply(status="not_found")
    result, removed = await regenerate_bank(
        store=store, topic_id=request.topic_id, count=request.count
    )
    bank = await store.quiz_banks.get(request.topic_id)
    size = len(bank.questions) if bank else 0
    if not result.ok:
        reason = (result.rejected or "")[:2000]
        return BankRegenerateReply(status="rejected", size=size, reason=reason)
    return BankRegenerateReply(status="ok", added=len(result.added), removed=removed, size=size)
