"""The shapes of what little takes: documents and workspace edits. Written by hand; the
shapes of what it returns are generated from its schemas (``_types.py``).
"""

from typing import Any, Dict, List, Tuple, TypedDict, Union

#: A document argument: JSON text (``str``, or ``bytes`` read as UTF-8 by little itself),
#: or an already-parsed JSON document (a ``dict`` or ``list``).
Document = Union[str, bytes, bytearray, Dict[str, Any], List[Any], Tuple[Any, ...]]


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
