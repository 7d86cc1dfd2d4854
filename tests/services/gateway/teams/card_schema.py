"""Validation against the vendored Adaptive Cards 1.5 and Teams manifest schemas."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

from services.gateway.teams.cards import CARD_VERSION, MAX_CARD_BYTES, card_size

SCHEMAS = Path(__file__).parent / "schemas"


@functools.cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    # The schema itself must be valid; its format checks are skipped because the manifest
    # schema uses \p{L} patterns (ECMA regex) that Python's re cannot compile.
    cls(cls.META_SCHEMA).validate(schema)
    return cls(schema)  # type: ignore[no-any-return]


def card_errors(card: dict[str, Any]) -> list[str]:
    """Why a card is not a valid 1.5 card that Teams accepts (empty when it is)."""
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
        for e in _validator("adaptive-card-1.5.json").iter_errors(card)
    ]
    if card.get("version") != CARD_VERSION:
        errors.append(f"version {card.get('version')!r} is not {CARD_VERSION}")
    if card_size(card) > MAX_CARD_BYTES:
        errors.append(f"{card_size(card)} bytes is over {MAX_CARD_BYTES}")
    return errors


def assert_valid_card(card: dict[str, Any]) -> None:
    """Fail with every schema error of a card."""
    errors = card_errors(card)
    assert not errors, f"invalid Adaptive Card: {errors}"


def manifest_errors(manifest: dict[str, Any]) -> list[str]:
    """Schema errors of a Teams app manifest."""
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
        for e in _validator("MicrosoftTeams-1.29.schema.json").iter_errors(manifest)
    ]
