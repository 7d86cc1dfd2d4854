"""A command line imports only its own command's module, and every command has one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from services.cli.main import COMMAND_MODULES, build_app, modules_for


def _top_level_names(app) -> set[str]:
    commands = {c.name or c.callback.__name__ for c in app.registered_commands}
    groups = {g.name or g.typer_instance.info.name for g in app.registered_groups}
    return {n for n in commands | groups if isinstance(n, str)}


def test_every_registered_command_is_mapped_to_its_module() -> None:
    names = _top_level_names(build_app())
    assert names - {"version"} == set(COMMAND_MODULES)


@pytest.mark.parametrize("command", sorted(COMMAND_MODULES))
def test_the_mapped_modules_alone_register_the_command(command: str) -> None:
    assert command in _top_level_names(build_app([command, "--help"]))


def test_version_and_help_choose_their_modules() -> None:
    assert modules_for(["--version"]) == modules_for(["version"]) == ()
    assert modules_for(["--debug", "sources", "show", "x"]) == ("services.cli.ingest",)
    everything = modules_for(["--help"])
    assert everything == modules_for(["no-such-command"])
    assert set(everything) == {m for mods in COMMAND_MODULES.values() for m in mods}


def test_the_version_flag_loads_neither_the_bus_nor_the_knowledge_base() -> None:
    probe = (
        "import sys; sys.argv = ['r42', '--version']\n"
        "from services.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('shared.bus', 'shared.kb', 'nats', 'numba') if m in sys.modules))"
    )
    assert _loaded_by(probe) == "[]"


def _loaded_by(probe: str) -> str:
    """The last line a probe script prints in a fresh interpreter (which modules it saw)."""
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()[-1]


def test_the_console_script_decides_on_the_fork_server_before_any_library_loads() -> None:
    """The `r42` script enters through services.cli.entry: standard library only until then."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["r42"] == "services.cli.entry:main"
    probe = (
        "import sys\nimport services.cli.entry\n"
        "print(sorted(m for m in ('typer', 'click', 'rich', 'pydantic', 'shared.config')"
        " if m in sys.modules))"
    )
    assert _loaded_by(probe) == "[]"
