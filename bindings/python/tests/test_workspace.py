"""A Workspace session: open, edit a fault in, see it, fix it, close; columns in characters."""

import threading

import pytest

import little_compiler as little
from support import canonical, documents, read

OPTIONS = ("--context", "examples/context.json", "--bindings", "examples/bindings.json")


def codes(report):
    return [d["code"] for d in report["files"][0]["diagnostics"] if d["severity"] != "info"]


def at(line, character):
    return {"line": line, "character": character}


def draft_with_an_emoji():
    """The quarterly report with `fetch`'s title before its family, holding 📈 (outside
    the BMP: one character, two UTF-16 units, four UTF-8 bytes)."""
    text = read("examples/quarterly-report.json").decode()
    old = '{ "id": "fetch", "family": "dataset.retrieve", "title": "Fetch sales",'
    new = '{ "id": "fetch", "title": "Fetch 📈 sales", "family": "dataset.retrieve",'
    assert old in text
    return text.replace(old, new)


def test_a_fault_typed_in_is_seen_then_fixed_then_the_file_is_closed():
    workspace = little.Workspace(**documents(OPTIONS))
    text = draft_with_an_emoji()
    opened = workspace.open("demo.json", text)
    assert codes(opened) == []
    assert opened["files"][0]["candidate"] is None  # open and update give diagnostics only

    # Type an `x` at the start of the family's value: line and column counted in characters.
    lines = text.split("\n")
    line = next(i for i, l in enumerate(lines) if "Fetch 📈 sales" in l)
    column = lines[line].index('"dataset.retrieve"') + 1
    typed = workspace.update("demo.json", [{"range": {"start": at(line, column), "end": at(line, column)}, "text": "x"}])
    assert codes(typed) == ["catalog.unknown_family"]
    expected = "\n".join(lines[:line] + [lines[line][:column] + "x" + lines[line][column:]] + lines[line + 1 :])
    assert workspace.text("demo.json") == expected
    # The diagnostic's column (1-based) counts characters too: it is at the family's
    # opening quote (in UTF-16 units it would be one more, in UTF-8 bytes three more).
    diagnostic = typed["files"][0]["diagnostics"][-1]
    span = diagnostic["span"]
    assert (span["line"], span["column"]) == (line + 1, column)
    assert expected.split("\n")[line][span["column"] - 1 :].startswith('"xdataset.retrieve"')
    assert len(expected.encode()[: span["start"]].decode().split("\n")[-1]) == column - 1

    fixed = workspace.update("demo.json", [{"range": {"start": at(line, column), "end": at(line, column + 1)}, "text": ""}])
    assert codes(fixed) == []
    assert workspace.text("demo.json") == text

    # The full report is what a fresh check of the same text gives, candidate included.
    full = workspace.report("demo.json")
    assert full["files"][0]["candidate"] is not None
    assert canonical(full) == canonical(little.check(text, path="demo.json", **documents(OPTIONS)))

    assert workspace.paths() == ["demo.json"] and "demo.json" in workspace
    workspace.close("demo.json")
    assert workspace.paths() == [] and workspace.text("demo.json") is None
    with pytest.raises(little.LittleError) as closed:
        workspace.update("demo.json", text)
    assert (closed.value.code, closed.value.path) == ("file.unknown", "demo.json")
    with pytest.raises(little.LittleError) as again:
        workspace.close("demo.json")
    assert again.value.code == "file.unknown"


def test_a_whole_text_change_and_edits_in_order():
    workspace = little.Workspace()
    workspace.open("a.json", "{\n1\n}")
    two = [
        {"range": {"start": at(0, 0), "end": at(0, 1)}, "text": "["},
        {"range": {"start": at(2, 0), "end": at(2, 1)}, "text": "]"},
    ]
    workspace.update("a.json", two)
    assert workspace.text("a.json") == "[\n1\n]"
    # A tuple of edits, and a position past the end of its line (the line's end).
    workspace.update("a.json", ({"range": {"start": at(1, 99), "end": at(1, 99)}, "text": "2"},))
    assert workspace.text("a.json") == "[\n12\n]"
    report = workspace.update("a.json", read("examples/graph-demo.json").decode())
    assert report["files"][0]["document"] == "draft"
    assert workspace.text("a.json") == read("examples/graph-demo.json").decode()


@pytest.mark.parametrize(
    "change,where",
    [
        ([{"range": {"start": at(1, 0), "end": at(0, 0)}, "text": ""}], "a.json"),
        ([{"range": {"start": at(0, 0)}, "text": ""}], "change[0].range.end"),
        ([{"range": {"start": {"line": -1, "character": 0}, "end": at(0, 0)}, "text": ""}], "change[0].range.start.line"),
        ([{"range": {"start": {"line": True, "character": 0}, "end": at(0, 0)}, "text": ""}], "change[0].range.start.line"),
        ([{"range": {"start": at(0, 0), "end": at(0, 0)}, "text": 3}], "change[0].text"),
        ([{"range": {"start": at(0, 0), "end": at(0, 0)}}], "change[0]"),
        (["not an edit"], "change[0]"),
        (42, "change"),
    ],
)
def test_an_edit_that_cannot_apply_is_edit_invalid(change, where):
    workspace = little.Workspace()
    workspace.open("a.json", "{\n}")
    with pytest.raises(little.LittleError) as raised:
        workspace.update("a.json", change)
    assert (raised.value.code, raised.value.path) == ("edit.invalid", where)
    assert workspace.text("a.json") == "{\n}"


def test_a_workspace_whose_documents_cannot_be_used_is_not_made():
    with pytest.raises(little.LittleError) as raised:
        little.Workspace(catalog="not json")
    assert (raised.value.code, raised.value.path) == ("input.invalid", "catalog")


def test_threads_sharing_a_workspace_each_see_their_own_document():
    workspace = little.Workspace(**documents(OPTIONS))
    text = draft_with_an_emoji()
    lines = text.split("\n")
    line = next(i for i, l in enumerate(lines) if "Fetch 📈 sales" in l)
    column = lines[line].index('"dataset.retrieve"') + 1
    failures = []

    def session(n):
        path = f"thread-{n}.json"
        try:
            assert codes(workspace.open(path, text)) == []
            for _ in range(10):
                typed = workspace.update(path, [{"range": {"start": at(line, column), "end": at(line, column)}, "text": "x"}])
                assert codes(typed) == ["catalog.unknown_family"], codes(typed)
                fixed = workspace.update(path, [{"range": {"start": at(line, column), "end": at(line, column + 1)}, "text": ""}])
                assert codes(fixed) == []
                assert workspace.report(path)["files"][0]["candidate"] is not None
            assert workspace.text(path) == text
            workspace.close(path)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append((n, repr(error)))

    threads = [threading.Thread(target=session, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert workspace.paths() == []


def test_columns_count_characters_utf16_code_units_or_utf8_bytes_as_asked():
    # "😀" is one character, two UTF-16 code units, four UTF-8 bytes: the same place after
    # it is column 1, 2 or 4, as each kind of editor counts.
    text = '{"a": "😀b"}'
    for columns, after in [("characters", 8), ("utf-16", 9), ("utf-8", 11)]:
        workspace = little.Workspace(columns=columns)
        workspace.open("a.json", text)
        workspace.update("a.json", [{"range": {"start": at(0, after), "end": at(0, after + 1)}, "text": "c"}])
        assert workspace.text("a.json") == '{"a": "😀c"}', columns
    # The default counts characters, as Python's strings do.
    workspace = little.Workspace()
    workspace.open("a.json", text)
    workspace.update("a.json", [{"range": {"start": at(0, 8), "end": at(0, 9)}, "text": "c"}])
    assert workspace.text("a.json") == '{"a": "😀c"}'
    with pytest.raises(little.LittleError) as raised:
        little.Workspace(columns="utf-32")
    assert (raised.value.code, raised.value.path) == ("input.invalid", "columns")
