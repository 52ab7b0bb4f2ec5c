# Types of the Rust extension (src/lib.rs); little_compiler re-exports all of it.
from typing import Any, Dict, List, Literal, Optional, Union, final

from ._inputs import Change, Document
from ._types import CodeInfo, Compiled, DefinitionSnapshot, Registration, Report

__version__: str
__all__ = [
    "Cancel",
    "events",
    "fix",
    "plan",
    "verify",
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

def check(
    text: Union[str, bytes, bytearray],
    *,
    path: str = "<input>",
    catalog: Optional[Document] = None,
    context: Optional[Document] = None,
    bindings: Optional[Document] = None,
    snapshot: Optional[Document] = None,
) -> Report:
    """The ``little-report/v1`` of one draft or LWIR, as ``little check --format json PATH``.

    ``text`` as ``bytes`` is read as a file is: bytes that are not UTF-8 are little's own
    ``parse.invalid_json`` diagnostic. Raises LittleError (``input.invalid``) for a
    document that cannot be used.
    """

def compile(
    text: Union[str, bytes, bytearray],
    *,
    path: str = "<input>",
    catalog: Optional[Document] = None,
    context: Optional[Document] = None,
    bindings: Optional[Document] = None,
    snapshot: Optional[Document] = None,
) -> Compiled:
    """The ``little-compiled/v1`` document of a draft, as ``little compile`` writes it.

    Raises LittleError ``blocked`` (with ``report``) when a diagnostic blocks.
    """

def explain(code: str) -> str:
    """The page of a diagnostic code, as ``little explain CODE``; LittleError ``code.unknown``."""

def codes() -> List[CodeInfo]:
    """Every diagnostic code, in ``little explain``'s order."""

def hash(text: Document) -> str:
    """``sha256:`` of the RFC 8785 canonical form of a JSON document, as ``little hash``."""

def schema(name: str) -> Dict[str, Any]:
    """The JSON Schema of a document format (``little schema NAME``); LittleError ``schema.unknown``."""

def schema_names() -> List[str]:
    """The formats ``schema`` knows."""

def snapshot(definition: Document) -> DefinitionSnapshot:
    """The WorkflowDefinitionSnapshot of a definition, as ``little snapshot``."""

def lock(lwir: Document, definition: Document) -> Registration:
    """Validates an LWIR against a definition, registers and locks it: ``little lock``'s document."""

@final
class Workspace:
    """Documents held open and edited, as an editor backend does: an edit re-runs only what
    it touches. Safe to share between threads (calls run one at a time, GIL released)."""

    def __new__(
        cls,
        *,
        catalog: Optional[Document] = None,
        context: Optional[Document] = None,
        bindings: Optional[Document] = None,
        snapshot: Optional[Document] = None,
        columns: Literal["characters", "utf-16", "utf-8"] = "characters",
    ) -> "Workspace":
        """A workspace against these documents (fixed for its lifetime). The columns of
        edits count ``columns``: characters (as Python's strings do), UTF-16 code units (as
        web editors and the npm package's Workspace send them) or UTF-8 bytes. LittleError
        ``input.invalid`` for a document or a ``columns`` that cannot be used."""
    def open(self, path: str, text: Union[str, bytes, bytearray]) -> Report:
        """Opens (or replaces) a document: its report, without the candidate (None)."""

    def update(self, path: str, change: Change) -> Report:
        """Changes an open document; its report as ``open`` gives it. LittleError
        ``file.unknown`` if it is not open, ``edit.invalid`` for an edit that cannot apply."""

    def close(self, path: str) -> None:
        """Closes a document and lets go of what the workspace holds for it."""

    def report(self, path: str) -> Report:
        """The full report of an open document, its candidate included."""

    def text(self, path: str) -> Optional[str]:
        """The text an open document has now, or None."""

    def paths(self) -> List[str]:
        """The open documents' paths, sorted."""

    def __contains__(self, path: str, /) -> bool: ...

@final
class Cancel:
    """Cancels a planner call: the model call in flight is cut, the run resumes from its log."""

    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...

def plan(options: str, on_event: Optional[Any] = None, cancel: Optional[Cancel] = None) -> Dict[str, Any]: ...
def fix(options: str, on_event: Optional[Any] = None, cancel: Optional[Cancel] = None) -> Dict[str, Any]: ...
def verify(lwir: str, lock: str, definition: Optional[str] = None) -> Dict[str, Any]: ...
def events(store: str, run_id: Optional[str] = None) -> List[Dict[str, Any]]: ...
