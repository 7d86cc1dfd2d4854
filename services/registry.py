"""The services `r42 up` supervises and the console chat it opens.

`SERVICES` is computed when read (module `__getattr__`), not at import: a service counts
once its package has a `__main__` module, so `r42 up` runs every service that exists.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable, Coroutine
from importlib.machinery import PathFinder
from typing import Any

from shared.errors import ConfigError
from shared.runtime import ServiceSpec

CANDIDATES: tuple[ServiceSpec, ...] = (
    ServiceSpec("extractor", "services.extractor"),
    ServiceSpec("r42", "services.r42"),
    ServiceSpec("content", "services.content"),
    ServiceSpec("quiz", "services.quiz"),
    ServiceSpec("gateway", "services.gateway"),
    ServiceSpec("telemetry", "services.telemetry"),
)
"""Every service R42 has, in start order; the ones not written yet are skipped."""

CONSOLE = "services.gateway.console:run"
"""The console chat: `async def run(*, settings: Settings) -> None`, returns when the user
quits and is cancellable (Ctrl-C); `settings.nats_url` points at the running bus."""

ConsoleRun = Callable[..., Coroutine[Any, Any, None]]


def has_main(module: str) -> bool:
    """Whether `python -m module` would run: the package exists and has a __main__ module."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    if spec.submodule_search_locations is None:
        return True  # a plain module runs as itself
    # Looked up on the package path without importing the package: listing services must
    # not execute their code in the `r42 up` process.
    return PathFinder.find_spec("__main__", list(spec.submodule_search_locations)) is not None


def available_services() -> tuple[ServiceSpec, ...]:
    """The candidates whose package can be run with `python -m`."""
    return tuple(spec for spec in CANDIDATES if has_main(spec.module))


def select_services(names: list[str]) -> tuple[ServiceSpec, ...]:
    """Specs for `--service` values: a candidate's name, or `name=python.module`."""
    known = {spec.name: spec for spec in CANDIDATES}
    chosen: list[ServiceSpec] = []
    for raw in names:
        name, sep, module = raw.partition("=")
        name, module = name.strip(), module.strip()
        if sep:
            spec = ServiceSpec(name, module)
        elif name in known:
            spec = known[name]
        else:
            raise ConfigError(
                f"unknown service {name!r}; known: {', '.join(known)} (or use name=python.module)"
            )
        if not has_main(spec.module):
            raise ConfigError(f"service {spec.name}: `python -m {spec.module}` cannot run yet")
        if any(c.name == spec.name for c in chosen):
            raise ConfigError(f"service {spec.name!r} given twice")
        chosen.append(spec)
    return tuple(chosen)


def resolve_console(path: str | None = None) -> ConsoleRun | None:
    """The console entry point, or None when its module does not exist yet.

    A module that exists but fails to import, or a non-async entry, raises ConfigError:
    that is a bug to show, not a missing feature to hide.
    """
    path = path or CONSOLE
    module_name, _, attr = path.partition(":")
    try:
        if importlib.util.find_spec(module_name) is None:
            return None
    except ImportError:
        return None
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(f"console {module_name} failed to load: {exc!r}") from exc
    run: Callable[..., Coroutine[Any, Any, None]] | None = getattr(module, attr or "run", None)
    if run is None:
        return None
    if not inspect.iscoroutinefunction(run):
        raise ConfigError(f"console entry {path} must be an async function")
    return run


def __getattr__(name: str) -> Any:
    if name == "SERVICES":
        return available_services()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
