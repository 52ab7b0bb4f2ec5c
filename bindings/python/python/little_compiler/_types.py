"""The shapes of what little returns, as TypedDicts (SPEC §3: ``little-report/v1``).

They are plain dicts at run time; these classes are for type checkers and readers. Keys
that a diagnostic or a candidate may omit are in the ``total=False`` classes.
"""

from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union

Severity = Literal["error", "warning", "info"]
DocumentKind = Literal["draft", "catalog", "context", "bindings", "lwir", "definition"]

#: A document argument: JSON text (``str``, or ``bytes`` read as UTF-8 by little itself),
#: or an already-parsed JSON document (a ``dict`` or ``list``).
Document = Union[str, bytes, bytearray, Dict[str, Any], List[Any], Tuple[Any, ...]]


class Span(TypedDict):
    """Byte offsets of a value in the text, and the 1-based line and character column of its start."""

    start: int
    end: int
    line: int
    column: int


class _RelatedRequired(TypedDict):
    message: str
    path: str


class Related(_RelatedRequired, total=False):
    """Another place a diagnostic points at."""

    span: Span


class Witness(TypedDict):
    """The nodes and edges that show a fault (a cycle's loop)."""

    nodes: List[str]
    edges: List[str]


class _DiagnosticRequired(TypedDict):
    severity: Severity
    code: str
    blocking: bool
    message: str


class Diagnostic(_DiagnosticRequired, total=False):
    """One finding; absent fields are omitted."""

    nodeId: str
    edgeId: str
    path: str
    span: Span
    help: str
    related: List[Related]
    witness: Witness


class DraftCandidate(TypedDict):
    """What a clean draft issues."""

    id: str
    workflowId: str
    draftId: str
    revision: int
    catalogVersion: str
    authoredGraphHash: str
    topologyHash: str
    bindingStatus: str


class _WorkflowVersionRequired(TypedDict):
    id: str
    hash: str
    canonicalizer: str


class WorkflowVersion(_WorkflowVersionRequired, total=False):
    """What a clean LWIR issues."""

    canonicalJson: str


Candidate = Union[DraftCandidate, WorkflowVersion]


class FileReport(TypedDict):
    """One checked file. ``candidate`` is None when a diagnostic blocks, and always in the
    reports ``Workspace.open`` and ``Workspace.update`` give (ask ``Workspace.report``)."""

    path: str
    document: Optional[DocumentKind]
    diagnostics: List[Diagnostic]
    candidate: Optional[Candidate]


class Summary(TypedDict):
    files: int
    errors: int
    warnings: int
    blocking: int


class Report(TypedDict):
    """A ``little-report/v1``: what ``little check --format json`` prints."""

    format: Literal["little-report/v1"]
    files: List[FileReport]
    summary: Summary


class Compiled(TypedDict):
    """A ``little-compiled/v1``: what ``little compile`` writes."""

    format: Literal["little-compiled/v1"]
    candidate: DraftCandidate
    topology: Dict[str, Any]
    diagnostics: List[Diagnostic]


class CodeInfo(TypedDict):
    """One diagnostic code, as ``codes()`` lists it."""

    code: str
    severity: Severity
    blocking: bool
    summary: str


class Position(TypedDict):
    """A 0-based line and a 0-based column counted in characters (as Python indexes a str)."""

    line: int
    character: int


class Range(TypedDict):
    start: Position
    end: Position


class Edit(TypedDict):
    """The text of ``range`` replaced by ``text``."""

    range: Range
    text: str


#: A change for ``Workspace.update``: the whole new text, or edits applied in order.
Change = Union[str, bytes, List[Edit]]
