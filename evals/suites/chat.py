"""Chat: scripted conversations through R42's turn engine over the sample handbook KB.

Each script is one user; each turn goes through `services.r42.turn.chat_turn` with the
service's `KbCache` (and its offline handlers, as `services.r42.app` registers them)
against a temp store holding the sample handbook. Which tools fired is read from the
provider's replies; what the user saw is the ChatReply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import Field

from evals.golden import (
    OneOf,
    Strict,
    describe_one_of,
    limited,
    met,
    parse_model,
    read_yaml,
    share,
    text_contains,
    with_override,
)
from evals.kb import load_handbook, temp_store
from evals.suite import MetricSpec, SuiteContext, SuiteOutcome, Tally
from shared.bus import ChatReply, ChatRequest, Proposal
from shared.errors import BadInputError
from shared.kb import fold_text
from shared.store import QuizAttempt, Store, TopicType, open_store

if TYPE_CHECKING:
    from services.r42.knowledge import KbCache

NAME = "chat"
SERVICE = "services.r42.turn"
PROMPT_MODULES = ("services.r42.prompts",)
QUIZ_WEEK = "2026-W01"

METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("turns_passed", "higher", "share of turns meeting every expectation"),
    MetricSpec("tool_accuracy", "higher",
               "share of turns with tool expectations whose tools fired as expected"),
    MetricSpec("anchor_rate", "higher", "share of anchors found in the replies"),
    MetricSpec("source_recall", "higher", "share of expected sources listed under replies"),
    MetricSpec("refusal_rate", "higher", "share of out-of-KB questions answered with a refusal"),
    MetricSpec("proposal_rate", "higher", "share of expected proposals made as expected"),
    MetricSpec("quiz_silence", "higher",
               "share of quiz-time turns refused without any model call"),
    MetricSpec("error_turns", "lower", "turns that ended in an apology with an error ref"),
    MetricSpec("prompt_version_stamped", "higher",
               "share of stored proposals carrying the running PROMPT_VERSION"),
    MetricSpec("turns", None, "turns played"),
    MetricSpec("llm_calls_per_turn", None, "model calls per answered turn"),
)  # fmt: skip


class ProposalExpect(Strict):
    """The proposal a turn must produce."""

    type: TopicType | None = None
    ids: list[str] = Field(default_factory=list, description="any of these topic ids")


class TurnExpect(Strict):
    """What a turn's reply must show."""

    expect_tools: list[str] = Field(default_factory=list)
    forbid_tools: list[str] = Field(default_factory=list)
    anchors: list[OneOf] = Field(default_factory=list)
    sources: list[OneOf] = Field(default_factory=list)
    refusal: bool = False
    proposal: ProposalExpect | None = None
    unlike: str | None = Field(
        default=None, description="an answer voted down: the reply must not repeat it"
    )


class Turn(TurnExpect):
    """One user message and its expectations (with per-provider overrides)."""

    say: str = Field(min_length=1)
    quiz_active: bool | None = None
    offline: TurnExpect | None = None
    anthropic: TurnExpect | None = None

    def expectations(self, provider: str) -> TurnExpect:
        """The default expectations with the provider's block applied."""
        base = TurnExpect.model_validate(self.model_dump(include=set(TurnExpect.model_fields)))
        return with_override(base, getattr(self, provider, None))


class Script(Strict):
    """One conversation."""

    id: str = Field(min_length=1)
    turns: list[Turn] = Field(min_length=1)


class ChatGolden(Strict):
    """evals/chat/golden.yaml."""

    refusal_phrases: list[str] = Field(min_length=1)
    scripts: list[Script] = Field(min_length=1)
    kb_store: str | None = Field(
        default=None,
        description="read the KB (topics, relations) from this store instead of the handbook",
    )


@dataclass
class _Player:
    """Plays turns against one store and KB cache, counting what the metrics need."""

    ctx: SuiteContext
    store: Store
    kb: KbCache
    golden: ChatGolden
    tally: Tally = field(default_factory=Tally)
    turns: int = 0
    passed: int = 0
    errors: int = 0
    answered: int = 0
    calls: int = 0
    proposals: list[str] = field(default_factory=list)

    async def play(self, script: Script, turn: Turn) -> list[str]:
        """Play one turn; returns the reasons it missed expectations."""
        from services.r42.turn import chat_turn

        user = f"eval-{script.id}"
        await _set_quiz(self.store, user, turn.quiz_active)
        want = turn.expectations(self.ctx.provider)
        llm = self.ctx.llm
        replies_mark, calls_mark = llm.recorder.mark(), len(llm.sink.records)
        thread_before = len(await self.store.threads.get(user))
        reply = await chat_turn(
            store=self.store, kb=self.kb,
            request=ChatRequest(user_id=user, user_name="Eval", text=turn.say),
        )  # fmt: skip
        fired = [b.get("name", "") for b in llm.recorder.tool_uses_since(replies_mark)]
        calls = len(llm.records_since(calls_mark))
        self.turns += 1
        reasons: list[str] = []
        if reply.error_ref is not None:
            self.errors += 1
            reasons.append(f"turn failed ({reply.error_ref}): {reply.text[:120]}")
        if turn.quiz_active:
            thread_after = len(await self.store.threads.get(user))
            silent = reply.refused and calls == 0 and thread_after == thread_before
            if not self.tally.add("quiz", silent):
                reasons.append(f"answered during a quiz (refused={reply.refused}, {calls} "
                               f"model call(s)): {reply.text[:120]}")  # fmt: skip
        else:
            self.answered += 1
            self.calls += calls
            reasons += self._judge(want, reply, fired)
        self.passed += not reasons
        return reasons

    def _judge(self, want: TurnExpect, reply: ChatReply, fired: list[str]) -> list[str]:
        reasons = []
        if want.expect_tools or want.forbid_tools:
            ok = set(want.expect_tools) <= set(fired) and not set(want.forbid_tools) & set(fired)
            if not self.tally.add("tools", ok):
                reasons.append(f"tools fired {fired}; expected {want.expect_tools}, "
                               f"forbidden {want.forbid_tools}")  # fmt: skip
        for anchor in want.anchors:
            if not self.tally.add("anchors", text_contains(reply.text, anchor)):
                reasons.append(f"reply lacks {describe_one_of(anchor)!r}: {reply.text[:160]!r}")
        source_ids = [s.id for s in reply.sources]
        for expected in want.sources:
            if not self.tally.add("sources", met(expected, source_ids)):
                reasons.append(f"sources {source_ids} lack {describe_one_of(expected)}")
        if want.refusal:
            said = any(text_contains(reply.text, p) for p in self.golden.refusal_phrases)
            if not self.tally.add("refusal", said and reply.proposal is None):
                reasons.append(f"no refusal for an out-of-KB question: {reply.text[:160]!r}")
        if want.unlike is not None and _same_answer(reply.text, want.unlike):
            reasons.append(f"repeats the answer that was voted down: {reply.text[:160]!r}")
        if reply.proposal is not None:
            self.proposals.append(reply.proposal.id)
        if want.proposal is not None:
            reasons += self._proposal_problems(reply.proposal, want.proposal)
        elif reply.proposal is not None:
            reasons.append(f"unexpected proposal: {reply.proposal.summary[:160]}")
        return reasons

    def _proposal_problems(self, proposal: Proposal | None, want: ProposalExpect) -> list[str]:
        if proposal is None:
            self.tally.add("proposal", False)
            return ["no proposal made"]
        topics = proposal.delta.topics
        good = [
            t for t in topics
            if (want.type is None or t.type == want.type) and (not want.ids or t.id in want.ids)
        ]  # fmt: skip
        if self.tally.add("proposal", bool(good)):
            return []
        found = [f"{t.id} ({t.type})" for t in topics]
        return [f"proposal topics {found}; expected a {want.type or 'topic'} {want.ids or ''}"]


def _check_tools(golden: ChatGolden, known: set[str]) -> None:
    for script in golden.scripts:
        for turn in script.turns:
            for expect in (turn, turn.offline, turn.anthropic):
                named = set(expect.expect_tools + expect.forbid_tools) if expect else set()
                if named - known:
                    raise BadInputError(
                        f"chat script {script.id}: unknown tool(s) {sorted(named - known)}; "
                        f"R42's tools are {sorted(known)}"
                    )


async def run(ctx: SuiteContext) -> SuiteOutcome:
    """Play every script and score the replies."""
    from services.r42.knowledge import KbCache
    from services.r42.offline import offline_plans
    from services.r42.tools import TOOLS

    path = ctx.data_dir / "golden.yaml"
    golden = parse_model(ChatGolden, read_yaml(path), where=str(path))
    _check_tools(golden, {tool.name for tool in TOOLS})
    scripts = limited(golden.scripts, ctx.limit)
    outcome = SuiteOutcome(metrics={}, cases=len(scripts))
    async with temp_store(ctx.workdir, NAME) as store:
        if golden.kb_store:
            await _copy_kb(golden.kb_store, store)
        else:
            await load_handbook(store)
        kb = KbCache(store)
        player = _Player(ctx=ctx, store=store, kb=kb, golden=golden)
        try:
            # As the r42 service's host injects them.
            with ctx.llm.offline_plans(offline_plans(lambda: kb.current)):
                for script in scripts:
                    for number, turn in enumerate(script.turns, start=1):
                        outcome.fail(f"{script.id} #{number}", await player.play(script, turn))
            stamped = await _stamped(store, player.proposals)
        finally:
            await kb.aclose()
    outcome.metrics = {
        "turns_passed": share(player.passed, player.turns),
        "tool_accuracy": player.tally.rate("tools"),
        "anchor_rate": player.tally.rate("anchors"),
        "source_recall": player.tally.rate("sources"),
        "refusal_rate": player.tally.rate("refusal"),
        "proposal_rate": player.tally.rate("proposal"),
        "quiz_silence": player.tally.rate("quiz"),
        "error_turns": float(player.errors),
        "prompt_version_stamped": share(stamped, len(player.proposals)),
        "turns": float(player.turns),
        "llm_calls_per_turn": share(player.calls, player.answered),
    }
    return outcome


def _same_answer(reply: str, unlike: str) -> bool:
    """Whether a reply repeats an answer (folded, whitespace ignored)."""
    return " ".join(fold_text(reply).split()) == " ".join(fold_text(unlike).split())


async def _copy_kb(url: str, into: Store) -> None:
    """The topics and relations of another store (read only) into the eval's temp store."""
    source = await open_store(url)
    try:
        await into.topics.upsert_many(await source.topics.list())
        await into.relations.upsert_many(await source.relations.list())
    finally:
        await source.close()


async def _set_quiz(store: Store, user: str, active: bool | None) -> None:
    """Give the user an active quiz attempt (True) or finish it (False)."""
    if active is None:
        return
    current = await store.quiz_attempts.get_active_attempt(user)
    if active and current is None:
        await store.quiz_attempts.start(QuizAttempt(
            id=f"eval-{user}", user=user, week=QUIZ_WEEK, question_keys=["q1", "q2", "q3"]
        ))  # fmt: skip
    elif not active and current is not None:
        await store.quiz_attempts.finish(current.id)


async def _stamped(store: Store, proposal_ids: list[str]) -> int:
    """How many stored proposals carry r42's running PROMPT_VERSION."""
    from services.r42.prompts import PROMPT_VERSION

    count = 0
    for proposal_id in proposal_ids:
        stored = await store.proposals.get(proposal_id)
        count += stored is not None and stored.prompt_version == PROMPT_VERSION
    return count
