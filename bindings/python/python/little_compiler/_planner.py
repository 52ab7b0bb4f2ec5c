"""The planner pipeline in process: ``plan``, ``fix``, ``verify``, ``events``.

The same pipeline as ``little plan`` and ``little fix`` (no process spawned), with the GIL
released while a session runs. Plain functions block; the ``*_async`` ones run the
session on a worker thread and hand each event to ``on_event`` on the event loop, and
cancelling their task cancels the session (the model call in flight is cut, nothing more
is written, and the run resumes from its log).
"""

import asyncio
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from . import _native
from ._native import Cancel
from ._types import Event

PathLike = Union[str, "os.PathLike[str]"]
OnEvent = Callable[[Event], Any]

_PROVIDER_KEYS = {"base_url": "baseUrl", "api_key": "apiKey", "stream": "stream", "timeout": "timeout"}


def _providers(providers: Optional[Mapping[str, Mapping[str, Any]]]) -> Optional[Dict[str, Dict[str, Any]]]:
    if providers is None:
        return None
    table: Dict[str, Dict[str, Any]] = {}
    for provider_id, provider in providers.items():
        fields: Dict[str, Any] = {}
        for key, value in provider.items():
            # An unknown key is passed on as it is, for little's own error naming it.
            fields[_PROVIDER_KEYS.get(key, key)] = value
        table[provider_id] = fields
    return table


def _options(**given: Any) -> str:
    camel = {
        "run_id": "runId",
        "max_attempts": "maxAttempts",
        "outer_loop": "outerLoop",
        "tool_timeout": "toolTimeout",
        "max_turns": "maxTurns",
        "max_tokens": "maxTokens",
        "memory_root": "memoryRoot",
        "lock_wait": "lockWait",
    }
    options: Dict[str, Any] = {}
    for key, value in given.items():
        if value is None:
            continue
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if key == "providers":
            value = _providers(value)
        options[camel.get(key, key)] = value
    return json.dumps(options)


def plan(
    *,
    definition: PathLike,
    input: PathLike,
    run_id: str,
    events: str,
    providers: Optional[Mapping[str, Mapping[str, Any]]] = None,
    config: Optional[PathLike] = None,
    sandbox: Optional[str] = None,
    max_attempts: Optional[int] = None,
    max_turns: Optional[int] = None,
    max_tokens: Optional[int] = None,
    tool_timeout: Union[int, float, str, None] = None,
    memory_root: Optional[PathLike] = None,
    lock_wait: Union[int, float, str, None] = None,
    lease: Union[int, float, str, None] = None,
    outer_loop: Optional[PathLike] = None,
    on_event: Optional[OnEvent] = None,
    cancel: Optional[Cancel] = None,
) -> Dict[str, Any]:
    """``little plan`` in process: the registered WorkflowVersion and its lock.

    ``providers`` is ``{ID: {"base_url", "api_key", "stream", "timeout"}}``, as the tables
    of ``little.toml`` with the key itself (held in memory only; in no event). ``on_event``
    hears every event as it is written, in order, on the session's thread, and the
    model's streamed text as ``{"type": "harness.model.text", ...}`` (not stored).
    Raises LittleError: ``run.failed`` (with ``cause_code``), ``blocked``, ``cancelled``…
    """
    options = _options(
        definition=definition, input=input, run_id=run_id, events=events, providers=providers, config=config,
        sandbox=sandbox, max_attempts=max_attempts, max_turns=max_turns, max_tokens=max_tokens, tool_timeout=tool_timeout,
        memory_root=memory_root, lock_wait=lock_wait, lease=lease, outer_loop=outer_loop,
    )
    return _native.plan(options, on_event, cancel)  # type: ignore[no-any-return]


def fix(
    *,
    lwir: PathLike,
    step: str,
    error: PathLike,
    definition: PathLike,
    run_id: str,
    events: str,
    providers: Optional[Mapping[str, Mapping[str, Any]]] = None,
    config: Optional[PathLike] = None,
    sandbox: Optional[str] = None,
    max_turns: Optional[int] = None,
    max_tokens: Optional[int] = None,
    tool_timeout: Union[int, float, str, None] = None,
    memory_root: Optional[PathLike] = None,
    lock_wait: Union[int, float, str, None] = None,
    lease: Union[int, float, str, None] = None,
    on_event: Optional[OnEvent] = None,
    cancel: Optional[Cancel] = None,
) -> Dict[str, Any]:
    """``little fix`` in process: the repaired LWIR and its new WorkflowVersion."""
    options = _options(
        lwir=lwir, step=step, error=error, definition=definition, run_id=run_id, events=events, providers=providers,
        config=config, sandbox=sandbox, max_turns=max_turns, max_tokens=max_tokens, tool_timeout=tool_timeout,
        memory_root=memory_root,
        lock_wait=lock_wait, lease=lease,
    )
    return _native.fix(options, on_event, cancel)  # type: ignore[no-any-return]


async def _in_thread(call: Callable[..., Dict[str, Any]], on_event: Optional[OnEvent], **given: Any) -> Dict[str, Any]:
    loop = asyncio.get_running_loop()
    cancel = Cancel()
    # Events reach on_event on the loop, in the order they were written.
    hear = None if on_event is None else (lambda event: loop.call_soon_threadsafe(on_event, event))
    running = loop.run_in_executor(None, lambda: call(on_event=hear, cancel=cancel, **given))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        cancel.cancel()
        # The session stops at once; wait for it so that the log is closed when we return.
        try:
            await running
        except Exception:
            pass
        raise


async def plan_async(*, on_event: Optional[OnEvent] = None, **given: Any) -> Dict[str, Any]:
    """:func:`plan` on a worker thread; cancelling the task cancels the session."""
    return await _in_thread(plan, on_event, **given)


async def fix_async(*, on_event: Optional[OnEvent] = None, **given: Any) -> Dict[str, Any]:
    """:func:`fix` on a worker thread; cancelling the task cancels the session."""
    return await _in_thread(fix, on_event, **given)


def verify(*, lwir: PathLike, lock: PathLike, definition: Optional[PathLike] = None) -> Dict[str, Any]:
    """``little verify``: ``{"workflowVersionId", "workflowVersionHash", "capabilitiesChecked"}``,
    or LittleError ``verify.failed`` / ``blocked`` (drifted capabilities)."""
    return _native.verify(  # type: ignore[no-any-return]
        os.fspath(lwir), os.fspath(lock), None if definition is None else os.fspath(definition)
    )


def events(store: str, *, run_id: Optional[str] = None) -> List[Event]:
    """The events of a store (a log path or a database URL), as ``little events --format json``."""
    return _native.events(os.fspath(store), run_id)  # type: ignore[no-any-return]
