"""Retrieval quality on the sample handbook: ours vs a BM25 baseline (bm25s), same golden set.

Run: python bench/bench_retrieval_quality.py
Prints recall@10, hit@3 and MRR overall and for the compound-word subset. Exits non-zero
only when the run itself is broken (missing files, unknown expected ids).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DISABLE_TQDM", "1")  # bm25s progress bars would drown the table

from shared.kb import KbTopic, RetrievalIndex, topics_from_markdown  # noqa: E402

HANDBOOK = ROOT / "services" / "extractor" / "sample_handbook"
GOLDEN = ROOT / "evals" / "retrieval" / "golden.jsonl"
K = 10

Search = Callable[[str], list[str]]


def load_handbook() -> list[KbTopic]:
    """All topics of the sample handbook, file by file in name order."""
    topics: list[KbTopic] = []
    for path in sorted(HANDBOOK.glob("*.md")):
        topics.extend(topics_from_markdown(path.read_text(encoding="utf-8"), source=path.name))
    return topics


def load_golden() -> list[dict]:
    """The golden questions."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def bm25_search(topics: list[KbTopic]) -> Search:
    """A bm25s baseline over the same text (label + description), Dutch stopwords."""
    import bm25s

    corpus = [f"{t.label}\n{t.description}" for t in topics]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="nl", show_progress=False), show_progress=False
    )

    def search(question: str) -> list[str]:
        tokens = bm25s.tokenize([question], stopwords="nl", show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = retriever.retrieve(tokens, k=min(K, len(topics)), show_progress=False)
        return [topics[int(i)].id for i in docs[0]]

    return search


def metrics(search: Search, rows: list[dict]) -> dict[str, float]:
    """Mean recall@10, hit@3 and MRR (first relevant hit within the top 10)."""
    recall = hit3 = mrr = 0.0
    for row in rows:
        ranked = search(row["question"])[:K]
        expected = set(row["expected"])
        recall += len(expected & set(ranked)) / len(expected)
        hit3 += bool(expected & set(ranked[:3]))
        first = next((i for i, topic_id in enumerate(ranked) if topic_id in expected), None)
        mrr += 0.0 if first is None else 1.0 / (first + 1)
    n = len(rows) or 1
    return {"recall@10": recall / n, "hit@3": hit3 / n, "mrr": mrr / n}


def main() -> int:
    """Print the quality table; non-zero exit only for a broken run."""
    topics = load_handbook()
    golden = load_golden()
    known = {t.id for t in topics}
    unknown = sorted({e for row in golden for e in row["expected"]} - known)
    if not topics or not golden or unknown:
        print(f"broken run: {len(topics)} topics, {len(golden)} questions, unknown ids {unknown}")
        return 1
    ours = RetrievalIndex.build(topics)
    plain = RetrievalIndex.build(topics, compound_weight=0.0)
    systems: dict[str, Search] = {
        "ours (tf-idf + compound)": lambda q: [h.topic_id for h in ours.search(q, k=K)],
        "ours without compound": lambda q: [h.topic_id for h in plain.search(q, k=K)],
        "bm25s baseline": bm25_search(topics),
    }
    compound = [row for row in golden if row.get("compound")]
    print(f"{len(topics)} topics, {len(golden)} questions ({len(compound)} compound)\n")
    print(f"{'system':28} {'subset':9} {'recall@10':>9} {'hit@3':>7} {'mrr':>7}")
    for name, search in systems.items():
        for subset, rows in (("all", golden), ("compound", compound)):
            m = metrics(search, rows)
            print(f"{name:28} {subset:9} {m['recall@10']:9.3f} {m['hit@3']:7.3f} {m['mrr']:7.3f}")
    misses = [
        row["question"]
        for row in golden
        if not set(row["expected"]) & set(systems["ours (tf-idf + compound)"](row["question"])[:3])
    ]
    print(f"\nours: {len(misses)} question(s) without a relevant topic in the top 3")
    for question in misses:
        print(f"  - {question}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
