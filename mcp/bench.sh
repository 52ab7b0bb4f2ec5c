#!/usr/bin/env bash
# The MCP server's figures (docs/benchmarks.md): builds the release `little` that the
# benchmark starts as `little mcp`, then runs the criterion benchmark (in process, through
# MCP, the CLI process) in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin little
cargo bench -p little-mcp --bench mcp "$@"
