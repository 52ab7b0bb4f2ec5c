"""little in process: check, compile and hash agent-workflow drafts from Python.

The same checks as the ``little`` command line, on documents in memory::

    import little_compiler as little

    report = little.check(open("draft.json", "rb").read(), path="draft.json",
                          context=open("context.json").read())
    for file in report["files"]:
        for d in file["diagnostics"]:
            print(d["severity"], d["code"], d["message"])

Every failure is a :class:`LittleError`; the checks release the GIL.
"""

from ._error import LittleError
from ._native import (
    Workspace,
    __version__,
    check,
    codes,
    compile,
    explain,
    hash,
    lock,
    schema,
    schema_names,
    snapshot,
)
from ._types import (
    Candidate,
    Change,
    CodeInfo,
    Compiled,
    Diagnostic,
    Document,
    DocumentKind,
    DraftCandidate,
    Edit,
    FileReport,
    Position,
    Range,
    Related,
    Report,
    Severity,
    Span,
    Summary,
    Witness,
    WorkflowVersion,
)

__all__ = [
    "Candidate",
    "Change",
    "CodeInfo",
    "Compiled",
    "Diagnostic",
    "Document",
    "DocumentKind",
    "DraftCandidate",
    "Edit",
    "FileReport",
    "LittleError",
    "Position",
    "Range",
    "Related",
    "Report",
    "Severity",
    "Span",
    "Summary",
    "Witness",
    "Workspace",
    "WorkflowVersion",
    "__version__",
    "check",
    "codes",
    "compile",
    "explain",
    "hash",
    "lock",
    "schema",
    "schema_names",
    "snapshot",
]
