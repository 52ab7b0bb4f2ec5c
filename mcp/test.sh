#!/usr/bin/env bash
# `little mcp` through the official MCP SDKs, from a clean clone: the Python SDK (`mcp` on
# PyPI, in a virtualenv under target/) and the TypeScript SDK (@modelcontextprotocol/sdk,
# pinned in tests/node/package-lock.json), each starting the server over stdio. The
# installs are timed; a second run reuses the virtualenv.
#
#   bash mcp/test.sh                 # both SDKs
#   bash mcp/test.sh -k roots        # arguments go to pytest
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
say() { echo "mcp-test: $*"; }

target=${CARGO_TARGET_DIR:-$root/target}
export LITTLE_BIN=${LITTLE_BIN:-$target/debug/little}
say "building the little binary ($LITTLE_BIN)"
cargo build --quiet --bin little

venv=$target/mcp-venv
started=$SECONDS
if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'mcp==2.3.*' 'pytest>=8,<10'
say "Python SDK mcp $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))') ready in $((SECONDS - started)) s"

started=$SECONDS
(cd "$here/tests/node" && npm ci --no-audit --no-fund --loglevel=error)
say "TypeScript SDK $(node -p "require('$here/tests/node/node_modules/@modelcontextprotocol/sdk/package.json').version") ready in $((SECONDS - started)) s"

say "pytest (the Python SDK)"
(cd "$here/tests/python" && "$venv/bin/python" -m pytest -p no:cacheprovider "$@")
say "node --test (the TypeScript SDK)"
(cd "$here/tests/node" && node --test mcp.test.mjs)
