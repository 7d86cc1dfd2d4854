"""The r42 service warms its search path at start: numba only for a KB that uses it."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from services.r42.warmup import warm_retrieval
from shared.kb.retrieval import RetrievalIndex
from shared.kb.scoring import NUMBA_MIN_TOPICS
from shared.store import Topic
assert warm_retrieval() > 0  # a fresh data dir: the small, numpy path
assert "numba" not in sys.modules, "a small KB must not pay numba's import and memory"
words = ["verlof", "pensioen", "salaris", "laptop", "declaratie", "thuiswerk", "reis", "cursus"]
topics = [Topic(id=f"t{i}", label=f"{words[i % 8]} regeling {i}", type="concept",
                description=f"over {words[(i * 3) % 8]} en {words[(i * 5) % 8]} nummer {i}")
          for i in range(NUMBA_MIN_TOPICS)]
index = RetrievalIndex.build(topics)
assert "shared.kb.kernels" not in sys.modules
assert warm_retrieval(index, topics[0].label) > 0
assert "shared.kb.kernels" in sys.modules, "a large KB's first turn would load the kernels"
print("ok")
"""


def test_warm_up_takes_the_path_the_kb_will_use() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
