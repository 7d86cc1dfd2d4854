"""The registry lists only services that can run, checked when asked, and finds the console."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import services.registry as registry
from shared.errors import ConfigError
from shared.runtime import ServiceSpec


@pytest.fixture
def fake_pkgs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path for throwaway packages (removed from sys.modules after)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        sys.modules.pop(name, None)


def _package(root: Path, name: str, *, main: bool, init: str = "") -> None:
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(init)
    if main:
        (pkg / "__main__.py").write_text("print('hi')\n")


def test_has_main_needs_a_main_module_and_does_not_import_the_package(fake_pkgs: Path) -> None:
    _package(fake_pkgs, "r42pkg_with", main=True, init="raise RuntimeError('imported!')")
    _package(fake_pkgs, "r42pkg_without", main=False)
    (fake_pkgs / "r42plain.py").write_text("")
    assert registry.has_main("r42pkg_with")
    assert "r42pkg_with" not in sys.modules
    assert not registry.has_main("r42pkg_without")
    assert registry.has_main("r42plain")
    assert not registry.has_main("r42_no_such_module")
    assert not registry.has_main("r42_no_such_module.sub")


def test_services_are_computed_when_read(fake_pkgs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    specs = (ServiceSpec("alpha", "r42svc_alpha"), ServiceSpec("beta", "r42svc_beta"))
    monkeypatch.setattr(registry, "CANDIDATES", specs)
    _package(fake_pkgs, "r42svc_alpha", main=True)
    assert registry.SERVICES == (specs[0],)
    _package(fake_pkgs, "r42svc_beta", main=True)
    assert registry.SERVICES == specs
    assert all(isinstance(s, ServiceSpec) for s in registry.available_services())


def test_every_candidate_is_a_services_package() -> None:
    names = [s.name for s in registry.CANDIDATES]
    assert names == ["extractor", "r42", "content", "quiz", "gateway", "telemetry"]
    assert all(s.module == f"services.{s.name}" for s in registry.CANDIDATES)


def test_select_services(fake_pkgs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "CANDIDATES", (ServiceSpec("alpha", "r42sel_alpha"),))
    _package(fake_pkgs, "r42sel_alpha", main=True)
    (fake_pkgs / "r42sel_custom.py").write_text("")
    assert registry.select_services(["alpha", "mine=r42sel_custom"]) == (
        ServiceSpec("alpha", "r42sel_alpha"),
        ServiceSpec("mine", "r42sel_custom"),
    )
    with pytest.raises(ConfigError, match="unknown service 'nope'"):
        registry.select_services(["nope"])
    with pytest.raises(ConfigError, match="cannot run yet"):
        registry.select_services(["x=r42sel_missing"])
    with pytest.raises(ConfigError, match="given twice"):
        registry.select_services(["alpha", "alpha"])


def test_resolve_console(fake_pkgs: Path) -> None:
    (fake_pkgs / "r42con_ok.py").write_text("async def run(*, settings):\n    return None\n")
    (fake_pkgs / "r42con_sync.py").write_text("def run(*, settings):\n    return None\n")
    (fake_pkgs / "r42con_broken.py").write_text("raise ImportError('missing dep')\n")
    assert registry.resolve_console("r42con_missing:run") is None
    assert registry.resolve_console("r42con_ok:nothing") is None
    assert registry.resolve_console("r42con_ok:run") is not None
    with pytest.raises(ConfigError, match="must be an async function"):
        registry.resolve_console("r42con_sync:run")
    with pytest.raises(ConfigError, match=r"failed to load.*missing dep"):
        registry.resolve_console("r42con_broken:run")
