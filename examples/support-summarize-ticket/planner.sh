#!/bin/sh
# A scripted planner for `little plan` (README: "Planning a workflow"). little runs it as
# `sh -c CMD` once per attempt: the PlanTask JSON arrives on stdin, the LWIR goes to stdout.
# Stderr lines starting with `little-event ` are tool events for the run's event log.
#
# Attempt 1 drafts the LWIR with the model's name (`gpt-4o`) where the definition's model
# slot id (`gpt-4o-mini`) belongs; little's findings come back in the next task's `repair`,
# and the planner fixes what they name.
set -eu
here=$(dirname "$0")
task=$(cat)
attempt=${LITTLE_ATTEMPT:-1}

echo "little-event {\"type\":\"harness.tool_call.started\",\"callId\":\"bash-$attempt\",\"tool\":\"bash\",\"input\":{\"command\":\"cat lwir.json\"}}" >&2
if printf '%s' "$task" | grep -q '"code":"binding.model_not_permitted"'; then
  lwir=$(cat "$here/lwir.json")
else
  lwir=$(sed 's/"gpt-4o-mini"/"gpt-4o"/g' "$here/lwir.json")
fi
echo "little-event {\"type\":\"harness.tool_call.succeeded\",\"callId\":\"bash-$attempt\",\"tool\":\"bash\",\"output\":{\"exitCode\":0}}" >&2
printf '%s\n' "$lwir"
