"""The Anthropic SDK loads on the first model call, not when a service builds its runtime.

A fresh interpreter is the only place to see what start-up imports; that the lazy provider
answers on its first call is what every in-process test against the fake Anthropic exercises.
"""

from __future__ import annotations

import os
import subprocess
import sys

from shared.llm import LLMRuntime
from shared.llm.providers.lazy import LazyAnthropicProvider
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

SCRIPT = """
import sys
from shared.config import build_settings
from shared.llm import configure_llm

runtime = configure_llm(build_settings(llm="anthropic"))
print(type(runtime.provider).__name__, "anthropic" in sys.modules)
"""


def test_a_runtime_with_a_key_does_not_load_the_sdk_at_start() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("R42_", "ANTHROPIC_"))}
    env.update(ANTHROPIC_API_KEY=FAKE_ANTHROPIC_API_KEY, R42_LIMITER="off")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["LazyAnthropicProvider", "False"]


def test_the_fake_backed_runtime_answers_through_the_lazy_provider(fake_llm: LLMRuntime) -> None:
    assert isinstance(fake_llm.provider, LazyAnthropicProvider)


def test_the_lazy_provider_offers_every_call_of_the_real_one() -> None:
    # A call missing here is silently skipped by callers that probe for it (count_tokens was).
    from shared.llm.providers.anthropic_api import AnthropicProvider
    from shared.llm.providers.lazy import LazyAnthropicProvider

    def public(cls: type) -> set[str]:
        return {n for n in vars(cls) if not n.startswith("_") and callable(getattr(cls, n))}

    assert public(AnthropicProvider) - {"client"} <= public(LazyAnthropicProvider)


FIRST_CALL = """
import asyncio, sys, threading
where = []

class Spy:  # notes which thread imports the SDK
    def find_spec(self, name, path=None, target=None):
        if name == "anthropic":
            main = threading.current_thread() is threading.main_thread()
            where.append("main" if main else "worker")
        return None

sys.meta_path.insert(0, Spy())
from shared.llm.providers.lazy import LazyAnthropicProvider
from shared.llm.providers.base import ProviderRequest

async def main():
    lazy = LazyAnthropicProvider(api_key="k", base_url="http://127.0.0.1:9", timeout=1.0)
    try:
        body = {"model": "m", "max_tokens": 1, "messages": []}
        await lazy.create(ProviderRequest(params=body, timeout=1.0))
    except Exception:  # nothing listens on port 9: the call fails after the import
        pass
    await lazy.aclose()

asyncio.run(main())
print(where)
"""


def test_the_first_call_imports_the_sdk_off_the_event_loop() -> None:
    """~1 s of import on the loop would freeze rpc answers, heartbeats and flushes meanwhile."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("R42_", "ANTHROPIC_"))}
    done = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['worker']", done.stdout
