"""Slash commands, App Home and /learn content against the real bus and store."""

from __future__ import annotations

import base64
import io
import json

from PIL import Image

from services.gateway.slack import ids
from services.gateway.slack.blocks import learn as bl
from services.gateway.slack.blocks.kit import block_problems
from shared.bus import ContentReady, ContentRequested, publish_event
from shared.bus.content_rpc import REFINE_SUBJECT, RefineReply, RefineRequest
from shared.llm import LLMCallRecord
from shared.runtime.service import Rpc, Subscription
from shared.store import Relation, Source, Suggestion, iso_week
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub, seed_topics
from tests.services.gateway.harness import ADMIN, USER, Gateway, start_stub

ARTICLE = {
    "title": "Verlof aanvragen",
    "intro": "Zo vraag je verlof aan.",
    "meta": {"x": 1},
    "sections": [{"heading": f"Stap {i}", "body": "Een. Twee. Drie."} for i in range(3)],
    "key_takeaways": ["Op tijd aanvragen", "Via het portaal"],
}
SLIDES = {
    "title": "Verlof",
    "slides": [
        {"title": f"Dia {i}", "bullets": [f"punt {i}"], "speaker_note": f"Vertel over {i}."}
        for i in range(4)
    ],
}


def png_bytes() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buf, format="PNG")
    return buf.getvalue()


INFOGRAPHIC = {
    "headline": "Verlof in 3 stappen",
    "tagline": "Snel geregeld",
    "stats": [{"value": "25", "label": "dagen"}] * 3,
    "steps": [{"number": i, "text": f"stap {i}"} for i in (1, 2, 3)],
    "quote": "Rust is werk.",
    "theme": "ocean",
    "image": {"format": "png", "base64": base64.b64encode(png_bytes()).decode()},
}


def buttons(call) -> list[dict]:
    return [e for b in call.args["blocks"] if b["type"] == "actions" for e in b["elements"]]


def text_of(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


async def test_leaderboard_weekly_and_all_time(gateway: Gateway, fake_slack: FakeSlack) -> None:
    scores = gateway.ctx.store.scores
    await scores.add_points(USER, iso_week(), 7)
    await scores.add_points(ADMIN, "2020-W01", 30)
    await gateway.command("/leaderboard")
    shown = (await fake_slack.wait_for("respond"))[0]
    assert shown.args["response_type"] == "ephemeral"
    weekly, all_time = [b["text"]["text"] for b in shown.args["blocks"] if b["type"] == "section"]
    assert f"<@{USER}>" in weekly and "7 pt" in weekly and ADMIN not in weekly
    assert all_time.index(ADMIN) < all_time.index(USER)


async def test_help_unknown_and_clear(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    await gateway.command("/r42", "help")
    help_ = (await fake_slack.wait_for("respond"))[0]
    assert "/learn" in text_of(help_) and "Onbekend" not in text_of(help_)
    await gateway.command("/r42", "frobnicate")
    unknown = (await fake_slack.wait_for("respond", 2))[1]
    assert "Onbekend commando" in text_of(unknown) and "/quiz" in text_of(unknown)
    await gateway.command("/r42", "clear")  # in a channel: memory is per thread there
    in_channel = (await fake_slack.wait_for("respond", 3))[2]
    assert "per thread" in text_of(in_channel) and not r42_stub.clears


async def test_clear_asks_first_and_clears_only_that_dm(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    await gateway.command("/r42", "clear", channel="D0USER1")
    prompt = (await fake_slack.wait_for("respond"))[0]
    assert "wissen" in text_of(prompt).lower() and not r42_stub.clears
    confirm = next(e for e in buttons(prompt) if e["action_id"] == ids.CLEAR_CONFIRM)
    cancel = next(e for e in buttons(prompt) if e["action_id"] == ids.CLEAR_CANCEL)
    await gateway.action(ids.CLEAR_CANCEL, cancel["value"], ephemeral=True)
    cancelled = (await fake_slack.wait_for("respond", 2))[1]
    assert "Niets gewist" in text_of(cancelled) and cancelled.args["replace_original"] is True
    assert not r42_stub.clears
    await gateway.action(ids.CLEAR_CONFIRM, confirm["value"], ephemeral=True)
    cleared = (await fake_slack.wait_for("respond", 3))[2]
    assert "gewist (4 berichten)" in text_of(cleared)
    assert [(c.user_id, c.conversation) for c in r42_stub.clears] == [(USER, "slack:D0USER1")]


async def test_a_forged_clear_value_is_refused(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    await gateway.action(ids.CLEAR_CONFIRM, "slack:D0OTHER|U0OTHER", ephemeral=True)
    refused = (await fake_slack.wait_for("respond"))[0]
    assert "onbekend gesprek" in text_of(refused) and not r42_stub.clears


async def test_admin_only_subcommands(gateway: Gateway, fake_slack: FakeSlack) -> None:
    store = gateway.ctx.store
    await store.suggestions.create(
        Suggestion(
            id="sug-9",
            delta={"reason": "Extra relatie", "topics": [], "relations": []},
            proposed_by=USER,
        )
    )
    await store.llm_calls.add(
        LLMCallRecord(
            task="r42.chat",
            model="claude-haiku-4-5",
            tier="fast",
            duration_ms=120.0,
            ok=True,
            input_tokens=100,
            output_tokens=20,
            cost_usd=0.0012,
        )
    )
    for sub in ("suggestions", "diagnostics"):
        await gateway.command("/r42", sub, user=USER)
        await gateway.command("/r42", sub, user=ADMIN)
    replies = await fake_slack.wait_for("respond", 4)
    by_user = {(c.args["_key"], i): c for i, c in enumerate(replies)}
    user_replies = [c for (k, _), c in by_user.items() if k.endswith(USER)]
    admin_replies = [c for (k, _), c in by_user.items() if k.endswith(ADMIN)]
    assert all("beheerders" in text_of(c) for c in user_replies)
    joined = " ".join(text_of(c) for c in admin_replies)
    assert "Extra relatie" in joined and ids.SUGGESTION_APPROVE in joined
    assert "r42.chat" in joined and "$0.0012" in joined


async def test_graph_and_follow(gateway: Gateway, fake_slack: FakeSlack) -> None:
    await seed_topics(
        gateway, ("verlof", "Verlof"), ("hr-portaal", "HR-portaal"), ("ziekte", "Ziekmelding")
    )
    await gateway.ctx.store.relations.upsert_many(
        [
            Relation(source="verlof", target="hr-portaal", type="depends_on"),
            Relation(source="ziekte", target="verlof", type="related_to"),
        ]
    )
    await gateway.command("/r42", "graph verlof")
    shown = (await fake_slack.wait_for("respond"))[0]
    text = text_of(shown)
    assert "depends_on → *HR-portaal*" in text and "*Ziekmelding* related_to" in text
    follow = next(
        e
        for b in shown.args["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["value"] == "hr-portaal"
    )
    await gateway.action(follow["action_id"], follow["value"], ephemeral=True)
    followed = (await fake_slack.wait_for("respond", 2))[1]
    assert followed.args["replace_original"] is True and "HR-portaal" in text_of(followed)
    await gateway.command("/r42", "graph bestaat-niet")
    missing = (await fake_slack.wait_for("respond", 3))[2]
    assert "geen onderwerp gevonden" in text_of(missing)


async def test_app_home_for_user_and_admin(gateway: Gateway, fake_slack: FakeSlack) -> None:
    await seed_topics(gateway, ("verlof", "Verlof"))
    store = gateway.ctx.store
    await store.sources.create(
        Source(id="src-1", name="handboek.md", sha256="a" * 64, status="processing")
    )
    await store.scores.add_points(USER, iso_week(), 3)
    for user, event_id in ((USER, "EvH1"), (ADMIN, "EvH2")):
        await gateway.event(
            {"type": "app_home_opened", "user": user, "tab": "home"}, event_id=event_id
        )
    views = await fake_slack.wait_for("views.publish", 2)
    by_user = {c.args["user_id"]: c.args["view"] for c in views}
    user_view, admin_view = json.dumps(by_user[USER]), json.dumps(by_user[ADMIN])
    assert "Verlof" in user_view and "Jouw punten deze week: *3*" in user_view
    assert ids.QUIZ_START in user_view and "Beheer" not in user_view
    assert "Beheer" in admin_view and "handboek.md" in admin_view and "LLM-kosten" in admin_view
    for view in by_user.values():
        assert block_problems(view["blocks"], max_blocks=100) == []


async def test_learn_slides_infographic_and_refine(
    gateway: Gateway, fake_slack: FakeSlack, settings
) -> None:
    await seed_topics(gateway, ("verlof", "Verlof"))
    refines: list[RefineRequest] = []

    async def content(event: ContentRequested) -> None:
        store = ctx.store
        for kind, value in (("article", ARTICLE), ("slides", SLIDES), ("infographic", INFOGRAPHIC)):
            await store.content.set_part(
                event.topic_id, kind, value, prompt_version="t", topic_fingerprint=None
            )
        await publish_event(
            ctx.broker,
            ContentReady.caused_by(
                event,
                actor="content",
                topic_id=event.topic_id,
                content_type=event.content_type,
                ok=True,
                reply_to=event.reply_to,
            ),
            namespace=ctx.namespace,
        )

    async def refine(req: RefineRequest) -> RefineReply:
        refines.append(req)
        return RefineReply(topic_id=req.topic, article=ARTICLE, applied=["replace_sentence s1"])

    ctx = await start_stub(
        "content",
        settings,
        namespace=gateway.namespace,
        subscriptions=[Subscription(ContentRequested, "content", content)],
        rpc=[Rpc(REFINE_SUBJECT, RefineRequest, refine)],
    )
    gateway.others.append(ctx)

    await gateway.command("/learn", "slides")
    first = (await fake_slack.wait_for("chat.update"))[0]
    assert "1/4 · Dia 0" in text_of(first) and ids.SLIDE_PREV not in text_of(first)
    nxt = next(
        e
        for b in first.args["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == ids.SLIDE_NEXT
    )
    await gateway.action(
        ids.SLIDE_NEXT, nxt["value"], channel=first.args["channel"], message_ts=first.args["ts"]
    )
    second = (await fake_slack.wait_for("chat.update", 2))[1]
    assert "2/4 · Dia 1" in text_of(second) and ids.SLIDE_PREV in text_of(second)
    assert second.args["ts"] == first.args["ts"]

    await gateway.command("/learn", "infographic")
    await fake_slack.wait_for("files.completeUploadExternal")
    uploaded = next(v for k, v in fake_slack.file_contents.items() if k.startswith("F"))
    assert uploaded == png_bytes()

    requested = len(fake_slack.calls_to("chat.postMessage"))
    status, body = await gateway.command("/learn", "onzin")  # refused in the ack itself
    assert status == 200 and "onbekend formaat" in body and "Komt eraan" not in body
    await gateway.settle()
    assert len(fake_slack.calls_to("chat.postMessage")) == requested  # no placeholder posted

    # Admins get Refine under the article; the modal's text becomes an rpc.content.refine call.
    await gateway.command("/learn", "", user=ADMIN)
    article = (
        await fake_slack.wait_for("chat.update", where=lambda c: "Verlof aanvragen" in text_of(c))
    )[0]
    assert ids.REFINE_OPEN in text_of(article)
    await gateway.action(ids.REFINE_OPEN, "verlof", user=USER)
    assert "beheerders" in text_of((await fake_slack.wait_for("respond"))[0])
    await gateway.action(ids.REFINE_OPEN, "verlof", user=ADMIN)
    modal = (await fake_slack.wait_for("views.open"))[0].args["view"]
    await gateway.view(
        ids.REFINE_VIEW,
        {bl.REFINE_INPUT_BLOCK: {bl.REFINE_INPUT_ACTION: "Korter"}},
        user=ADMIN,
        private_metadata=modal["private_metadata"],
    )
    note = (
        await fake_slack.wait_for("chat.postMessage", where=lambda c: "verfijnd" in text_of(c))
    )[0]
    assert "replace_sentence s1" in text_of(note)
    assert [(r.topic, r.instruction, r.user_id) for r in refines] == [("verlof", "Korter", ADMIN)]
