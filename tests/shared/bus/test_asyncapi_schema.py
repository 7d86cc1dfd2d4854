"""docs/asyncapi.yaml is a valid AsyncAPI 3.0.0 document (the official JSON Schema)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT / "tests" / "data" / "asyncapi" / "asyncapi-3.0.0.schema.json"


def test_the_published_contract_validates_against_the_asyncapi_3_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    document = yaml.safe_load((ROOT / "docs" / "asyncapi.yaml").read_text())
    assert document["asyncapi"] == "3.0.0"
    errors = sorted(Draft7Validator(schema).iter_errors(document), key=lambda e: e.json_path)
    assert not errors, "\n".join(f"{e.json_path}: {e.message[:300]}" for e in errors[:10])


def test_the_validator_refuses_a_broken_document() -> None:
    schema = json.loads(SCHEMA.read_text())
    document = yaml.safe_load((ROOT / "docs" / "asyncapi.yaml").read_text())
    del document["info"]
    channel = next(iter(document["channels"].values()))
    channel["address"] = 42
    found = {e.json_path for e in Draft7Validator(schema).iter_errors(document)}
    assert "$" in found  # info is required
    assert any(path.startswith("$.channels") for path in found)
