"""Runtime: the embedded nats-server and the process supervisor behind `r42 up`."""

from shared.runtime.nats_server import EmbeddedNatsServer, NatsServerError, find_nats_server

__all__ = ["EmbeddedNatsServer", "NatsServerError", "find_nats_server"]
