"""`call_llm`: the one entry point every service uses to talk to a model.

Streaming (`on_text=`): shared.llm.stream; text goes to the sink as it comes, retries only
before the first text, the same checks on the final message.

Telemetry: exactly one `LLMCallRecord` per `call_llm` call (success, failure or
cancellation), carrying the final attempt's usage; failed attempts that were retried
are logged at INFO, not recorded, so ops counts and costs are per call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from shared.llm.budget import current_budget, current_deadline
from shared.llm.caching import TokenCounter, fit_breakpoints
from shared.llm.errors import (
    LLMBudgetExhaustedError,
    LLMBusyError,
    LLMHttpError,
    LLMInputError,
    LLMOutputError,
    LLMTruncatedError,
    LLMValidationError,
)
from shared.llm.limiting import Limiter, Permit, paused_until
from shared.llm.parsing import parse_text_output, validate_output
from shared.llm.pricing import cost_usd
from shared.llm.providers.base import ProviderReply
from shared.llm.request import PreparedCall, prepare_call
from shared.llm.result import LLMResult
from shared.llm.runtime import LLMRuntime, get_runtime
from shared.llm.stream import Emitter, TextSink, interrupted, stream_attempt
from shared.llm.telemetry import LLMCallRecord, emit_safely, note_http_error
from shared.llm.tools import Tool, ToolUse

log = logging.getLogger(__name__)

_MAX_ERROR_MSG = 500


async def call_llm(
    *,
    task: str,
    tier: str = "standard",
    system: str | Sequence[Mapping[str, Any]] | None = None,
    messages: Sequence[Mapping[str, Any]] | None = None,
    user: str | None = None,
    tools: Sequence[Tool] | None = None,
    tool_choice: str | Tool | Mapping[str, Any] | None = None,
    schema: Any = None,
    max_tokens: int = 4096,
    limiter: Limiter | None = None,
    # The per-attempt HTTP timeout (the API contract's name); bound the whole call with
    # asyncio.timeout() if needed: cancellation is honoured and never retried.
    timeout: float | None = None,  # noqa: ASYNC109
    on_text: TextSink | None = None,
) -> LLMResult:
    """Call the configured model with retries, validation, limiting and telemetry.

    With `on_text`, the answer's text streams to it as the model writes it.
    """
    if on_text is not None and schema is not None:
        raise LLMInputError("on_text streams a text answer; it cannot be combined with schema=")
    runtime = get_runtime()
    call = prepare_call(
        runtime,
        task=task,
        tier=tier,
        system=system,
        messages=messages,
        user=user,
        tools=tools,
        tool_choice=tool_choice,
        schema=schema,
        max_tokens=max_tokens,
        timeout=runtime.settings.llm_timeout_s if timeout is None else timeout,
    )
    # Marks whose prefix is below the model's minimum are dropped (with one warning).
    await fit_breakpoints(task, call.request.params, counter=_counter(runtime))
    chosen_limiter = limiter if limiter is not None else runtime.limiter
    if not runtime.provider.rate_limited:
        chosen_limiter = None
    emitter = Emitter(on_text) if on_text is not None else None
    started = time.perf_counter()
    try:
        reply: ProviderReply = await runtime.retry.retrying()(
            _attempt, runtime, call, chosen_limiter, emitter
        )
        call.reply = reply  # kept for the telemetry record even if interpreting it fails
        result = _interpret(runtime, call, reply, (time.perf_counter() - started) * 1000.0)
    except BaseException as exc:
        _record(runtime, call, started, exc)
        budget = current_budget()
        if budget is not None and budget.exhausted and isinstance(exc, LLMHttpError):
            # The last attempt the work had failed: redelivering it could only be refused.
            raise LLMBudgetExhaustedError(
                f"{budget.key}: all {budget.limit} API attempts of its retry budget are used; "
                f"the last failed with {type(exc).__name__}: {exc}"
            ) from exc
        raise
    _record(runtime, call, started, None)
    return result


COUNT_TIMEOUT_S = 5.0


def _counter(runtime: LLMRuntime) -> TokenCounter | None:
    """The provider's exact token count (Anthropic's count_tokens), bounded in time."""
    count = getattr(runtime.provider, "count_tokens", None)
    if count is None:
        return None

    async def counter(body: dict[str, Any]) -> int:
        return int(await count(body, timeout=COUNT_TIMEOUT_S))

    return counter


def _check_deadline(limiter: Limiter | None, model: str, *, until: float | None = None) -> None:
    """Fail at once (LLMBusyError) when a shared pause ends after the caller's deadline."""
    deadline = current_deadline()
    if deadline is None:
        return
    end = max(until or 0.0, paused_until(limiter, model) if limiter is not None else 0.0)
    if end > deadline:
        raise LLMBusyError(
            f"the model is paused by a rate limit until {end:.0f} (epoch), past this "
            f"call's deadline", until=end,
        )  # fmt: skip


async def _attempt(
    runtime: LLMRuntime, call: PreparedCall, limiter: Limiter | None, emitter: Emitter | None
) -> ProviderReply:
    """One HTTP attempt (streamed with an emitter) between the limiter's acquire and settle."""
    _check_deadline(limiter, call.model)
    budget = current_budget()
    if budget is not None:
        await budget.spend()  # counted before the attempt: a crash cannot lose it
    permit: Permit | None = None
    if limiter is not None:
        try:
            permit = await limiter.acquire(
                model=call.model,
                input_tokens=call.input_estimate(),
                output_tokens=call.max_tokens,
            )
        except Exception:  # a broken limiter must not lose the call
            log.warning("llm limiter acquire failed; proceeding unlimited", exc_info=True)
    try:
        if emitter is None:
            reply = await runtime.provider.create(call.request)
        else:
            reply = await stream_attempt(runtime.provider, call.request, emitter)
    except LLMHttpError as exc:
        await _settle(limiter, permit, None)
        note_http_error(runtime.sink, model=call.model, status=exc.status)
        if exc.status == 429 and exc.retry_after is not None:
            until = time.time() + exc.retry_after
            if limiter is not None:
                try:
                    await limiter.pause(model=call.model, until=until)
                except Exception:  # limiter trouble never fails the call
                    log.warning("llm limiter pause failed", exc_info=True)
            try:
                _check_deadline(limiter, call.model, until=until)
            except LLMBusyError as busy:
                raise busy from exc
        if emitter is not None and emitter.emitted:
            raise interrupted(exc, task=call.task) from exc
        raise
    except asyncio.CancelledError:
        raise  # the reservation is kept: conservative, and a cancelled task must not wait
    except Exception:
        await _settle(limiter, permit, None)
        raise
    await _settle(limiter, permit, reply)
    return reply


async def _settle(
    limiter: Limiter | None, permit: Permit | None, reply: ProviderReply | None
) -> None:
    if limiter is None or permit is None:
        return
    if reply is None:
        input_tokens, output_tokens = permit.input_tokens, 0
    else:
        # Cache writes count toward input-token limits; cache reads don't on current models.
        usage = reply.usage
        input_tokens = usage.input_tokens + usage.cache_creation_input_tokens
        output_tokens = usage.output_tokens
    try:
        await limiter.settle(permit, input_tokens=input_tokens, output_tokens=output_tokens)
    except Exception:  # limiter trouble never fails the call
        log.warning("llm limiter settle failed", exc_info=True)


def _interpret(
    runtime: LLMRuntime, call: PreparedCall, reply: ProviderReply, duration_ms: float
) -> LLMResult:
    content = reply.content
    texts = [b.get("text", "") for b in content if b.get("type") == "text"]
    blocks = [b for b in content if b.get("type") == "tool_use"]
    if reply.stop_reason == "max_tokens" and (call.schema is not None or call.forced or blocks):
        raise LLMTruncatedError(
            f"the model stopped at max_tokens={call.max_tokens} on a structured call "
            f"(task {call.task!r}); raise max_tokens or shorten the input"
        )
    tool_uses = [_tool_use(call, block) for block in blocks]
    if call.forced and not tool_uses:
        raise LLMOutputError(
            f"the model did not call the required tool (stop_reason {reply.stop_reason!r})"
        )
    text = "".join(texts)
    parsed = None
    if call.schema is not None and reply.stop_reason != "tool_use":
        parsed = parse_text_output(text, call.schema)
    usage = reply.usage
    return LLMResult(
        text=text,
        tool_uses=tool_uses,
        parsed=parsed,
        stop_reason=reply.stop_reason,
        usage=usage,
        request_id=reply.request_id,
        model=reply.model,
        duration_ms=duration_ms,
        provider=runtime.provider.name,
        cost_usd=_cost(reply),
        content=content,
        ratelimit=reply.ratelimit,
    )


def _tool_use(call: PreparedCall, block: dict[str, Any]) -> ToolUse:
    name = block.get("name")
    tool = call.tools.get(name) if isinstance(name, str) else None
    if tool is None:
        raise LLMValidationError(f"the model called unknown tool {name!r}")
    raw_input = block.get("input")
    parsed = validate_output(tool.model, raw_input, what=f"input of tool {tool.name!r}")
    if not isinstance(raw_input, dict):
        raise LLMValidationError(f"the input of tool {tool.name!r} is not a JSON object")
    return ToolUse(id=str(block.get("id", "")), name=tool.name, input=raw_input, parsed=parsed)


def _cost(reply: ProviderReply) -> float:
    usage = reply.usage
    return cost_usd(
        reply.model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
    )


def _record(
    runtime: LLMRuntime, call: PreparedCall, started: float, exc: BaseException | None
) -> None:
    reply = call.reply
    error_msg = None
    if exc is not None:
        error_msg = f"{type(exc).__name__}: {exc}"[:_MAX_ERROR_MSG]
    record = LLMCallRecord(
        task=call.task,
        model=reply.model if reply is not None else call.model,
        tier=call.tier,
        duration_ms=(time.perf_counter() - started) * 1000.0,
        input_tokens=reply.usage.input_tokens if reply else 0,
        output_tokens=reply.usage.output_tokens if reply else 0,
        cache_creation_input_tokens=reply.usage.cache_creation_input_tokens if reply else 0,
        cache_read_input_tokens=reply.usage.cache_read_input_tokens if reply else 0,
        stop_reason=reply.stop_reason if reply else None,
        ok=exc is None,
        error_msg=error_msg,
        cost_usd=_cost(reply) if reply is not None else 0.0,
        request_id=reply.request_id if reply else None,
        provider=runtime.provider.name,
    )
    emit_safely(runtime.sink, record)
