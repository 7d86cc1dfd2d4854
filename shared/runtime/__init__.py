"""Runtime: the embedded nats-server and the process supervisor behind `r42 up`.

Names load on first use (PEP 562): every supervised child starts through
`python -m shared.runtime.launch`, which imports this package, and should not pay for
pydantic and nats-py before its own code runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from shared.runtime.nats_server import EmbeddedNatsServer, NatsServerError, find_nats_server
    from shared.runtime.session import EmbeddedRuntime, check_nats, connect_nats, display_url
    from shared.runtime.state import (
        RuntimeBusyError,
        RuntimeLock,
        RuntimeState,
        find_running,
        pid_alive,
        read_state,
        reap_stale,
        remove_state,
        state_path,
        write_state,
    )
    from shared.runtime.supervisor import (
        RestartPolicy,
        RestartTracker,
        ServiceSpec,
        Supervisor,
        SupervisorEvent,
        backoff_delay,
        describe_exit,
        log_tail,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "shared.runtime.nats_server": ("EmbeddedNatsServer", "NatsServerError", "find_nats_server"),
    "shared.runtime.session": ("EmbeddedRuntime", "check_nats", "connect_nats", "display_url"),
    "shared.runtime.state": (
        "RuntimeBusyError", "RuntimeLock", "RuntimeState", "find_running", "pid_alive",
        "read_state", "reap_stale", "remove_state", "state_path", "write_state",
    ),
    "shared.runtime.supervisor": (
        "RestartPolicy", "RestartTracker", "ServiceSpec", "Supervisor", "SupervisorEvent",
        "backoff_delay", "describe_exit", "log_tail",
    ),
}  # fmt: skip
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "EmbeddedNatsServer",
    "EmbeddedRuntime",
    "NatsServerError",
    "RestartPolicy",
    "RestartTracker",
    "RuntimeBusyError",
    "RuntimeLock",
    "RuntimeState",
    "ServiceSpec",
    "Supervisor",
    "SupervisorEvent",
    "backoff_delay",
    "check_nats",
    "connect_nats",
    "describe_exit",
    "display_url",
    "find_nats_server",
    "find_running",
    "log_tail",
    "pid_alive",
    "read_state",
    "reap_stale",
    "remove_state",
    "state_path",
    "write_state",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
