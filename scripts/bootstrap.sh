#!/usr/bin/env bash
# Create or refresh the project's virtualenv: find Python 3.12+, install with progress, one
# setup at a time (two `make up` on a fresh clone must not upgrade pip in the same .venv).
set -euo pipefail
venv=${1:-.venv}
want=${2:-}
stamp="$venv/.installed"
lock="$venv.lock"

find_python() {
    if [ -n "$want" ]; then echo "$want"; return; fi
    for name in python3 python3.14 python3.13 python3.12; do
        if command -v "$name" >/dev/null 2>&1 &&
            "$name" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            command -v "$name"; return
        fi
    done
    # pyenv keeps interpreters off PATH unless selected; take its oldest 3.12+ (the one CI runs).
    root=${PYENV_ROOT:-$HOME/.pyenv}
    for dir in $(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | sort -V); do
        if [ -x "$dir/bin/python3" ]; then echo "$dir/bin/python3"; return; fi
    done
}

up_to_date() { [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ]; }

waited=0
while ! mkdir "$lock" 2>/dev/null; do
    if [ "$waited" = 0 ]; then echo "r42: another setup of $venv is running; waiting for it"; fi
    waited=$((waited + 1))
    if [ "$waited" -gt 900 ]; then
        echo "r42: $lock is still held after 15 min; remove it if no setup is running" >&2
        exit 1
    fi
    sleep 1
done
trap 'rmdir "$lock" 2>/dev/null || true' EXIT INT TERM
if up_to_date; then exit 0; fi

python=$(find_python)
if [ -z "$python" ]; then
    echo "r42: needs Python 3.12 or newer; install it (python.org, your package manager or" \
        "pyenv) or run make with PYTHON=/path/to/python3.12" >&2
    exit 1
fi
if [ -x "$venv/bin/python" ] &&
    ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    echo "r42: $venv was made with an older Python; making it again"
    rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
    echo "r42: creating $venv with $("$python" --version 2>&1) ($python)"
    "$python" -m venv "$venv"
fi
echo "r42: installing R42 and its dependencies into $venv (1-2 min the first time)"
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet --upgrade pip
log="$venv/pip-install.log"
if ! "$venv/bin/python" -m pip install --disable-pip-version-check -e '.[dev]' 2>&1 |
    tee "$log" | { grep --line-buffered -E "^(Collecting|Successfully installed)" || true; } |
    cut -c1-100; then
    tail -n 30 "$log" >&2
    echo "r42: the install failed (whole log: $log)" >&2
    exit 1
fi
"$venv/bin/python" -c 'import services.cli.main' # the install must have worked
touch "$stamp"
echo "r42: ready; the r42 command is $venv/bin/r42 (or run: . $venv/bin/activate)"
