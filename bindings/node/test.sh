#!/usr/bin/env bash
# Everything CI needs for the npm package @little-stack/compiler, from a clean clone, and
# idempotent: install the pinned dev dependencies, generate the declarations of what little
# returns (types.d.ts) from its schemas, build the native addon (release, in the
# workspace's target/), make sure the `little` binary the tests compare with exists, and
# run the tests with node's own runner.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"

command -v node >/dev/null || { echo "node-test: node is not installed (node >= 20 is needed)" >&2; exit 1; }
echo "node-test: node $(node --version), npm $(npm --version)"

echo "node-test: npm ci (the dev dependencies pinned in package-lock.json)"
npm ci --no-audit --no-fund --loglevel=error

echo "node-test: generating types.d.ts from the schemas (bindings/typegen)"
(cd "$repo" && cargo run --quiet -p little-typegen)

echo "node-test: building the addon in release (napi build; cargo's target/ is the workspace's)"
npx napi build --platform --release --strip --no-js --dts native.d.ts
ls -1 little.*.node | sed 's/^/node-test: built /'
# What ships is stripped: at most 25 MB (unstripped, the symbols alone made it 100 MB).
for addon in little.*.node; do
    size=$(stat -c %s "$addon")
    echo "node-test: $addon is $((size / 1024 / 1024)) MiB"
    if [ "$size" -gt $((25 * 1024 * 1024)) ]; then
        echo "node-test: $addon is over 25 MiB" >&2
        exit 1
    fi
done

export LITTLE_BIN="${LITTLE_BIN:-$repo/target/debug/little}"
if [ ! -x "$LITTLE_BIN" ]; then
    echo "node-test: building the little binary the tests compare with ($LITTLE_BIN)"
    (cd "$repo" && cargo build --bin little)
fi
echo "node-test: comparing with $LITTLE_BIN"

# The planner tests talk to the scripted OpenAI-compatible provider over 127.0.0.1.
target="${CARGO_TARGET_DIR:-$repo/target}"
export LITTLE_SCRIPTED_PROVIDER="${LITTLE_SCRIPTED_PROVIDER:-$target/debug/examples/scripted-provider}"
echo "node-test: building the scripted provider ($LITTLE_SCRIPTED_PROVIDER)"
(cd "$repo" && cargo build --quiet -p little-provider --features testing --example scripted-provider)

echo "node-test: node --test"
node --test test/*.test.mjs
