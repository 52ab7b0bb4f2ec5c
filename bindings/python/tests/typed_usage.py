"""Typed use of little_compiler: `mypy --strict` must pass on it (test_types.py)."""

from typing import List, Optional

import little_compiler as little
from little_compiler import Diagnostic, Edit, LittleError, Report, Workspace


def blocking_codes(report: Report) -> List[str]:
    return [d["code"] for f in report["files"] for d in f["diagnostics"] if d["blocking"]]


def first_line(d: Diagnostic) -> Optional[int]:
    span = d.get("span")
    return span["line"] if span is not None else None


def candidate_id(report: Report) -> Optional[str]:
    candidate = report["files"][0]["candidate"]
    return candidate["id"] if candidate is not None else None


def main() -> None:
    report: Report = little.check(b"{}", path="a.json", context={"format": "x"})
    print(blocking_codes(report), report["summary"]["errors"], candidate_id(report))
    for d in report["files"][0]["diagnostics"]:
        print(d["severity"], first_line(d), d.get("nodeId", ""))
    workspace = Workspace(catalog=None)
    opened: Report = workspace.open("a.json", "{}")
    edit: Edit = {"range": {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 1}}, "text": " "}
    updated = workspace.update("a.json", [edit])
    updated = workspace.update("a.json", "{ }")
    text: Optional[str] = workspace.text("a.json")
    print(opened["format"], updated["summary"]["blocking"], text, workspace.paths())
    try:
        compiled = little.compile("{}")
        print(compiled["candidate"]["topologyHash"], compiled["topology"])
    except LittleError as error:
        code: str = error.code
        where: Optional[str] = error.path
        if error.report is not None:
            print(code, where, error.report["summary"]["blocking"])
    print(little.hash({"a": [1, 2.5, None]}), little.explain("graph.cycle")[:10], little.schema("draft")["$id"])
    print([c["code"] for c in little.codes() if c["blocking"]], little.schema_names())
    print(little.snapshot("{}"), little.lock(b"{}", {"format": "workflow-definition/v1"}))
    workspace.close("a.json")


if __name__ == "__main__":
    main()
