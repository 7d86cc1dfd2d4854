"""Retrieval quality on the sample handbook: R42 vs bm25s, scikit-learn TF-IDF and R42 before.

Run: python bench/bench_retrieval_quality.py
Prints recall@10, hit@3 and MRR per system for all Dutch questions, each kind of hard
question (compound, plural, inflection, paraphrase, situation, one-word) and the English
ones; then R42's relevance floor: off-topic precision (questions refused) and false
refusals on real questions. Exits non-zero only when the run itself is broken.
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

import numpy as np  # noqa: E402

from shared.kb import KbTopic, RetrievalIndex, is_relevant, topics_from_markdown  # noqa: E402

HANDBOOK = ROOT / "services" / "extractor" / "sample_handbook"
GOLDEN = ROOT / "evals" / "retrieval" / "golden.jsonl"
OFFTOPIC = ROOT / "evals" / "retrieval" / "offtopic.jsonl"
K = 10
GOALS = {"recall@10": 0.97, "hit@3": 0.93, "offtopic": 0.95}

Search = Callable[[str], list[str]]


def load_handbook() -> list[KbTopic]:
    """All topics of the sample handbook, file by file in name order."""
    topics: list[KbTopic] = []
    for path in sorted(HANDBOOK.glob("*.md")):
        topics.extend(topics_from_markdown(path.read_text(encoding="utf-8"), source=path.name))
    return topics


def load_rows(path: Path) -> list[dict]:
    """One JSON object per non-empty line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _text(topic: KbTopic) -> str:
    return f"{topic.id}\n{topic.label}\n{topic.label}\n{topic.description}"


def bm25_search(topics: list[KbTopic]) -> Search:
    """bm25s over the same text (id, label twice, description), Dutch stopwords and stemmer."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("dutch")
    corpus = [_text(t) for t in topics]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="nl", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )

    def search(question: str) -> list[str]:
        tokens = bm25s.tokenize([question], stopwords="nl", stemmer=stemmer, show_progress=False)
        if not any(tokens.ids):
            return []
        docs, scores = retriever.retrieve(tokens, k=min(K, len(topics)), show_progress=False)
        return [topics[int(i)].id for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    return search


def tfidf_search(topics: list[KbTopic]) -> Search:
    """scikit-learn TfidfVectorizer, queried the fast way: `q @ X.T` on CSR."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, strip_accents="unicode")
    matrix = vectorizer.fit_transform([_text(t) for t in topics]).tocsr()

    def search(question: str) -> list[str]:
        scores = (vectorizer.transform([question]) @ matrix.T).toarray().ravel()
        top = np.argsort(-scores, kind="stable")[:K]
        return [topics[int(i)].id for i in top if scores[i] > 0]

    return search


def previous_search(topics: list[KbTopic]) -> Search:
    """R42's retrieval before this change (TF-IDF + compound fallback + verbatim), frozen."""
    sys.path.insert(0, str(ROOT / "bench"))
    from _previous_retrieval import RetrievalIndex as Previous

    index = Previous.build(topics)
    return lambda q: [h.topic_id for h in index.search(q, k=K)]


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


def subsets(golden: list[dict]) -> dict[str, list[dict]]:
    """Question subsets by language and kind."""
    dutch = [row for row in golden if row.get("lang", "nl") == "nl"]
    groups = {"nl all": dutch, "nl compound": [r for r in dutch if r.get("compound")]}
    for kind in ("plural", "one-word", "inflection", "paraphrase", "situation"):
        groups[f"nl {kind}"] = [r for r in dutch if r.get("kind") == kind]
    groups["en all"] = [row for row in golden if row.get("lang") == "en"]
    return groups


def main() -> int:
    """Print the quality tables; non-zero exit only for a broken run."""
    topics = load_handbook()
    golden, offtopic = load_rows(GOLDEN), load_rows(OFFTOPIC)
    known = {t.id for t in topics}
    unknown = sorted({e for row in golden for e in row["expected"]} - known)
    if not topics or not golden or not offtopic or unknown:
        print(f"broken run: {len(topics)} topics, {len(golden)} questions, unknown ids {unknown}")
        return 1
    ours = RetrievalIndex.build(topics)
    systems: dict[str, Search] = {
        "R42 (bm25 + nl analysis)": lambda q: [h.topic_id for h in ours.search(q, k=K)],
        "R42 before (tf-idf)": previous_search(topics),
        "bm25s (nl stem+stop)": bm25_search(topics),
        "sklearn tf-idf": tfidf_search(topics),
    }
    groups = subsets(golden)
    sizes = ", ".join(f"{name} {len(rows)}" for name, rows in groups.items())
    print(f"{len(topics)} topics; questions: {sizes}; off-topic {len(offtopic)}\n")
    print(f"{'system':26} {'subset':15} {'n':>4} {'recall@10':>9} {'hit@3':>7} {'mrr':>7}")
    for name, search in systems.items():
        for subset, rows in groups.items():
            m = metrics(search, rows)
            print(
                f"{name:26} {subset:15} {len(rows):4} {m['recall@10']:9.3f} "
                f"{m['hit@3']:7.3f} {m['mrr']:7.3f}"
            )
        print()
    refused = [row["question"] for row in offtopic if not is_relevant(ours.search(row["question"]))]
    false_refusals = [
        row["question"] for row in golden if not is_relevant(ours.search(row["question"]))
    ]
    precision = len(refused) / len(offtopic)
    print(
        f"relevance floor: off-topic refused {len(refused)}/{len(offtopic)} = {precision:.3f} "
        f"(goal ≥ {GOALS['offtopic']}); real questions refused "
        f"{len(false_refusals)}/{len(golden)}"
    )
    for question in false_refusals:
        print(f"  refused on-topic: {question}")
    for row in offtopic:
        if row["question"] not in refused:
            print(f"  answered off-topic: {row['question']}")
    dutch = metrics(systems["R42 (bm25 + nl analysis)"], groups["nl all"])
    print(
        f"\ngoals (Dutch): recall@10 {dutch['recall@10']:.3f} (≥ {GOALS['recall@10']}), "
        f"hit@3 {dutch['hit@3']:.3f} (≥ {GOALS['hit@3']})"
    )
    misses = [
        row
        for row in golden
        if not set(row["expected"]) & set(systems["R42 (bm25 + nl analysis)"](row["question"])[:3])
    ]
    print(f"R42: {len(misses)} question(s) without an expected topic in the top 3")
    for row in misses:
        top = systems["R42 (bm25 + nl analysis)"](row["question"])[:3]
        print(f"  - [{row.get('lang', 'nl')}] {row['question']}  want {row['expected']} got {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
