"""The checks release the GIL: Python keeps running while a large draft is checked."""

import threading
import time

import little_compiler as little
from drafts import draft


def timed_check(text):
    start = time.perf_counter()
    report = little.check(text, path="large.json")
    return time.perf_counter() - start, report


def test_python_runs_while_a_large_draft_is_checked_in_a_thread():
    # A draft large enough that its check takes a while (a quarter of a second or more).
    nodes = 10_000
    text = draft(nodes)
    seconds, report = timed_check(text)
    while seconds < 0.25 and nodes < 640_000:
        nodes *= 2
        text = draft(nodes)
        seconds, report = timed_check(text)
    assert report["summary"]["errors"] == 0 and report["files"][0]["candidate"] is not None

    done = threading.Event()
    result = {}

    def work():
        result["seconds"], result["report"] = timed_check(text)
        done.set()

    # The main thread counts and notes the longest pause it sees while the check runs. With
    # the GIL held by the check, that pause would be the whole check; released, it is at
    # most a few of the interpreter's switch intervals.
    thread = threading.Thread(target=work)
    ticks, longest = 0, 0.0
    thread.start()
    last = time.perf_counter()
    while not done.is_set():
        for _ in range(100):
            ticks += 1
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    thread.join()
    checked = result["seconds"]
    assert result["report"] == report
    print(f"{nodes} nodes checked in {checked:.3f} s in a thread; main thread: {ticks} ticks, longest pause {longest * 1000:.1f} ms")
    assert longest < checked / 3, (longest, checked)
    assert ticks > 10_000


def test_a_workspace_update_releases_the_gil_too():
    text = draft(20_000)
    workspace = little.Workspace()
    workspace.open("large.json", text)
    line = text.split("\n").index(next(l for l in text.split("\n") if '"mail_2"' in l))
    edit = [{"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": " "}]
    done = threading.Event()

    def work():
        for _ in range(8):
            workspace.update("large.json", edit)
            workspace.report("large.json")
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
    thread.join()
    assert ticks > 1_000
    assert workspace.text("large.json") == text.replace(text.split("\n")[line], " " * 8 + text.split("\n")[line])
