#!/usr/bin/env bash
# The GitHub Action's check step (action.yml): `little check` over the inputs' paths, its
# diagnostics as workflow annotations, and the same check as SARIF in $INPUT_SARIF. Exits
# as `little check` does (1: a blocking diagnostic, 2: little could not check).
set -uo pipefail
: "${GITHUB_OUTPUT:?the output file of the step, set by GitHub}"
paths=${INPUT_PATHS:-.}
sarif=${INPUT_SARIF:-little.sarif}
# Word splitting is wanted: both inputs are space-separated lists.
# shellcheck disable=SC2086
little check --format github ${INPUT_ARGS:-} $paths
status=$?
# shellcheck disable=SC2086
little check --format sarif ${INPUT_ARGS:-} $paths >"$sarif"
sarif_status=$?
if [ "$sarif_status" -eq 2 ] && [ "$status" -ne 2 ]; then
    echo "::error title=little::the SARIF report could not be written to $sarif"
    status=2
fi
echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
exit "$status"
