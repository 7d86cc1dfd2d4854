"""The "R42 is up" banner of `r42 up`: English headless (a CLI log), Dutch above the console.

The console is a Dutch surface, so when `r42 up` opens it the banner above it speaks Dutch
too; without the console the banner is the CLI's own output and stays English.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.config import Settings
from shared.config import redact_url as display_url

if TYPE_CHECKING:
    from shared.runtime import EmbeddedRuntime, RuntimeState

_LABELS_NL = {
    "data dir": "datamap", "NATS": "NATS", "streams": "streams", "store": "opslag",
    "LLM": "taalmodel", "services": "diensten", "starting": "start nog", "logs": "logboeken",
    "console": "console",
}  # fmt: skip
_STREAM_ACTIONS_NL = {"created": "aangemaakt", "updated": "bijgewerkt", "unchanged": "ongewijzigd"}
WATCH = "run `r42 events tail` in another terminal to watch the event stream"
CONSOLE_NOTE_NL = "hieronder: stel een vraag, /help voor de commando's"


def banner_title(*, dutch: bool) -> str:
    """The first line, once every service answers."""
    return "R42 draait" if dutch else "R42 is up"


def next_line(*, console: bool, dutch: bool) -> str:
    """What to do next (the last banner line)."""
    if dutch:
        return (
            "Stel hieronder een vraag, of volg de gebeurtenissen met `r42 events tail` in een "
            "andere terminal. Ctrl-C stopt alles."
        )
    if console:
        return f"Next: ask something below, or {WATCH}. Ctrl-C stops everything."
    return f"Running headless; {WATCH}. Ctrl-C or SIGTERM stops everything."


def llm_summary(settings: Settings, *, dutch: bool = False) -> str:
    """Which LLM backend answers, without ever showing the key."""
    if settings.llm_provider == "offline":
        if dutch:
            why = "R42_LLM=offline" if settings.llm == "offline" else "geen ANTHROPIC_API_KEY"
            return f"offline ({why}): vaste antwoorden, gemarkeerd als offline"
        why = "R42_LLM=offline" if settings.llm == "offline" else "no ANTHROPIC_API_KEY"
        return f"offline ({why}): deterministic answers, marked as offline"
    models = f"{settings.model_fast}, {settings.model_standard}, {settings.model_reasoning}"
    where = (
        f" via {display_url(settings.anthropic_base_url)}" if settings.anthropic_base_url else ""
    )
    if dutch:
        warn = "" if settings.anthropic_api_key else " — maar ANTHROPIC_API_KEY ontbreekt!"
        return f"anthropic (snel/standaard/redeneren: {models}){where}{warn}"
    warn = "" if settings.anthropic_api_key else " — but ANTHROPIC_API_KEY is not set!"
    return f"anthropic (fast/standard/reasoning: {models}){where}{warn}"


def _starting_row(pending: list[str], *, dutch: bool) -> list[tuple[str, str]]:
    """The later stage of a staged start, named while it is still coming up."""
    if not pending:
        return []
    names = ", ".join(pending)
    if dutch:
        return [("starting", f"{names} (na de chat gestart; hun werk wacht tot ze er zijn)")]
    return [("starting", f"{names} (after the chat path; their work waits on the bus for them)")]


def banner(
    *, settings: Settings, state: RuntimeState, runtime: EmbeddedRuntime, console_note: str,
    dutch: bool = False,
) -> list[tuple[str, str]]:  # fmt: skip
    """The 'where things are' lines printed once everything runs."""
    nodes = state.nats_nodes
    if len(nodes) > 1:
        listed = ", ".join(f"{n.url} (pid {n.pid})" for n in nodes)
        cluster = (
            f"JetStream-cluster van {len(nodes)}" if dutch else f"JetStream cluster of {len(nodes)}"
        )
        nats = f"{cluster}, R{state.stream_replicas}: {listed}"
    elif state.nats_pid:
        where = "ingebouwd, opslag" if dutch else "embedded, store"
        nats = f"{state.nats_url} ({where} {state.nats_store})"
    else:
        where = "extern, uit NATS_URL" if dutch else "external, from NATS_URL"
        nats = f"{display_url(state.nats_url)} ({where})"
    services = ", ".join(f"{n} (pid {p})" for n, p in state.services.items())
    if not services:
        services = (
            "nog geen: geen dienstpakket heeft een __main__-module"
            if dutch
            else "none yet: no service package has a __main__ module"
        )
    rows = [
        ("data dir", state.data_dir),
        ("NATS", nats),
        ("store", display_url(settings.store_url)),
        ("LLM", llm_summary(settings, dutch=dutch)),
        ("services", services),
        *_starting_row(state.pending, dutch=dutch),
        ("logs", f"{runtime.logs_dir}/<service>.log" if state.services else "-"),
        ("console", CONSOLE_NOTE_NL if dutch else console_note),
    ]
    if runtime.stream_actions:
        counts: dict[str, int] = {}
        for action in runtime.stream_actions.values():
            counts[action] = counts.get(action, 0) + 1
        words = _STREAM_ACTIONS_NL if dutch else {}
        summary = ", ".join(f"{n} {words.get(a, a)}" for a, n in sorted(counts.items()))
        rows.insert(2, ("streams", summary))
    if dutch:
        rows = [(_LABELS_NL[key], value) for key, value in rows]
    return rows
