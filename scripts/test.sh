#!/usr/bin/env bash
# Every test of the project: the Rust workspace, then the npm package and the Python
# package against the same crates (each script installs what it needs: `npm ci` from the
# committed lock file; a venv in target/ with maturin and pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
bash bindings/node/test.sh
bash bindings/python/test.sh
# `little mcp` under the official MCP SDKs (Python from PyPI, TypeScript from npm).
bash mcp/test.sh
