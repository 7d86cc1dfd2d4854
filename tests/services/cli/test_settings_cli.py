"""Settings through real environment variables and real processes: one clear line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

VENV_R42 = Path(sys.executable).parent / "r42"
R42 = [str(VENV_R42)] if VENV_R42.exists() else [sys.executable, "-m", "services.cli"]


def run(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "R42_DATA_DIR": str(tmp_path / "data"), **env}
    return subprocess.run(args, env=full, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "value", ["U0123ABCD,U0456EFGH", '["U0123ABCD", "b7a4c3d2-1111-2222-3333-444455556666"]']
)
def test_admins_in_both_documented_forms_are_accepted(tmp_path: Path, value: str) -> None:
    probe = "from shared.config import build_settings; print(','.join(build_settings().admins))"
    done = run([sys.executable, "-c", probe], {"R42_ADMINS": value}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().split(",")[0] == "U0123ABCD"
    assert len(done.stdout.strip().split(",")) == 2
    # And the real CLI starts with it (no SettingsError traceback).
    done = run([*R42, "version"], {"R42_ADMINS": value}, tmp_path)
    assert done.returncode == 0, done.stderr


# Each bad value through a different command: the check is shared, the entry points differ.
BAD = [
    ({"R42_ADMINS": "[U1"}, "admins", ["up", "--no-console"]),
    ({"R42_ADMINS": "U1,has space"}, "admins", ["events", "tail"]),
    ({"R42_LIMITS": "{not json"}, "limits", ["up", "--no-console"]),
    ({"R42_STORE": "postgres://db/r42"}, "store", ["up", "--no-console"]),
    ({"R42_LLM_TIMEOUT_S": "soon"}, "llm_timeout_s", ["kb", "search", "x"]),
    ({"R42_NATS_INBOX_PREFIX": "inbox.x"}, "nats_inbox_prefix", ["status"]),
]


@pytest.mark.parametrize(("env", "field", "command"), BAD)
def test_cli_invalid_setting_is_one_line_and_exit_2(
    tmp_path: Path, env: dict[str, str], field: str, command: list[str]
) -> None:
    done = run([*R42, *command], env, tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    assert "invalid settings" in lines[0] and field in lines[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "data" / "runtime.json").exists()


@pytest.mark.parametrize("module", ["services.quiz", "services.extractor"])
def test_service_invalid_setting_is_one_line_and_exit_2(tmp_path: Path, module: str) -> None:
    done = run([sys.executable, "-m", module], {"R42_ADMINS": "[oops"}, tmp_path)
    assert done.returncode == 2, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "admins" in lines[0], done.stderr


def test_secret_value_never_echoed(tmp_path: Path) -> None:
    secret = "sk-ant-api03-notreal-" + "x" * 20
    done = run([*R42, "version"], {"R42_LIMITS": secret}, tmp_path)
    assert done.returncode == 2
    assert secret not in done.stderr + done.stdout


def test_gateway_http_without_a_bot_token_says_what_is_missing(tmp_path: Path) -> None:
    """`r42 gateway --http` with no Slack tokens exits at once instead of idling forever."""
    env = {name: "" for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET")}
    clean = {k: v for k, v in os.environ.items() if k not in env}
    full = {**clean, "R42_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [*R42, "gateway", "--http"], env=full, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "SLACK_BOT_TOKEN" in lines[0], lines
