"""The fork server reads one JSON request per line and refuses anything else."""

from __future__ import annotations

import json

import pytest

from shared.runtime.zygote import ForkRequest

GOOD = {"module": "services.r42", "args": ["--x"], "env": {"A": "b"},
        "log_path": "/tmp/r42.log", "supervisor_pid": 4242}  # fmt: skip


def test_a_request_round_trips() -> None:
    request = ForkRequest.parse(json.dumps(GOOD).encode())
    assert request == ForkRequest("services.r42", ("--x",), {"A": "b"}, "/tmp/r42.log", 4242)
    assert ForkRequest.parse(request.line()) == request


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"module": 3}, "module and log_path must be strings"),
        ({"log_path": None}, "module and log_path must be strings"),
        ({"args": "--x"}, "args must be a list of strings"),
        ({"args": [1]}, "args must be a list of strings"),
        ({"env": {"A": 1}}, "env must map strings to strings"),
        ({"supervisor_pid": 1}, "supervisor_pid must be a pid"),
        ({"supervisor_pid": "4242"}, "supervisor_pid must be a pid"),
    ],
)
def test_a_malformed_request_is_refused(change: dict[str, object], reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        ForkRequest.parse(json.dumps({**GOOD, **change}).encode())


@pytest.mark.parametrize("line", [b"not json\n", b"[1, 2]\n", b"\n"])
def test_a_line_that_is_no_request_object_is_refused(line: bytes) -> None:
    with pytest.raises(ValueError):
        ForkRequest.parse(line)
