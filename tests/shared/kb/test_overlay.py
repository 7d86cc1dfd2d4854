"""Layered mappings: each version reads like a plain dict of its entries."""

from __future__ import annotations

import random

from shared.kb.overlay import Layered


def test_versions_match_plain_dicts_and_stay_unchanged() -> None:
    rng = random.Random(1)
    plain = {f"k{i}": i for i in range(3000)}
    layered = Layered(plain)
    history = [(layered, dict(plain))]
    for step in range(300):
        drop = [*rng.sample(sorted(plain), 3), "nope"]
        put = [(f"k{rng.randint(0, 3500)}", -step) for _ in range(4)] + [(drop[0], step)]
        layered = layered.derive(put=put, drop=drop)
        for key in drop:
            plain.pop(key, None)
        plain.update(put)
        history.append((layered, dict(plain)))
    for version, expected in history[::25]:
        assert len(version) == len(expected)
        assert dict(version) == expected
        assert all(version[k] == v for k, v in expected.items())
        assert "nope" not in version and version.get("nope") is None
