"""Child process for the cross-process tests: tries many acquires against one shared bucket.

Run as `python -m tests.shared.llm_limiter.limiter_worker URL BUCKET ATTEMPTS`; prints
"ready", waits for a line on stdin (so all workers start together), then prints how many
acquires completed within their patience.
"""

from __future__ import annotations

import asyncio
import sys

from shared.llm.limiter import NatsKvLimiter
from tests.shared.llm_limiter.helpers import MODEL, NEVER, sonnet_config

BURST = 20
PATIENCE_S = 3.0  # within-burst decisions take milliseconds; the rest never complete


async def main(url: str, bucket: str, attempts: int) -> None:
    """Connect, wait for the go signal, try `attempts` concurrent acquires, report."""
    limiter = await NatsKvLimiter.connect(
        url, bucket=bucket, config=sonnet_config(requests=(NEVER, BURST))
    )
    if limiter.mode != "nats":
        raise SystemExit("worker could not reach NATS")
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)

    async def attempt() -> bool:
        try:
            await asyncio.wait_for(
                limiter.acquire(model=MODEL, input_tokens=0, output_tokens=0), PATIENCE_S
            )
        except TimeoutError:
            return False
        return True

    admitted = sum(await asyncio.gather(*(attempt() for _ in range(attempts))))
    await limiter.aclose()
    print(admitted, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
