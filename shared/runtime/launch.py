"""Child bootstrap: `python -m shared.runtime.launch MODULE [ARGS]` ≈ `python -m MODULE [ARGS]`.

It first asks the kernel to SIGTERM this process when the supervisor dies (Linux
PR_SET_PDEATHSIG), so even a SIGKILLed `r42 up` leaves no orphaned service behind.
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import sys

# Only the standard library here: this runs before every service starts, so it stays cheap
# (and the package __init__ is lazy for the same reason).
PR_SET_PDEATHSIG = 1
SUPERVISOR_PID_ENV = "R42_SUPERVISOR_PID"


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
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
