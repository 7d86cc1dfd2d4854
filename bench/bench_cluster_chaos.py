"""Chaos on a cluster: SIGKILL a NATS node, then a service replica, mid-ingest and mid-chats.

Two runs of `r42 up --cluster 3 --replicas 2` on fresh data dirs, the fake Anthropic server
answering every model call (extraction from the document's headings, chat with one text
reply after a short delay so turns are in flight):

1. a 15-chunk ingest: once some chunks are merged, SIGKILL the node leading the CHUNKS
   stream, wait until it is back, then SIGKILL one extractor replica;
2. 50 concurrent chats (50 users, one turn each), asked as the gateway core asks (a turn id,
   asked again when no reply comes): SIGKILL another node, then one r42 replica, while the
   turns run.

The calm run does the same without kills. Prints: chunks lost (never merged) and
duplicated (a source completed twice, a topic stored twice), the KB against the calm
run, chat errors and turns answered twice (a user's thread holding more than one turn),
and the time to recover (every node and replica back and ready) after each kill.
Run: `.venv/bin/python bench/bench_cluster_chaos.py` (a few minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.extractor.offline import derive_graph  # noqa: E402
from services.extractor.prompts import split_document_message  # noqa: E402
from services.gateway.core.chat_retry import ask_r42  # noqa: E402
from shared.bus import ChatRequest, NatsAuth, build_broker  # noqa: E402
from shared.errors import R42Error  # noqa: E402
from tests.fakes.anthropic_server import (  # noqa: E402
    FakeAnthropic,
    Reply,
    slow,
    text_reply,
    tool_reply,
)
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY  # noqa: E402

R42 = str(Path(sys.executable).parent / "r42")
CHUNKS = 15
CHATS = 50
REPLICAS = 2
CHAT_DELAY_S = 0.4
CHAT_BUDGET_S = 150.0  # the gateway's chat_timeout
ANSWER = "Verlof vraag je aan in het HR-portaal."
# Budgets far above what 50 turns need: the benchmark measures failover, not pacing.
_WIDE = {"per_minute": 1_000_000}
LIMITS = {"classes": {c: {"requests": _WIDE, "input_tokens": _WIDE, "output_tokens": _WIDE}
                      for c in ("haiku", "sonnet", "opus", "other")}}  # fmt: skip


def document() -> str:
    """A handbook page that splits into CHUNKS chunks, one heading (→ one topic) each."""
    parts = []
    for i in range(CHUNKS):
        body = f"Cluster practice {i} is how team {i} keeps the wiki honest. " * 6
        parts.append(f"# Cluster practice {i}\n\n{body.strip()}\n")
    return "\n".join(parts)


def _user_text(body: Any) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return str(content)


def respond(body: Any) -> Reply:
    """Extraction calls get the document's headings as topics; anything else a short answer."""
    tools = {t.get("name") for t in body.get("tools") or []}
    if "emit_knowledge_graph" in tools:
        parsed = split_document_message(_user_text(body))
        if parsed is not None:
            name, doc, known = parsed
            return tool_reply("emit_knowledge_graph", derive_graph(doc, name=name, known_ids=known))
    return slow(text_reply(ANSWER), CHAT_DELAY_S)


@dataclass
class Run:
    """One `r42 up --cluster 3` on its own data dir."""

    data: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    recover: list[tuple[str, float]] = field(default_factory=list)

    def up(self) -> None:
        log = self.data.parent / f"{self.data.name}.up.out"
        self.proc = subprocess.Popen(
            [R42, "up", "--no-console", "--cluster", "3", "--replicas", str(REPLICAS),
             "--data-dir", str(self.data)],
            stdin=subprocess.DEVNULL, stdout=log.open("wb"), stderr=subprocess.STDOUT,
            env=self.env,
        )  # fmt: skip
        deadline = time.monotonic() + 180
        while "R42 is up" not in (log.read_text() if log.exists() else ""):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"r42 up did not come up:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        # The banner comes once the chat path answers; content and telemetry start after it.
        # Kills must find every replica of every service running, or "recovered" means less.
        while not self.all_ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"not every service became ready:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)

    def all_ready(self, dead: frozenset[int] = frozenset()) -> bool:
        """Three NATS nodes and every service's replicas ready, none still to start or dead."""
        doc = self.status()
        nodes = [n["pid"] for n in doc.get("nats") or []]
        svcs = doc.get("services") or []
        if len(nodes) != 3 or doc.get("starting") or dead & {*nodes, *(s["pid"] for s in svcs)}:
            return False
        return bool(svcs) and all(s["ready"] for s in svcs)

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads((self.data / "runtime.json").read_text())
        return state

    def status(self) -> dict[str, Any]:
        """`r42 status --json`, computed here (a CLI process per poll would blur the timings)."""
        from services.cli.status import collect

        return collect(self.data) or {}

    def kill(self, *victims: tuple[str, int], gap_s: float = 0.3) -> None:
        """SIGKILL each pid `gap_s` apart, then time until every node and replica is back."""
        killed: list[tuple[str, int, float]] = []
        for what, pid in victims:
            if killed:
                time.sleep(gap_s)
            os.kill(pid, signal.SIGKILL)
            killed.append((what, pid, time.monotonic()))
        dead = {pid for _, pid, _ in killed}
        while time.monotonic() - killed[0][2] < 300:
            if self.all_ready(frozenset(dead)):
                now = time.monotonic()
                self.recover += [(what, now - at) for what, _, at in killed]
                return
            time.sleep(0.05)
        raise SystemExit(f"did not recover from {[w for w, _, _ in killed]} within 300 s")

    def leader_pid(self, stream: str) -> int:
        """The pid of the node leading `stream` (server names are r42-<n>, nodes nats-<n>)."""
        return asyncio.run(self._leader(stream))

    async def _leader(self, stream: str) -> int:
        from shared.runtime.session import connect_nats

        state = self.state()
        auth = NatsAuth(Path(state["users_dir"]) / "runtime.nk", "_INBOX_runtime")
        nc = await connect_nats(state["nats_url"], auth=auth)
        try:
            info = await nc.jetstream().stream_info(stream)
        finally:
            await nc.close()
        leader = str(info.cluster.leader if info.cluster else "r42-1")
        node = next(n for n in state["nats_nodes"] if n["name"] == f"nats-{leader[-1]}")
        return int(node["pid"])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(90)

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.data / "r42.db")

    def merged(self) -> int:
        with self.db() as db:
            return int(db.execute("select count(*) from source_chunks").fetchone()[0])


def ingest_phase(run: Run, doc: Path, *, chaos: bool) -> dict[str, Any]:
    started = time.monotonic()
    ingest = subprocess.Popen(
        [R42, "ingest", str(doc), "--wait", "--timeout", "600"],
        env={**run.env, "R42_DATA_DIR": str(run.data)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    if chaos:
        while run.merged() < 3 and ingest.poll() is None:
            time.sleep(0.05)
        run.kill(("nats node (CHUNKS leader) during ingest", run.leader_pid("CHUNKS")))
        run.kill(("extractor replica during ingest", run.state()["services"]["extractor.1"]))
    out, _ = ingest.communicate(timeout=900)
    with run.db() as db:
        sources = db.execute("select id, status from sources").fetchall()
        topics = db.execute("select id, label, type from topics order by id").fetchall()
        rels = db.execute("select source, target, type from relations order by 1,2,3").fetchall()
        merged = db.execute("select count(*) from source_chunks").fetchone()[0]
    completed = asyncio.run(_count_subject(run, "SOURCES", "source.completed"))
    labels = Counter(label for _, label, _ in topics)
    return {
        "rc": ingest.returncode, "out": out.decode(errors="replace")[-1500:],
        "seconds": time.monotonic() - started, "sources": sources, "kb": (topics, rels),
        "lost": CHUNKS - int(merged),
        "duplicated": max(0, completed - 1) + sum(n - 1 for n in labels.values() if n > 1),
    }  # fmt: skip


async def _count_subject(run: Run, stream: str, subject: str) -> int:
    from shared.runtime.session import connect_nats

    state = run.state()
    auth = NatsAuth(Path(state["users_dir"]) / "runtime.nk", "_INBOX_runtime")
    nc = await connect_nats(state["nats_url"], auth=auth)
    try:
        info = await nc.jetstream().stream_info(stream, subjects_filter=subject)
    finally:
        await nc.close()
    return int((info.state.subjects or {}).get(subject, 0))


async def _chats(run: Run, *, chaos: bool) -> dict[str, Any]:
    state = run.state()
    auth = NatsAuth(Path(state["users_dir"]) / "cli.nk", "_INBOX_cli")
    broker = build_broker(state["nats_url"], name="bench-cluster-chaos", auth=auth)
    await broker.start()
    errors: list[str] = []
    latencies: list[float] = []

    replayed: list[int] = []

    async def chat(i: int) -> None:
        # As the gateway asks: one turn id per message, asked again when no reply comes.
        ask = ChatRequest(user_id=f"UCHAOS{i:02d}", text="Hoe vraag ik verlof aan?",
                          turn_id=f"chaos-{i:02d}")  # fmt: skip
        t0 = time.monotonic()
        try:
            reply = await ask_r42(broker, ask, timeout=CHAT_BUDGET_S)
        except R42Error as exc:
            errors.append(type(exc).__name__ + ": " + str(exc)[:60])
            return
        if reply.error_ref is not None:
            errors.append(f"error reply {reply.error_ref}")
            return
        if reply.replayed:
            replayed.append(i)
        latencies.append(time.monotonic() - t0)

    try:
        tasks = [asyncio.create_task(chat(i)) for i in range(CHATS)]
        if chaos:
            # Both while the turns run (each waits CHAT_DELAY_S on the model): a node, then a
            # replica, 0.3 s apart; recovery is timed from each kill.
            await asyncio.sleep(0.2)
            node = next(n["pid"] for n in state["nats_nodes"] if n["name"] == "nats-3")
            replica = state["services"]["r42.1"]
            await asyncio.to_thread(
                run.kill, ("nats node during chats", node), ("r42 replica during chats", replica)
            )
        await asyncio.gather(*tasks)
    finally:
        await broker.stop()
    with run.db() as db:
        turns = dict(db.execute(
            "select user, count(*) from thread_messages where role = 'user' and user like "
            "'%UCHAOS%' group by user"
        ).fetchall())  # fmt: skip
    twice = sum(1 for n in turns.values() if n > 1)
    return {"errors": errors, "answered": len(latencies), "latencies": latencies,
            "twice": twice, "replayed": len(replayed)}  # fmt: skip


def one_run(base: Path, env: dict[str, str], doc: Path, *, chaos: bool) -> dict[str, Any]:
    run = Run(base / ("chaos" if chaos else "calm"), env)
    run.up()
    try:
        ingest = ingest_phase(run, doc, chaos=chaos)
        chats = asyncio.run(_chats(run, chaos=chaos))
    finally:
        run.stop()
    return {"ingest": ingest, "chats": chats, "recover": run.recover}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    # A SIGTERM unwinds through the finally blocks, which stop the `r42 up` we started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    base = Path(tempfile.mkdtemp(prefix="r42-cluster-chaos-"))
    doc = base / "cluster-handbook.md"
    doc.write_text(document())
    with FakeAnthropic() as fake:
        fake.default = respond
        env = {
            **{k: v for k, v in os.environ.items()
               if not k.startswith(("R42_", "NATS_", "ANTHROPIC_", "SLACK_", "TEAMS_"))},
            "R42_LLM": "anthropic", "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY,
            "ANTHROPIC_BASE_URL": fake.url, "R42_EXTRACTOR_SAMPLE_HANDBOOK": "false",
            "R42_EXTRACTOR_MAX_CHUNK_CHARS": "400", "R42_EXTRACTOR_OVERLAP_CHARS": "0",
            "R42_LIMITS": json.dumps(LIMITS),
        }  # fmt: skip
        calm = one_run(base, env, doc, chaos=False)
        chaos = one_run(base, env, doc, chaos=True)
    ci, cc = chaos["ingest"], chaos["chats"]
    same = ci["kb"] == calm["ingest"]["kb"]
    print(f"bench_cluster_chaos: 3-node JetStream cluster (R3), {REPLICAS} replicas per service, "
          f"fake Anthropic; data under {base}")  # fmt: skip
    print(f"  ingest ({CHUNKS} chunks): lost {ci['lost']}, duplicated {ci['duplicated']} "
          f"(uninterrupted: lost {calm['ingest']['lost']}, duplicated "
          f"{calm['ingest']['duplicated']}); sources {[s for _, s in ci['sources']]}; "
          f"{ci['seconds']:.1f} s (uninterrupted {calm['ingest']['seconds']:.1f} s)")  # fmt: skip
    print(f"  KB equal to an uninterrupted run: {'yes' if same else 'no'} "
          f"({len(ci['kb'][0])} topics, {len(ci['kb'][1])} relations; uninterrupted "
          f"{len(calm['ingest']['kb'][0])}, {len(calm['ingest']['kb'][1])})")  # fmt: skip
    errs = Counter(cc["errors"])
    print(f"  {CHATS} concurrent chats: answered {cc['answered']}, errors {len(cc['errors'])}"
          f"{' ' + dict(errs).__repr__() if errs else ''}, answered twice {cc['twice']} "
          f"(uninterrupted: answered {calm['chats']['answered']}, errors "
          f"{len(calm['chats']['errors'])}, twice {calm['chats']['twice']})")  # fmt: skip
    lat = sorted(cc["latencies"])
    calm_lat = sorted(calm["chats"]["latencies"])
    if lat and calm_lat:
        print(f"  chat latency: median {statistics.median(lat):.2f} s, max {lat[-1]:.2f} s "
              f"(uninterrupted: median {statistics.median(calm_lat):.2f} s, max "
              f"{calm_lat[-1]:.2f} s); {cc['replayed']} replies came from a retry that found "
              f"the turn already answered")  # fmt: skip
    for what, seconds in chaos["recover"]:
        print(f"  time to recover from SIGKILL of the {what}: {seconds:.1f} s")
    if ci["rc"] != 0:
        print(f"  ingest exited {ci['rc']}: {ci['out']}")
    ok = same and ci["lost"] == 0 and ci["duplicated"] == 0 and cc["twice"] == 0
    ok = ok and not cc["errors"]
    return 0 if ok and ci["rc"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
