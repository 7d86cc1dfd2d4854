"""Child bootstrap: `python -m shared.runtime.launch MODULE [ARGS]` ≈ `python -m MODULE [ARGS]`.

It first asks the kernel to SIGTERM this process when the supervisor dies (Linux
PR_SET_PDEATHSIG), so even a SIGKILLed `r42 up` leaves no orphaned service behind.

Then it defers aiohttp: nats-py imports it at module level only for its WebSocket transport,
which R42 never uses (it connects over TCP), and it costs each process ~9 MB and ~0.25 s.
Deferred, `import aiohttp` is free and the package runs on first use of one of its names,
so code that does use it still works. The gateway (Slack Bolt, the Teams SDK) uses it at
once and imports it as usual.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import runpy
import signal
import sys
import types

# Only the standard library here: this runs before every service starts, so it stays cheap
# (and the package __init__ is lazy for the same reason).
PR_SET_PDEATHSIG = 1
SUPERVISOR_PID_ENV = "R42_SUPERVISOR_PID"
DEFERRED = ("aiohttp",)
"""Packages nats-py imports that a bus-only process never uses (the WebSocket transport)."""
EAGER_MODULES = frozenset({"services.gateway"})
"""Services that use aiohttp as soon as they start: deferring gains them nothing."""
LAUNCH_MODULE = "shared.runtime.launch"


def launch_command(module: str, args: tuple[str, ...] = (), python: str = "") -> list[str]:
    """The command line that runs `module` under this bootstrap (also a forked one's title)."""
    return [python or sys.executable, "-m", LAUNCH_MODULE, module, *args]


class _Deferred(types.ModuleType):
    """A module whose code runs when a name it does not have yet is first looked up.

    Unlike importlib's LazyLoader, reading `__spec__` (as every `import NAME` statement does)
    does not load it: the import system's own attributes are set already.
    """

    def __getattr__(self, name: str) -> object:
        spec = self.__spec__
        plain: types.ModuleType = self
        plain.__class__ = types.ModuleType  # its own code looks names up while it runs
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(self)
        return getattr(self, name)


def defer_imports(names: tuple[str, ...] = DEFERRED) -> list[str]:
    """Make `import NAME` cheap: the package runs when one of its names is first used.

    Returns the names deferred (one already imported, or not installed, is left alone).
    """
    deferred: list[str] = []
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        module.__class__ = _Deferred
        sys.modules[name] = module
        deferred.append(name)
    return deferred


def deferred_for(module: str) -> tuple[str, ...]:
    """What the child running `module` defers (nothing for the gateway)."""
    return () if module in EAGER_MODULES else DEFERRED


def die_with_parent() -> None:
    """Get SIGTERM when the parent dies; exit now if it already has (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    expected = os.environ.get(SUPERVISOR_PID_ENV, "")
    # The parent may have died between fork and prctl; then nobody would signal us.
    if expected.isdigit() and os.getppid() != int(expected):
        sys.exit("r42: supervisor is gone before start-up; exiting")


def main(argv: list[str]) -> None:
    """Run MODULE as __main__ with ARGS, the way `python -m` does."""
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: python -m shared.runtime.launch MODULE [ARGS...]")
    die_with_parent()
    module, *args = argv
    defer_imports(deferred_for(module))
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
