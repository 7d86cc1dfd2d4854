"""What the gateway benchmarks share: signed Slack requests, timed POSTs, the stack as processes.

The gateway runs as its own process (as under `r42 up`), so the benchmark's client, the fake
Slack and the fake model never share its event loop. `python bench/_gateway_bench.py bare
--port N --secret S` serves the baseline: a bare aiohttp endpoint that only verifies Slack's
signature and answers 200.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-signing-secret"


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank) of values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def load() -> str:
    """The machine's load averages (1, 5, 15 min), for the printed figures."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def sign(body: str, *, secret: str = SECRET) -> dict[str, str]:
    """Slack's signature headers for a body, signed now."""
    ts = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature or ""}


def event_body(event: Mapping[str, Any], *, event_id: str) -> str:
    """An Events API callback around one event, as Slack posts it."""
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": "T1",
            "api_app_id": "A1",
            "event_id": event_id,
            "event_time": int(time.time()),
            "event": dict(event),
        }
    )


def dm_event(n: int, text: str = "Hoe vraag ik verlof aan?") -> dict[str, Any]:
    """A top-level DM question from user n."""
    user = f"UB{n:05d}"
    return {
        "type": "message",
        "channel_type": "im",
        "channel": f"D{user[1:]}",
        "user": user,
        "text": text,
        "ts": f"1700{n:06d}.000100",
        "client_msg_id": f"cm-bench-{n}",
    }


async def timed_post(
    http: aiohttp.ClientSession, url: str, body: bytes, headers: Mapping[str, str], *, ok: int
) -> float:
    """POST once; seconds until the whole HTTP answer (raises unless its status is `ok`)."""
    started = time.perf_counter()
    async with http.post(url, data=body, headers=dict(headers)) as resp:
        await resp.read()
        elapsed = time.perf_counter() - started
        if resp.status != ok:
            raise RuntimeError(f"{url} answered {resp.status}, not {ok}")
    return elapsed


class SignedSlack:
    """Posts signed Slack requests (events, slash commands) to one URL and times the ack."""

    def __init__(self, http: aiohttp.ClientSession, url: str, *, secret: str = SECRET) -> None:
        self.http = http
        self.url = url
        self.secret = secret

    async def event(self, event: Mapping[str, Any], *, event_id: str) -> float:
        """One Events API callback; seconds until the 200."""
        body = event_body(event, event_id=event_id)
        headers = {"Content-Type": "application/json", **sign(body, secret=self.secret)}
        return await timed_post(self.http, self.url, body.encode(), headers, ok=200)

    async def command(self, command: str, text: str, *, user: str, response_url: str) -> float:
        """One slash command; seconds until the 200."""
        body = urlencode(
            {
                "command": command,
                "text": text,
                "user_id": user,
                "channel_id": "C1",
                "team_id": "T1",
                "trigger_id": "t",
                "response_url": response_url,
            }
        )
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            **sign(body, secret=self.secret),
        }
        return await timed_post(self.http, self.url, body.encode(), headers, ok=200)

    async def commands(
        self, command: str, text: str, n: int, *, response_url: str, first: int = 0
    ) -> list[float]:
        """n concurrent commands from n users."""
        return list(
            await asyncio.gather(
                *(
                    self.command(
                        command, text, user=f"UC{first + i:05d}", response_url=response_url
                    )
                    for i in range(n)
                )
            )
        )

    async def events(self, events: Sequence[Mapping[str, Any]], *, prefix: str) -> list[float]:
        """All events at once."""
        return list(
            await asyncio.gather(
                *(self.event(e, event_id=f"Ev{prefix}{i}") for i, e in enumerate(events))
            )
        )


def stack_env(
    *, nats_url: str, data_dir: Path, model_url: str | None, slack_url: str | None, **extra: str
) -> dict[str, str]:
    """Environment of a service process of the benchmark's stack (real variables, as deployed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("R42_", "SLACK_", "NATS_"))}
    env.update(
        {
            "NATS_URL": nats_url,
            "R42_STORE": f"sqlite:///{data_dir}/r42.db",
            "R42_DATA_DIR": str(data_dir),
            "R42_LIMITER": "off",
            "R42_LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
    )
    if model_url:
        env.update(
            {
                "R42_LLM": "anthropic",
                "ANTHROPIC_API_KEY": "sk-bench",
                "ANTHROPIC_BASE_URL": model_url,
            }
        )
    else:
        env["R42_LLM"] = "offline"
    if slack_url:
        env.update(
            {
                "SLACK_BOT_TOKEN": "xoxb-bench",
                "SLACK_SIGNING_SECRET": SECRET,
                "SLACK_API_BASE_URL": slack_url,
            }
        )
    env.update(extra)
    return env


class Processes:
    """Child processes of one benchmark run, stopped with SIGTERM (then killed) on exit."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """Start `python argv…` with its output in the run's log directory."""
        out = (self.log_dir / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, *argv], env=dict(env), stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
        self.procs.append((name, proc))

    def service(self, name: str, env: Mapping[str, str], *args: str) -> None:
        """`python -m services.<name> args…`."""
        self.start(name, ["-m", f"services.{name}", *args], env)

    def check(self) -> None:
        """Raise if a child died (with the tail of its log)."""
        for name, proc in self.procs:
            if proc.poll() is not None:
                tail = (self.log_dir / f"{name}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")

    def stop(self) -> None:
        """SIGTERM each child, wait up to 15 s, then kill."""
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def wait_ready(url: str, procs: Processes, *, timeout: float = 180.0) -> None:  # noqa: ASYNC109
    """Poll a health URL until it answers 200 (a child dying ends the wait with its log).

    Generous: four services importing at once on a loaded 2-core machine take a while.
    """
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            procs.check()
            try:
                async with http.get(url) as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} not ready within {timeout:g} s")


async def serve_bare(port: int, secret: str) -> None:
    """The baseline endpoint: verify the signature, answer 200, nothing else."""
    verifier = SignatureVerifier(secret)

    async def handle(request: web.Request) -> web.Response:
        body = (await request.read()).decode()
        ts = request.headers.get("X-Slack-Request-Timestamp", "")
        if not verifier.is_valid(body, ts, request.headers.get("X-Slack-Signature", "")):
            return web.Response(status=401)
        return web.Response(text="")

    async def health(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/slack/events", handle)
    app.router.add_get("/healthz", health)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the bare signed-request baseline endpoint")
    parser.add_argument("mode", choices=["bare"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", default=SECRET)
    args = parser.parse_args()
    asyncio.run(serve_bare(args.port, args.secret))
