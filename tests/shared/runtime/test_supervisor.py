"""The supervisor restarts crashed children with backoff, gives up on crash loops, stops cleanly."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shared.errors import ConfigError
from shared.runtime import (
    RestartPolicy,
    RestartTracker,
    ServiceSpec,
    Supervisor,
    SupervisorEvent,
    backoff_delay,
    describe_exit,
)
from tests.shared.runtime.kids import await_until, gone, kid_pids, wait_until, write_kid

FAST = RestartPolicy(initial_delay_s=0.05, max_delay_s=0.2, fast_exit_s=60, give_up_after=50)


def _supervisor(
    tmp_path: Path, specs: list[ServiceSpec], policy: RestartPolicy = FAST
) -> tuple[Supervisor, list[SupervisorEvent]]:
    env = {**os.environ, **write_kid(tmp_path / "kids")}
    events: list[SupervisorEvent] = []
    sup = Supervisor(
        specs, log_dir=tmp_path / "logs", env=env, policy=policy, on_event=events.append
    )
    return sup, events


# -- pure restart logic ------------------------------------------------------------------


def test_backoff_doubles_up_to_the_cap() -> None:
    policy = RestartPolicy(initial_delay_s=0.5, factor=2, max_delay_s=30)
    delays = [backoff_delay(policy, n) for n in range(1, 10)]
    assert delays[:7] == [0.5, 1, 2, 4, 8, 16, 30]
    assert delays[7:] == [30, 30]
    assert backoff_delay(policy, 0) == 0


def test_tracker_gives_up_after_consecutive_fast_crashes() -> None:
    tracker = RestartTracker(RestartPolicy(fast_exit_s=10, give_up_after=3))
    assert tracker.on_exit(0.1) == 0.5
    assert tracker.on_exit(0.1) == 1.0
    assert tracker.on_exit(0.1) is None


def test_tracker_a_long_run_resets_backoff_and_crash_count() -> None:
    tracker = RestartTracker(RestartPolicy(fast_exit_s=10, reset_after_s=60, give_up_after=3))
    tracker.on_exit(0.1)
    tracker.on_exit(0.1)
    # Up for 30 s: not a crash loop any more, but still flapping, so backoff keeps growing.
    assert tracker.on_exit(30) == 2.0
    assert tracker.fast_failures == 0
    assert tracker.on_exit(0.1) == 4.0
    # Up for two minutes: healthy again, backoff starts over.
    assert tracker.on_exit(120) == 0.5
    assert tracker.on_exit(0.1) == 1.0


def test_invalid_specs_and_policies_are_rejected() -> None:
    with pytest.raises(ConfigError):
        ServiceSpec("Bad Name", "x")
    with pytest.raises(ConfigError):
        ServiceSpec("ok", "not a module")
    with pytest.raises(ConfigError):
        RestartPolicy(initial_delay_s=5, max_delay_s=1)
    with pytest.raises(ConfigError):
        Supervisor([ServiceSpec("a", "x"), ServiceSpec("a", "y")], log_dir=Path("."))


def test_describe_exit() -> None:
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(-9) == "killed by SIGKILL"


# -- real child processes ----------------------------------------------------------------


async def test_killed_child_is_restarted_and_env_reaches_it(tmp_path: Path) -> None:
    sup, events = _supervisor(tmp_path, [ServiceSpec("kid", "r42kid")])
    sup.env["NATS_URL"] = "nats://example.invalid:4222"
    kids = tmp_path / "kids"
    await sup.start()
    try:
        first = sup.pids["kid"]
        await await_until(lambda: kid_pids(kids, "kid") == [first], what="first kid up")
        os.kill(first, signal.SIGKILL)
        await await_until(lambda: len(kid_pids(kids, "kid")) == 2, what="restarted kid up")
        second = sup.pids["kid"]
    finally:
        await sup.stop()
    exited = [e for e in events if e.kind == "exited"]
    assert exited[0].pid == first and exited[0].returncode == -signal.SIGKILL
    assert "killed by SIGKILL" in exited[0].message
    assert [e.delay_s for e in events if e.kind == "restarting"] == [0.05]
    assert kid_pids(kids, "kid") == [first, second]
    pid_file = kids / f"kid.{second}"
    assert pid_file.read_text() == "nats://example.invalid:4222"
    assert gone(first) and gone(second)
    log = (tmp_path / "logs" / "kid.log").read_text()
    assert log.count("start: python -m r42kid") == 2


async def test_crash_loop_backs_off_then_gives_up(tmp_path: Path) -> None:
    policy = RestartPolicy(
        initial_delay_s=0.01, factor=2, max_delay_s=0.04, fast_exit_s=60, give_up_after=5
    )
    sup, events = _supervisor(tmp_path, [ServiceSpec("kid", "r42kid", ("crash",))], policy)
    await sup.start()
    await asyncio.wait_for(sup.wait(), 60)
    kinds = [e.kind for e in events]
    assert kinds.count("started") == 5 and kinds[-1] == "gave_up"
    # Growing, capped backoff between the attempts.
    assert [e.delay_s for e in events if e.kind == "restarting"] == [0.01, 0.02, 0.04, 0.04]
    assert all(e.returncode == 3 for e in events if e.kind == "exited")
    assert "boom: kid cannot start" in next(e for e in events if e.kind == "exited").message
    gave_up = events[-1]
    assert "5 times in a row" in gave_up.message and "kid.log" in gave_up.message
    assert sup.pids == {}
    assert len(kid_pids(tmp_path / "kids", "kid")) == 5


async def test_stop_terminates_children_and_their_helpers(tmp_path: Path) -> None:
    specs = [ServiceSpec("kid", "r42kid", ("grandchild",)), ServiceSpec("calm", "r42kid")]
    sup, events = _supervisor(tmp_path, specs)
    await sup.start()
    helper_file = tmp_path / "kids" / "kid.grandchild"
    await await_until(helper_file.exists, what="grandchild pid file")
    helper = int(helper_file.read_text())
    pids = list(sup.pids.values())
    assert len(pids) == 2 and not any(gone(p) for p in [*pids, helper])
    await sup.stop()
    assert all(gone(p) for p in pids)
    await await_until(lambda: gone(helper), timeout=10, what="grandchild to die")
    assert sorted(e.service for e in events if e.kind == "stopped") == ["calm", "kid"]
    assert not [e for e in events if e.kind in ("restarting", "killed")]


async def test_child_ignoring_sigterm_is_killed_after_the_timeout(tmp_path: Path) -> None:
    policy = RestartPolicy(stop_timeout_s=0.5)
    sup, events = _supervisor(tmp_path, [ServiceSpec("kid", "r42kid", ("stubborn",))], policy)
    await sup.start()
    log = tmp_path / "logs" / "kid.log"
    # Only once it printed has it installed SIG_IGN for SIGTERM.
    await await_until(lambda: "kid ready" in log.read_text(), what="kid ready")
    pid = sup.pids["kid"]
    await sup.stop()
    assert gone(pid)
    assert [e.kind for e in events][-2:] == ["killed", "stopped"]
    assert next(e for e in events if e.kind == "stopped").returncode == -signal.SIGKILL


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_children_die_with_a_killed_supervisor(tmp_path: Path) -> None:
    env = {**os.environ, **write_kid(tmp_path / "kids")}
    script = (
        "import asyncio, pathlib, sys\n"
        "from shared.runtime import ServiceSpec, Supervisor\n"
        "async def main():\n"
        "    sup = Supervisor([ServiceSpec('kid', 'r42kid')], log_dir=pathlib.Path(sys.argv[1]))\n"
        "    await sup.start()\n"
        "    await asyncio.sleep(3600)\n"
        "asyncio.run(main())\n"
    )
    boss = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "logs")], env=env)
    try:
        wait_until(lambda: bool(kid_pids(tmp_path / "kids", "kid")), what="kid to start")
        kid = kid_pids(tmp_path / "kids", "kid")[0]
        assert not gone(kid)
    finally:
        boss.kill()
        boss.wait()
    wait_until(lambda: gone(kid), timeout=15, what="orphaned kid to die")


async def test_a_staged_start_spawns_each_stage_and_nothing_after_stop(tmp_path: Path) -> None:
    specs = [ServiceSpec("first", "r42kid"), ServiceSpec("later", "r42kid")]
    sup, _ = _supervisor(tmp_path, specs)
    kids = tmp_path / "kids"
    with pytest.raises(ConfigError, match="unknown service instances"):
        await sup.start(["nope"])
    await sup.start(["first"])
    try:
        assert list(sup.pids) == ["first"] and sup.pending == ["later"]
        await sup.start()  # the rest: `first` is not started twice
        assert list(sup.pids) == ["first", "later"] and sup.pending == []
        # Each writes its pid file when its Python runs: the first spawned need not be first.
        await await_until(lambda: len(kid_pids(kids, "later")) == 1, what="later kid up")
        await await_until(lambda: len(kid_pids(kids, "first")) >= 1, what="first kid up")
        assert len(kid_pids(kids, "first")) == 1
    finally:
        await sup.stop()
    stopped, _ = _supervisor(tmp_path / "again", specs)
    await stopped.start(["first"])
    await stopped.stop()
    await stopped.start()  # after a stop (Ctrl-C mid-start) the later stage stays down
    assert stopped.pids == {} and stopped.pending == ["later"]
    assert kid_pids(tmp_path / "again" / "kids", "later") == []
