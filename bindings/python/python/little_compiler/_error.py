"""The one exception little raises."""

from typing import TYPE_CHECKING, Any, Optional, Tuple

if TYPE_CHECKING:
    from ._types import Report


class LittleError(Exception):
    """Why a call could not give its result.

    ``code`` is stable, for programs: ``input.invalid`` (a document that cannot be used,
    or a Python value in it that is not JSON: ``path`` names where), ``json.invalid``,
    ``code.unknown``, ``schema.unknown``, ``document.kind``, ``blocked`` (a diagnostic
    blocks: ``report`` holds the ``little-report/v1``), ``file.unknown`` (a workspace path
    that is not open), ``edit.invalid``, ``internal`` (a bug in little); from the planner
    calls: ``run.failed`` (the run recorded ``RunFailed``: ``cause_code`` is its cause),
    ``cancelled``, ``verify.failed``, ``failed``.
    """

    __module__ = "little_compiler"  # where it is imported from, and pickled as

    code: str
    message: str
    path: Optional[str]
    report: Optional["Report"]
    cause_code: Optional[str]

    def __init__(
        self,
        code: str,
        message: str,
        path: Optional[str] = None,
        report: Optional["Report"] = None,
        cause_code: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.report = report
        self.cause_code = cause_code

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"LittleError({self.code!r}, {self.message!r}, path={self.path!r})"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.code, self.message, self.path, self.report, self.cause_code))
