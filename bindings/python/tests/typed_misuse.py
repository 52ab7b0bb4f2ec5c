"""Misuse that the types catch: mypy must report errors on exactly the lines marked `# E:`,
each containing the text after it (the candidate may be None: not indexable).
"""

import little_compiler as little

report = little.check("{}")
report["summery"]  # E: TypedDict "Report" has no key "summery"
report["files"][0]["candidate"]["id"]  # E: is not indexable
little.check("{}", catalogue="{}")  # E: Unexpected keyword argument "catalogue" for "check"
little.Workspace().update("a.json", [{"range": {}, "txt": ""}])  # E: Extra key "txt" for TypedDict "Edit"
count: str = report["summary"]["errors"]  # E: Incompatible types in assignment
