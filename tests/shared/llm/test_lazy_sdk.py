"""The Anthropic SDK loads on the first model call, not when a service builds its runtime."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.fakes.anthropic_server import FakeAnthropic, text_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

SCRIPT = """
import asyncio, sys
from shared.config import build_settings
from shared.llm import call_llm, configure_llm

async def main():
    configure_llm(build_settings(llm="anthropic"))
    print("at start:", "anthropic" in sys.modules)
    ask = [{"role": "user", "content": "hoi"}]
    result = await call_llm(task="probe", tier="fast", messages=ask)
    print("after a call:", "anthropic" in sys.modules, result.text)

asyncio.run(main())
"""


def test_a_runtime_with_a_key_loads_the_sdk_only_on_its_first_call(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue(text_reply("Hallo."))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("R42_", "ANTHROPIC_"))}
    env.update(ANTHROPIC_API_KEY=FAKE_ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL=fake_anthropic.url,
               R42_LIMITER="off")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["at start: False", "after a call: True Hallo."]
