"""Misuse that the types catch: mypy must report exactly the errors marked `# E`."""

import little_compiler as little

report = little.check("{}")
report["summery"]  # E: TypedDict "Report" has no key "summery"
report["files"][0]["candidate"]["id"]  # E: Value of type "DraftCandidate | WorkflowVersion | None" is not indexable
little.check("{}", catalogue="{}")  # E: Unexpected keyword argument "catalogue" for "check"
little.Workspace().update("a.json", [{"range": {}, "txt": ""}])  # E: Extra key "txt" for TypedDict "Edit"
count: str = report["summary"]["errors"]  # E: Incompatible types in assignment
