"""An admin's handbook sync over rpc.extractor.sync_handbook: authorised, configured, counted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from services.extractor.cancel import SourceTasks
from services.extractor.config import build_extractor_settings
from services.extractor.handlers import ExtractorDeps
from services.extractor.sync_rpc import answer_sync
from shared.bus.extractor_rpc import (
    HandbookSyncReply,
    HandbookSyncRequest,
    SyncWaiting,
    WaitingRelation,
)
from shared.errors import BadInputError
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic

from .fake_github import FakeGitHub
from .test_handbook import VERLOF, settings_for
from .test_sync_lifecycle import ROLLEN, knowing


def deps_for(store: Store, settings: Any) -> tuple[ExtractorDeps, list[Any]]:
    published: list[Any] = []

    async def publish(event: Any) -> None:
        published.append(event)

    deps = ExtractorDeps(store=store, publish=publish, limiter=None, settings=settings,
                         extractor=build_extractor_settings(), tasks=SourceTasks())  # fmt: skip
    return deps, published


async def test_admin_sync_reports_counts(store: Store, offline_extractor: Any) -> None:
    with FakeGitHub() as github:
        github.files = {"handbook/verlof.md": VERLOF}
        deps, published = deps_for(store, settings_for(github, admins=["UADMIN"]))
        request = HandbookSyncRequest(user_id="UADMIN")
        reply = await answer_sync(request, deps=deps, lock=asyncio.Lock())
        assert (reply.changed, reply.unchanged, reply.failed) == (1, 0, 0)
        assert "vakantiedagen" in await store.topics.ids()
        assert [e.SUBJECT for e in published] == ["kb.updated"]
        again = await answer_sync(request, deps=deps, lock=asyncio.Lock())
        assert (again.changed, again.unchanged) == (0, 1)


async def test_non_admin_is_refused_whatever_it_claims(
    store: Store, offline_extractor: Any
) -> None:
    with FakeGitHub() as github:
        github.files = {"handbook/verlof.md": VERLOF}
        listed, published = deps_for(store, settings_for(github, admins=["UADMIN"]))
        nobody, _ = deps_for(store, settings_for(github, admins=[]))
        # The admin list decides and an empty list means nobody; a claim cannot even be sent.
        with pytest.raises(ValidationError, match=r"is_admin\n.*[Ee]xtra inputs"):
            HandbookSyncRequest.model_validate_json('{"user_id": "U1", "is_admin": true}')
        for request, deps in (
            (HandbookSyncRequest(user_id="U1"), listed),
            (HandbookSyncRequest(user_id="UADMIN"), nobody),
        ):
            with pytest.raises(BadInputError, match="beheerders"):
                await answer_sync(request, deps=deps, lock=asyncio.Lock())
        assert await store.topics.ids() == set() and published == []


async def test_unconfigured_handbook_is_a_clear_error(store: Store, offline_extractor: Any) -> None:
    with FakeGitHub() as github:
        deps, _ = deps_for(store, settings_for(github, handbook_owner=None, admins=["U"]))
        with pytest.raises(BadInputError, match="R42_HANDBOOK_OWNER"):
            await answer_sync(HandbookSyncRequest(user_id="U"), deps=deps,
                              lock=asyncio.Lock())  # fmt: skip


async def test_the_reply_carries_what_waits_as_data_not_words(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = knowing("verlof")  # the teamlead file mentions verlof; no file has it
    with FakeGitHub() as github:
        github.files = {"handbook/a.md": ROLLEN}
        deps, _ = deps_for(store, settings_for(github, admins=["UADMIN"]))
        reply = await answer_sync(HandbookSyncRequest(user_id="UADMIN"), deps=deps,
                                  lock=asyncio.Lock())  # fmt: skip
    named = WaitingRelation(source="teamlead", target="verlof", type="related_to", file="a.md")
    assert reply.waiting == SyncWaiting(
        newly_waiting=1, still_waiting=1, max_wait_days=30, newly_shown=[named]
    )
    assert reply.message == ""  # each surface words it; the extractor sends none
    assert HandbookSyncReply.model_validate_json(reply.model_dump_json()) == reply
    # A reply from an extractor that does not send the field yet still validates.
    old = HandbookSyncReply.model_validate_json('{"changed": 1, "unchanged": 0, "failed": 0}')
    assert old.waiting is None
