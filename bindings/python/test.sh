#!/usr/bin/env bash
# Builds the Python package little-compiler (bindings/python) as a wheel, installs it in a
# virtualenv and runs its tests. Everything CI needs from a clean clone; run it again and
# it reuses what is there (the venv, the tools in it, cargo's target/ folder).
#
#   bash bindings/python/test.sh            # release build, as the wheel ships
#   LITTLE_PY_PROFILE=debug bash bindings/python/test.sh   # quicker build, shares target/debug
#   bash bindings/python/test.sh -k workspace              # arguments go to pytest
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
say() { echo "python: $*"; }

python=${PYTHON:-python3}
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/python-venv
wheels=$target/python-wheels
profile=${LITTLE_PY_PROFILE:-release}

if [ ! -x "$venv/bin/python" ]; then
    say "creating the virtualenv $venv with $($python --version 2>&1)"
    "$python" -m venv "$venv"
else
    say "using the virtualenv $venv"
fi
py=$venv/bin/python

# The tools: maturin builds the wheel, pytest runs the tests, mypy checks the type stubs.
if "$venv/bin/maturin" --version >/dev/null 2>&1 && "$py" -c 'import pytest, mypy' 2>/dev/null; then
    say "maturin, pytest and mypy are installed ($("$venv/bin/maturin" --version))"
else
    say "installing maturin, pytest and mypy into the virtualenv"
    "$py" -m pip install --quiet --disable-pip-version-check 'maturin>=1.16,<2' pytest mypy
fi

say "generating little_compiler/_types.py from the schemas (bindings/typegen)"
cargo run --quiet -p little-typegen

say "building the wheel ($profile) into $wheels"
rm -f "$wheels"/little_compiler-*.whl
build=(build --manifest-path "$here/Cargo.toml" --out "$wheels" --interpreter "$py")
[ "$profile" = release ] && build+=(--release)
VIRTUAL_ENV=$venv "$venv/bin/maturin" "${build[@]}"
wheel=$(ls "$wheels"/little_compiler-*.whl)
say "installing $(basename "$wheel")"
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"

# The tests compare with the command line's output.
export LITTLE_BIN=${LITTLE_BIN:-$target/debug/little}
if [ ! -x "$LITTLE_BIN" ]; then
    say "building the little binary ($LITTLE_BIN is missing)"
    cargo build --bin little
fi
# The planner tests talk to the scripted OpenAI-compatible provider over 127.0.0.1.
export LITTLE_SCRIPTED_PROVIDER=${LITTLE_SCRIPTED_PROVIDER:-$target/debug/examples/scripted-provider}
say "building the scripted provider ($LITTLE_SCRIPTED_PROVIDER)"
cargo build --quiet -p little-provider --features testing --example scripted-provider
say "running pytest (little binary: $LITTLE_BIN)"
cd "$here"
"$py" -m pytest -p no:cacheprovider "$@"
