#!/usr/bin/env bash
# The GitHub Action's install step (action.yml): little built from the action's own source
# ($GITHUB_ACTION_PATH) into $LITTLE_ROOT, unless the cache restored it there, and put on
# the job's PATH.
set -euo pipefail
: "${GITHUB_ACTION_PATH:?the folder of the action, set by GitHub}" "${LITTLE_ROOT:?where little is installed}"
: "${GITHUB_PATH:?the PATH file of the job, set by GitHub}"
if [ -x "$LITTLE_ROOT/bin/little" ]; then
    echo "little: $("$LITTLE_ROOT/bin/little" --version) from the cache"
else
    command -v cargo >/dev/null || {
        echo "::error title=little::cargo is needed to build little (actions-rust-lang/setup-rust-toolchain sets it up)"
        exit 2
    }
    started=$SECONDS
    cargo install --locked --quiet --path "$GITHUB_ACTION_PATH" --root "$LITTLE_ROOT"
    echo "little: $("$LITTLE_ROOT/bin/little" --version) built in $((SECONDS - started)) s"
fi
echo "$LITTLE_ROOT/bin" >>"$GITHUB_PATH"
