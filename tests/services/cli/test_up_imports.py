"""What `r42 up` imports before its services start: no FastStream, LLM library, aiohttp or httpx.

The supervisor starts NATS, ensures the streams and spawns the services; every module it
loads on the way delays the first answer (a fresh interpreter is the only place to see it).
Its HTTP polls (the nats-server monitor, each service's /readyz) use the standard library:
an httpx client builds an SSL context (~75 ms of CPU) for loopback http.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from services.cli import up
up.defer_imports()  # what run_up does first
import shared.runtime.session, shared.runtime.nodes, shared.runtime.readiness
from shared.bus import NatsAuth, ensure_streams
from shared.runtime import EmbeddedRuntime
from services.registry import available_services
print(sorted(m for m in ("faststream", "aiohttp.client", "shared.llm.call", "anthropic",
                         "shared.store.protocols", "httpx2") if m in sys.modules))
"""


def test_the_supervisor_start_path_loads_no_service_stack() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_lazily_exported_name_resolves() -> None:
    import shared.bus
    import shared.llm
    import shared.store

    for package in (shared.bus, shared.llm, shared.store):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
        with pytest.raises(AttributeError):
            _ = package.no_such_name
