"""LimiterConfig: Anthropic tier-1 defaults, partial overrides, rejected input; state codec."""

from __future__ import annotations

import logging
import math

import pytest
from pydantic import ValidationError

from shared.errors import BadInputError
from shared.llm.limiter import Budget, ClassLimits, LimiterConfig, tier1_limits
from shared.llm.limiter_base import FULL
from shared.llm.limiter_kv import check_bucket, decode_state, encode_state


def test_defaults_are_anthropic_tier_1() -> None:
    config = LimiterConfig()
    expected = {
        "haiku": (50, 50_000, 10_000),
        "sonnet": (50, 30_000, 8_000),
        "opus": (50, 30_000, 8_000),
        "other": (50, 30_000, 8_000),
    }
    for cls, (rpm, itpm, otpm) in expected.items():
        limits = config.limits_for(cls)  # type: ignore[arg-type]
        assert limits.requests.per_minute == rpm
        assert limits.input_tokens.per_minute == itpm
        assert limits.output_tokens.per_minute == otpm


def test_default_bursts_short_for_requests_a_minute_for_tokens() -> None:
    requests, input_tokens, output_tokens = LimiterConfig().limits_for("sonnet").rates()
    assert requests.burst == pytest.approx(50 / 30)  # two seconds' worth
    assert requests.per_second == pytest.approx(50 / 60)
    assert input_tokens.burst == 30_000
    assert output_tokens.burst == 8_000


def test_partial_classes_override_only_what_they_name() -> None:
    mine = tier1_limits(rpm=1000, itpm=1e6, otpm=1e5)
    config = LimiterConfig(classes={"opus": mine})
    assert config.limits_for("opus") == mine
    assert config.limits_for("haiku").input_tokens.per_minute == 50_000


def test_config_round_trips_through_json() -> None:
    config = LimiterConfig(classes={"haiku": tier1_limits(rpm=5, itpm=10, otpm=20)})
    assert LimiterConfig.model_validate_json(config.model_dump_json()) == config


@pytest.mark.parametrize(
    "bad",
    [
        {"classes": {"gpt": tier1_limits(rpm=1, itpm=1, otpm=1)}},
        {"max_pause_s": 0},
        {"kv_timeout_s": -1},
        {"max_cas_attempts": 0},
        {"book_ahead_s": math.inf},
        {"surprise": 1},
    ],
)
def test_config_rejects_bad_values(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        LimiterConfig(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, -5, math.nan, math.inf])
def test_budget_rejects_non_positive_or_non_finite(bad: float) -> None:
    with pytest.raises(ValidationError):
        Budget(per_minute=bad)
    with pytest.raises(ValidationError):
        Budget(per_minute=10, burst=bad)


def test_class_limits_need_all_three_budgets() -> None:
    with pytest.raises(ValidationError):
        ClassLimits(requests=Budget(per_minute=1), input_tokens=Budget(per_minute=1))  # type: ignore[call-arg]


def test_state_codec_round_trips() -> None:
    state = (1_700_000_000.123456, 1_700_000_001.5, 0.0)
    assert decode_state(encode_state(state)) == pytest.approx(state, abs=1e-6)


@pytest.mark.parametrize(
    "raw", [b"", b"not json", b"[1, 2]", b'{"a": 1}', b'[1, 2, "x"]', b"[1e999, 0, 0]"]
)
def test_corrupt_state_reads_as_a_full_bucket_with_a_warning(
    raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="shared.llm.limiter"):
        assert decode_state(raw) == FULL
    assert "unreadable state" in caplog.text


@pytest.mark.parametrize("bad", ["", "a.b", "a b", "x" * 65, None, 3])
def test_bucket_names_are_checked(bad: object) -> None:
    with pytest.raises(BadInputError):
        check_bucket(bad)
