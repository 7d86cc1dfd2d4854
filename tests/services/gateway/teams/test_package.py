"""The Teams app package: manifest valid against the published 1.29 schema, icons, zip."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from PIL import Image

from services.gateway.teams.bot import ADMIN_COMMANDS, PERSONAL_ONLY
from tests.services.gateway.teams.card_schema import manifest_errors

ROOT = Path(__file__).resolve().parents[4]
TEAMS = ROOT / "deploy" / "teams"
APP_ID = "3f1c2b4a-9d8e-4f7a-b6c5-1e2d3c4b5a69"


def test_the_manifest_template_is_valid() -> None:
    manifest = json.loads((TEAMS / "manifest.json").read_text(encoding="utf-8"))
    assert manifest_errors(manifest) == []
    assert manifest["manifestVersion"] == "1.29"


def test_the_schema_check_catches_a_broken_manifest() -> None:
    manifest = json.loads((TEAMS / "manifest.json").read_text(encoding="utf-8"))
    manifest["bots"][0]["botId"] = "not-a-guid"
    manifest["colour"] = "#fff"
    assert len(manifest_errors(manifest)) >= 2


def test_every_command_the_bot_handles_is_listed() -> None:
    manifest = json.loads((TEAMS / "manifest.json").read_text(encoding="utf-8"))
    personal = {c["title"] for c in manifest["bots"][0]["commandLists"][0]["commands"]}
    assert {"help", "leaderboard", "clear", "ingest"} | ADMIN_COMMANDS | PERSONAL_ONLY <= personal


def test_make_teams_package_builds_a_valid_zip(tmp_path: Path) -> None:
    out = tmp_path / "r42-teams.zip"
    env = {**os.environ, "TEAMS_APP_ID": APP_ID}
    subprocess.run(
        [sys.executable, str(TEAMS / "package.py"), str(out)], env=env, check=True, timeout=60
    )
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["color.png", "manifest.json", "outline.png"]
        manifest = json.loads(zf.read("manifest.json"))
        color = Image.open(io.BytesIO(zf.read("color.png")))
        outline = Image.open(io.BytesIO(zf.read("outline.png"))).convert("RGBA")
    assert manifest_errors(manifest) == []
    assert manifest["id"] == APP_ID and manifest["bots"][0]["botId"] == APP_ID
    assert color.size == (192, 192)
    assert outline.size == (32, 32)
    # Outline icons are white on transparent, nothing else.
    colours = {px for px in outline.get_flattened_data() if px[3] > 0}
    assert colours and all(px[:3] == (255, 255, 255) for px in colours)
    assert any(px[3] == 0 for px in outline.get_flattened_data())


def test_the_package_needs_a_real_app_id(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEAMS_APP_ID"}
    done = subprocess.run(
        [sys.executable, str(TEAMS / "package.py"), str(tmp_path / "x.zip")],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "TEAMS_APP_ID" in done.stderr
    done = subprocess.run(
        [sys.executable, str(TEAMS / "package.py"), str(tmp_path / "x.zip")],
        env={**env, "TEAMS_APP_ID": "r42"}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "GUID" in done.stderr
