"""Topic cards in Slack end to end: signed requests with real payload shapes, the real KG
owner on the bus, the store; every payload checked against the Block Kit limits."""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any

import pytest

from services.extractor.app import build as build_extractor
from services.extractor.config import ExtractorSettings
from services.gateway.slack.blocks import topics as bt
from services.gateway.slack.blocks.kit import block_problems
from shared.config import Settings
from shared.runtime.service import start_service
from shared.store import KbChanges, QuizQuestion, Relation, Topic
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import ADMIN, USER, Gateway

CHANNEL = "C0PUBLIC"


@pytest.fixture
async def owner(gateway: Gateway, settings: Settings) -> Gateway:
    """The real extractor (the KG owner) beside the gateway, on the same store and bus."""
    ext = ExtractorSettings(sample_handbook=False)
    ctx = await start_service("extractor", build=partial(build_extractor, extractor=ext),
                              settings=settings, namespace=gateway.namespace)  # fmt: skip
    gateway.others.append(ctx)
    store = gateway.ctx.store
    await store.apply_kb_changes(KbChanges(
        topics_upsert=[
            Topic(id="verlof", label="Verlof", type="process", description="Vrij nemen."),
            Topic(id="hr-portaal", label="HR-portaal", type="concept"),
            Topic(id="ziekmelding", label="Ziekmelding", type="process"),
            Topic(id="vakantie", label="Vakantie", type="concept"),
        ],
        relations_upsert=[
            Relation(source="verlof", target="hr-portaal", type="depends_on"),
            Relation(source="ziekmelding", target="verlof", type="related_to"),
        ],
    ))  # fmt: skip
    await store.content.set_part("verlof", "article", {"title": "Verlof"}, prompt_version="t",
                                 topic_fingerprint=None)  # fmt: skip
    await store.quiz_banks.add_questions("verlof", [
        QuizQuestion(text=f"Vraag {i}?", options=["a", "b", "c", "d"], correct_index=0,
                     explanation="Omdat.", difficulty="easy")
        for i in range(3)
    ])  # fmt: skip
    return gateway


def view_submission(
    callback_id: str, state: dict[str, dict[str, Any]], *, user: str, metadata: str
) -> str:
    """A view_submission body shaped like slack-bolt's own test fixtures."""
    payload = {
        "type": "view_submission",
        "team": {"id": "T0FAKE", "domain": "respellion"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": "T0FAKE"},
        "api_app_id": "A0FAKE",
        "token": "verification-token",
        "trigger_id": "111.222.valid",
        "view": {
            "id": "V0TOPIC", "team_id": "T0FAKE", "type": "modal", "blocks": [],
            "private_metadata": metadata, "callback_id": callback_id,
            "state": {"values": state}, "hash": "1596530361.3wRYuk3R",
            "title": {"type": "plain_text", "text": "Onderwerp", "emoji": True},
            "clear_on_close": False, "notify_on_close": False, "close": None,
            "submit": {"type": "plain_text", "text": "Opslaan", "emoji": True},
            "previous_view_id": None, "root_view_id": "V0TOPIC", "app_id": "A0FAKE",
            "external_id": "", "app_installed_team_id": "T0FAKE", "bot_id": "B0FAKE",
        },
        "response_urls": [],
        "is_enterprise_install": False,
    }  # fmt: skip
    return json.dumps(payload)


def text(value: str) -> dict[str, Any]:
    return {"type": "plain_text_input", "value": value}


def choice(value: str) -> dict[str, Any]:
    label = {"type": "plain_text", "text": value, "emoji": True}
    return {"type": "static_select", "selected_option": {"text": label, "value": value}}


def boxes(*values: str) -> dict[str, Any]:
    label = {"type": "plain_text", "text": "x", "emoji": True}
    return {"type": "checkboxes", "selected_options": [{"text": label, "value": v} for v in values]}


def edit_state(**over: Any) -> dict[str, dict[str, Any]]:
    fields = {bt.LABEL: text("Verlof"), bt.TYPE: choice("process"),
              bt.DESCRIPTION: text("Verlof vraag je aan in het HR-portaal."),
              bt.RELEVANCE: choice("core"), bt.LOCK: boxes(bt.LOCKED)}  # fmt: skip
    fields.update(over)
    return {block: {block: value} for block, value in fields.items()}


async def submit(gateway: Gateway, body: str) -> tuple[int, str]:
    return await gateway.send_form({"payload": body})


def all_text(call: Any) -> str:
    return json.dumps(call.args, ensure_ascii=False)


def ok_blocks(blocks: list[dict[str, Any]], max_blocks: int = 50) -> None:
    assert block_problems(blocks, max_blocks=max_blocks) == []


async def test_card_for_admin_and_user_with_picture(owner: Gateway, fake_slack: FakeSlack) -> None:
    await owner.command("/r42", "topic verlof", user=ADMIN)
    await owner.command("/r42", "topic Verl", user=USER)
    responses = await fake_slack.wait_for("respond", 2)
    by_key = {c.args["_key"]: c for c in responses}
    admin_card, user_card = by_key[f"r42-{ADMIN}"], by_key[f"r42-{USER}"]
    for card in (admin_card, user_card):
        ok_blocks(card.args["blocks"])
        shown = all_text(card)
        assert "Verlof" in shown and "proces" in shown and "standaard" in shown
        assert "niet vergrendeld" in shown and "HR-portaal" in shown and "Ziekmelding" in shown
    assert bt.EDIT in all_text(admin_card) and bt.DELETE in all_text(admin_card)
    assert bt.EDIT not in all_text(user_card)
    uploads = await fake_slack.wait_for("files.completeUploadExternal", 2)
    assert {c.args.get("channel_id") for c in uploads} == {"DADMIN1", "DUSER1"}
    await owner.command("/r42", "topic bestaat-niet", user=ADMIN)
    missing = await fake_slack.wait_for("respond", 3)
    assert "geen onderwerp gevonden" in all_text(missing[2])


async def test_edit_modal_from_an_ephemeral_card_then_submit(
    owner: Gateway, fake_slack: FakeSlack
) -> None:
    await owner.action(bt.EDIT, "verlof", user=ADMIN, channel=CHANNEL, ephemeral=True)
    (opened,) = await fake_slack.wait_for("views.open")
    view = opened.args["view"]
    ok_blocks(view["blocks"], max_blocks=100)
    assert view["callback_id"] == bt.EDIT_VIEW and json.loads(view["private_metadata"]) == {
        "t": "verlof", "c": CHANNEL
    }  # fmt: skip
    status, _ = await submit(owner, view_submission(
        bt.EDIT_VIEW, edit_state(), user=ADMIN, metadata=view["private_metadata"]))  # fmt: skip
    assert status == 200
    (told,) = await fake_slack.wait_for("chat.postEphemeral")
    assert told.args["user"] == ADMIN and told.args["channel"] == CHANNEL
    assert "is bijgewerkt" in all_text(told) and "kern" in all_text(told)
    ok_blocks(told.args["blocks"])
    topic = await owner.ctx.store.topics.get("verlof")
    assert topic is not None
    assert (topic.learning_relevance, topic.relevance_locked) == ("core", True)
    assert topic.description == "Verlof vraag je aan in het HR-portaal."
    (entry,) = await owner.ctx.store.audit.latest()
    assert (entry.actor, entry.action, entry.allowed, entry.surface) == (
        ADMIN, "topic.edit", True, "slack"
    )  # fmt: skip
    assert entry.after == {"description": "Verlof vraag je aan in het HR-portaal.",
                           "learning_relevance": "core", "relevance_locked": True}  # fmt: skip


async def test_edit_modal_errors_stay_in_the_modal(owner: Gateway) -> None:
    metadata = bt.metadata("verlof", CHANNEL)
    body = view_submission(bt.EDIT_VIEW, edit_state(**{bt.LABEL: text("  "),
                           bt.RELEVANCE: {"type": "static_select", "selected_option": None}}),
                           user=ADMIN, metadata=metadata)  # fmt: skip
    status, answer = await submit(owner, body)
    assert status == 200
    reply = json.loads(answer)
    assert reply["response_action"] == "errors"
    assert set(reply["errors"]) == {bt.LABEL, bt.RELEVANCE}
    assert await owner.ctx.store.audit.latest() == []


async def test_delete_confirmation_says_what_goes_then_deletes(
    owner: Gateway, fake_slack: FakeSlack
) -> None:
    await owner.action(bt.DELETE, "verlof", user=ADMIN, channel=CHANNEL, ephemeral=True)
    (confirm,) = await fake_slack.wait_for("respond")
    ok_blocks(confirm.args["blocks"])
    said = all_text(confirm)
    assert confirm.args["replace_original"] is True
    assert "2 relatie(s)" in said and "artikel" in said and "quizbank met 3" in said
    await owner.action(bt.DELETE_CONFIRM, "verlof", user=ADMIN, channel=CHANNEL, ephemeral=True)
    done = (await fake_slack.wait_for("respond", 2))[1]
    assert "is verwijderd" in all_text(done) and "2 relatie(s)" in all_text(done)
    assert await owner.ctx.store.topics.get("verlof") is None
    assert await owner.ctx.store.relations.list(topic_id="hr-portaal") == []


async def test_merge_and_relations_through_modals(owner: Gateway, fake_slack: FakeSlack) -> None:
    meta = bt.metadata("vakantie", CHANNEL)
    await submit(owner, view_submission(bt.RELATE_VIEW, {
        bt.OTHER: {bt.OTHER: text("HR-portaal")}, bt.RELATION_TYPE: {
            bt.RELATION_TYPE: choice("depends_on")}, bt.DIRECTION: {bt.DIRECTION: choice("out")},
    }, user=ADMIN, metadata=meta))  # fmt: skip
    (added,) = await fake_slack.wait_for("chat.postEphemeral")
    assert "vakantie -depends_on-&gt; hr-portaal" in all_text(added)  # mrkdwn-escaped
    await submit(owner, view_submission(bt.UNRELATE_VIEW, {
        bt.RELATION: {bt.RELATION: choice("depends_on|o|hr-portaal")}
    }, user=ADMIN, metadata=meta))  # fmt: skip
    removed = (await fake_slack.wait_for("chat.postEphemeral", 2))[1]
    assert "is verwijderd" in all_text(removed)
    assert await owner.ctx.store.relations.list(topic_id="vakantie") == []
    await submit(owner, view_submission(bt.MERGE_VIEW, {bt.INTO: {bt.INTO: text("Verlof")}},
                                        user=ADMIN, metadata=meta))  # fmt: skip
    merged = (await fake_slack.wait_for("chat.postEphemeral", 3))[2]
    assert "samengevoegd" in all_text(merged)
    ok_blocks(merged.args["blocks"])
    assert await owner.ctx.store.topics.get("vakantie") is None
    actions = [e.action for e in await owner.ctx.store.audit.latest()]
    assert actions == ["topic.merge", "topic.relation_remove", "topic.relation_add"]


async def test_every_action_by_a_non_admin_is_refused_and_audited(
    owner: Gateway, fake_slack: FakeSlack
) -> None:
    store = owner.ctx.store
    for button in (bt.EDIT, bt.MERGE, bt.RELATE, bt.UNRELATE, bt.DELETE):
        await owner.action(button, "verlof", user=USER, channel=CHANNEL, ephemeral=True)
    await owner.action(bt.DELETE_CONFIRM, "verlof", user=USER, channel=CHANNEL, ephemeral=True)
    meta = bt.metadata("verlof", CHANNEL)
    forged = [
        (bt.EDIT_VIEW, edit_state()),
        (bt.MERGE_VIEW, {bt.INTO: {bt.INTO: text("vakantie")}}),
        (bt.RELATE_VIEW, {bt.OTHER: {bt.OTHER: text("vakantie")},
                          bt.RELATION_TYPE: {bt.RELATION_TYPE: choice("related_to")},
                          bt.DIRECTION: {bt.DIRECTION: choice("out")}}),
        (bt.UNRELATE_VIEW, {bt.RELATION: {bt.RELATION: choice("depends_on|o|hr-portaal")}}),
    ]  # fmt: skip
    for callback, state in forged:
        await submit(owner, view_submission(callback, state, user=USER, metadata=meta))
    private = await fake_slack.wait_for("respond", 6, where=lambda c: c.args.get(
        "response_type") == "ephemeral" and not c.args.get("replace_original"))  # fmt: skip
    assert all("alleen beheerders" in all_text(c).lower() for c in private)
    told = await fake_slack.wait_for("chat.postEphemeral", 4)
    assert all("alleen beheerders" in all_text(c).lower() for c in told)
    assert fake_slack.calls_to("views.open") == []
    deadline = time.monotonic() + 10
    while len(await store.audit.latest()) < 10 and time.monotonic() < deadline:
        await owner.settle()
    audit = await store.audit.latest()
    assert len(audit) == 10 and not any(e.allowed for e in audit)
    assert {e.actor for e in audit} == {USER} and {e.surface for e in audit} == {"slack"}
    assert sorted(e.action for e in audit) == sorted(
        ["topic.edit", "topic.merge", "topic.relation_add", "topic.relation_remove",
         "topic.delete", "topic.delete", "topic.edit", "topic.merge", "topic.relation_add",
         "topic.relation_remove"]
    )  # fmt: skip
    topic = await store.topics.get("verlof")
    assert topic is not None and topic.learning_relevance == "standard"
    assert len(await store.relations.list(topic_id="verlof")) == 2
    assert await store.topics.get("vakantie") is not None
