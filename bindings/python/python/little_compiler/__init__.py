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
from . import _types
from ._planner import Cancel, events, fix, fix_async, plan, plan_async, verify
from ._inputs import Change, Document, Edit, Position, Range
from ._types import *  # noqa: F403 (every type of what little returns: _types.__all__)

__all__ = [
    "Cancel",
    "events",
    "fix",
    "fix_async",
    "plan",
    "plan_async",
    "verify",
    "Change",
    "Document",
    "Edit",
    "LittleError",
    "Position",
    "Range",
    "Workspace",
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
# The generated TypedDicts (Report, Diagnostic, Compiled, …), all of them.
__all__ += _types.__all__
