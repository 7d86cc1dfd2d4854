"""The per-process Prometheus registry and R42's own metric families (built at start-up)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# Seconds: a sub-millisecond rpc up to a slow multi-tool LLM turn.
LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
WAIT_BUCKETS = (0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60)


class ObsMetrics:
    """Every metric R42 code records itself; FastStream's middleware adds the bus families."""

    def __init__(self, service: str, registry: CollectorRegistry | None = None) -> None:
        self.service = service
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.info = Gauge("r42_service_info", "1 per running service process",
                          ["service", "version"], registry=r)  # fmt: skip
        self.ready = Gauge("r42_service_ready", "1 when /readyz passes", registry=r)
        self.llm_calls = Counter(
            "r42_llm_calls_total", "LLM calls (one per call_llm, after retries)",
            ["task", "model", "provider", "outcome"], registry=r,
        )  # fmt: skip
        self.llm_duration = Histogram(
            "r42_llm_call_duration_seconds", "Wall time of one call_llm, retries included",
            ["model", "provider"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.llm_tokens = Counter(
            "r42_llm_tokens_total", "Tokens by kind (input, output, cache_read, cache_write)",
            ["model", "kind"], registry=r,
        )  # fmt: skip
        self.llm_cost = Counter("r42_llm_cost_usd_total", "Estimated LLM spend in USD",
                                ["model", "task"], registry=r)  # fmt: skip
        self.llm_cache_hits = Counter(
            "r42_llm_cache_hits_total", "Calls that read part of their prompt from the cache",
            ["model"], registry=r,
        )  # fmt: skip
        self.llm_http_errors = Counter(
            "r42_llm_http_errors_total", "HTTP errors of single attempts (429s counted here)",
            ["model", "status"], registry=r,
        )  # fmt: skip
        self.limiter_wait = Histogram(
            "r42_llm_limiter_wait_seconds", "Time call_llm waited for the shared rate limiter",
            ["model"], buckets=WAIT_BUCKETS, registry=r,
        )  # fmt: skip
        self.limiter_pauses = Counter(
            "r42_llm_limiter_pauses_total", "Shared pauses announced after a 429 retry-after",
            ["model"], registry=r,
        )  # fmt: skip
        self.rpc_server = Histogram(
            "r42_rpc_server_duration_seconds", "Core-NATS requests answered, by outcome",
            ["subject", "outcome"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.rpc_client = Histogram(
            "r42_rpc_client_duration_seconds", "Core-NATS requests sent, by outcome",
            ["subject", "outcome"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.consumer_pending = Gauge(
            "r42_consumer_pending_messages", "Messages a durable consumer has not been sent yet",
            ["stream", "consumer"], registry=r,
        )  # fmt: skip
        self.consumer_ack_pending = Gauge(
            "r42_consumer_ack_pending_messages", "Messages delivered but not acked yet",
            ["stream", "consumer"], registry=r,
        )  # fmt: skip
        self.consumer_redelivered = Gauge(
            "r42_consumer_redelivered_messages", "Messages redelivered at least once (pending)",
            ["stream", "consumer"], registry=r,
        )  # fmt: skip
        self.ingest_chunks_done = Gauge(
            "r42_ingest_chunks_done", "Chunks extracted so far, per source in progress",
            ["source_id"], registry=r,
        )  # fmt: skip
        self.ingest_chunks_total = Gauge(
            "r42_ingest_chunks_total", "Chunks to extract, per source in progress",
            ["source_id"], registry=r,
        )  # fmt: skip
        self.ingest_sources = Counter(
            "r42_ingest_sources_finished_total", "Sources whose ingest ended, by outcome",
            ["outcome"], registry=r,
        )  # fmt: skip
        self.info.labels(service=service, version=_version()).set(1)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("r42")
    except PackageNotFoundError:
        return "unknown"
