"""Replicas of a service: instance names, who stays single, and readiness per instance."""

from __future__ import annotations

import pytest

from shared.config import nats_servers
from shared.errors import ConfigError
from shared.runtime import ServiceSpec
from shared.runtime.nodes import check_cluster_size, stream_replicas
from shared.runtime.readiness import service_of
from shared.runtime.supervisor import replicate


def test_replicas_are_numbered_and_the_gateway_runs_once() -> None:
    specs = (ServiceSpec("r42", "services.r42"), ServiceSpec("gateway", "services.gateway"))
    assert replicate(specs, 1) == specs
    out = replicate(specs, 3)
    assert [s.instance for s in out] == ["r42.1", "r42.2", "r42.3", "gateway"]
    assert {s.name for s in out} == {"r42", "gateway"}
    assert [service_of(s.instance) for s in out] == ["r42", "r42", "r42", "gateway"]


@pytest.mark.parametrize("bad", [0, -1, 9])
def test_replicas_out_of_range_are_refused(bad: int) -> None:
    with pytest.raises(ConfigError, match="--replicas"):
        replicate((ServiceSpec("r42", "services.r42"),), bad)


@pytest.mark.parametrize("size", [2, 4, 0, 7])
def test_cluster_sizes_without_a_majority_are_refused(size: int) -> None:
    with pytest.raises(ConfigError, match="--cluster must be one of 1, 3, 5"):
        check_cluster_size(size)


def test_streams_are_r1_alone_and_r3_on_a_cluster() -> None:
    assert [stream_replicas(n) for n in (1, 3, 5)] == [1, 3, 3]


def test_nats_url_lists_every_node() -> None:
    assert nats_servers("nats://a:1, nats://b:2,,") == ["nats://a:1", "nats://b:2"]
    assert nats_servers("nats://a:1") == ["nats://a:1"]
