"""The stdlib GETs `r42 up` polls the nats-server monitor and the services' probes with."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from shared.runtime.loopback import LoopbackError, get, get_json, status


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        routes = {
            "/ok?x=1": (200, b'{"connections": []}'),
            "/down": (503, b"not ready"),
            "/text": (200, b"<html>"),
        }
        code, body = routes.get(self.path, (404, b""))
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    serve = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    serve.daemon = True
    serve.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_status_body_and_json_of_a_real_server(server: str) -> None:
    """The path and query reach the server; the status and body come back as sent."""
    assert get(f"{server}/ok?x=1", timeout=2) == (200, b'{"connections": []}')
    assert get_json(f"{server}/ok?x=1", timeout=2) == {"connections": []}
    assert status(f"{server}/down", timeout=2) == 503
    assert status(f"{server}/nowhere", timeout=2) == 404


def test_json_refused_for_an_error_status_or_a_body_that_is_not_json(server: str) -> None:
    """get_json says which: the HTTP status, or that the body is not JSON."""
    with pytest.raises(LoopbackError, match="HTTP 503"):
        get_json(f"{server}/down", timeout=2)
    with pytest.raises(LoopbackError, match="not JSON"):
        get_json(f"{server}/text", timeout=2)


def test_nothing_listening_is_no_status() -> None:
    """A refused connection is None for status() and a LoopbackError naming the URL for get()."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        assert status(f"http://127.0.0.1:{port}/healthz", timeout=2) is None
        with pytest.raises(LoopbackError, match=f"127.0.0.1:{port}/healthz"):
            get(f"http://127.0.0.1:{port}/healthz", timeout=2)


def test_a_server_that_never_answers_times_out() -> None:
    """Accepted but silent: the timeout ends the wait (a hung nats-server cannot hang up)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        started = time.monotonic()
        assert status(f"http://127.0.0.1:{sock.getsockname()[1]}/", timeout=0.2) is None
        assert time.monotonic() - started < 5


@pytest.mark.parametrize("url", ["https://127.0.0.1:1/", "127.0.0.1:8222/healthz", "http:///x"])
def test_only_plain_http_urls(url: str) -> None:
    """TLS or a URL without a host is a caller's mistake, said as such (not 'not answering')."""
    with pytest.raises(ValueError, match="not a plain http URL"):
        get(url, timeout=1)
