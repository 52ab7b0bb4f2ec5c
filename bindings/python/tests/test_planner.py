"""The planner pipeline in process, against the scripted OpenAI-compatible provider on
127.0.0.1: ``plan`` gives the WorkflowVersion and the log of ``little plan``; ``on_event``
hears every event in order; cancelling the task mid-model-call leaves a log that
``little plan`` resumes; a provider given as a value needs no little.toml and no variable
and its key is in no event; ``verify`` in process says what ``little verify`` says; the
GIL is released while a session runs."""

import asyncio
import json
import os
import pathlib
import shutil
import subprocess
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

import little_compiler as little
from support import ROOT, little_bin

EXAMPLE = ROOT / "examples" / "support-summarize-ticket"
KEY = "sk-python-given-KEY-3391"
LWIR = json.loads((EXAMPLE / "lwir.json").read_text())
TURNS = [
    {"text": "Looking around first.",
     "toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo hello > note.txt && ls"}}]},
    {"toolCalls": [{"id": "c2", "name": "validate_lwir", "arguments": {"lwir": LWIR}}]},
    {"toolCalls": [{"id": "c3", "name": "submit_lwir", "arguments": {"lwir": LWIR}}]},
]


def scripted_provider_bin() -> str:
    target = os.environ.get("CARGO_TARGET_DIR") or str(ROOT / "target")
    path = os.environ.get("LITTLE_SCRIPTED_PROVIDER") or os.path.join(target, "debug", "examples", "scripted-provider")
    assert os.access(path, os.X_OK), f"the scripted provider {path} is built (test.sh builds it)"
    return path


class Provider:
    """The scripted provider on a script; what it read, one request a line."""

    def __init__(self, folder: pathlib.Path, script: Dict[str, Any]) -> None:
        script_file = folder / f"script-{time.monotonic_ns()}.json"
        script_file.write_text(json.dumps(script))
        self.requests_file = pathlib.Path(f"{script_file}.requests.jsonl")
        self.process = subprocess.Popen(
            [scripted_provider_bin(), str(script_file), str(self.requests_file)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        assert self.base_url.startswith("http://127.0.0.1:"), self.base_url

    def requests(self) -> List[Dict[str, Any]]:
        if not self.requests_file.exists():
            return []
        return [json.loads(line) for line in self.requests_file.read_text().splitlines() if line]

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture
def folder(request: Any) -> Iterator[pathlib.Path]:
    path = ROOT / "target" / "python-planner" / request.node.name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    yield path


def common(folder: pathlib.Path, run_id: str) -> Dict[str, Any]:
    return {
        "definition": EXAMPLE / "definition.json",
        "input": EXAMPLE / "input.json",
        "run_id": run_id,
        "events": str(folder / "events.jsonl"),
        "sandbox": "none",
        "memory_root": folder / "memory",
        "lock_wait": 0,
    }


def cli_plan(folder: pathlib.Path, run_id: str, base_url: str) -> "subprocess.CompletedProcess[str]":
    (folder / "little.toml").write_text(f'[providers.openai]\nbase_url = "{base_url}"\n')
    return subprocess.run(
        [little_bin(), "plan", str(EXAMPLE / "definition.json"), "--input", str(EXAMPLE / "input.json"),
         "--run-id", run_id, "--events", str(folder / "events.jsonl"), "--config", str(folder / "little.toml"),
         "--sandbox", "none", "--memory-root", str(folder / "memory"), "--lock-wait", "0",
         "-o", str(folder / "lock.json")],
        cwd=folder, capture_output=True, text=True,
    )


def timeless(event: Dict[str, Any]) -> Any:
    """An event without its times (``durationMs``, ``at``)."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("durationMs", "at")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(event)


def test_plan_in_process_is_little_plan_and_hears_every_event_in_order(folder: pathlib.Path) -> None:
    # Both runs in the same folder, one after the other: the prompt names the session's paths.
    run_dir = folder / "run"
    run_dir.mkdir()
    served = Provider(folder, {"turns": TURNS})
    heard: List[Dict[str, Any]] = []
    try:
        result = little.plan(
            **common(run_dir, "run_same"),
            providers={"openai": {"base_url": served.base_url, "api_key": KEY}},
            on_event=heard.append,
        )
        for request in served.requests():
            assert request["authorization"] == f"Bearer {KEY}"
    finally:
        served.stop()
    assert result["session"]["modelCalls"] == 3
    mine = little.events(str(run_dir / "events.jsonl"), run_id="run_same")
    assert [e for e in heard if "seq" in e] == mine, "every stored event, in order"
    text = "".join(e["payload"]["text"] for e in heard if e["type"] == "harness.model.text")
    assert text == "Looking around first."
    assert KEY not in (run_dir / "events.jsonl").read_text()
    assert not (run_dir / "little.toml").exists()
    assert all(e["payload"]["at"].endswith("Z") for e in mine)

    shutil.rmtree(run_dir)
    run_dir.mkdir()
    cli_served = Provider(folder, {"turns": TURNS})
    try:
        run = cli_plan(run_dir, "run_same", cli_served.base_url)
    finally:
        cli_served.stop()
    assert run.returncode == 0, run.stderr + run.stdout
    assert result["registration"] == json.loads((run_dir / "lock.json").read_text())
    assert result["lwirVersionId"] in run.stdout
    theirs = little.events(str(run_dir / "events.jsonl"), run_id="run_same")
    assert [timeless(e) for e in mine] == [timeless(e) for e in theirs]


def test_cancelling_the_task_mid_call_leaves_a_log_little_plan_resumes(folder: pathlib.Path) -> None:
    served = Provider(folder, {"turns": TURNS, "stallOnce": 2})

    async def scenario() -> None:
        heard: List[str] = []
        task = asyncio.ensure_future(
            little.plan_async(
                **common(folder, "run_cancel"),
                providers={"openai": {"base_url": served.base_url}},
                on_event=lambda event: heard.append(event["type"]),
            )
        )
        waited = 0.0
        while not any(r["turn"] == 2 for r in served.requests()):
            assert waited < 30, "turn 2 was asked"
            await asyncio.sleep(0.02)
            waited += 0.02
        # The loop stays free while the session runs: this sleep returns on time.
        began = time.monotonic()
        await asyncio.sleep(0.05)
        assert time.monotonic() - began < 1.0
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert heard[-1] == "harness.model.called"

    try:
        asyncio.run(scenario())
        logged = little.events(str(folder / "events.jsonl"), run_id="run_cancel")
        assert logged[-1]["type"] == "harness.model.called", "turn 2 left in flight"
        assert not any(e["type"] == "RunFailed" for e in logged)
        run = cli_plan(folder, "run_cancel", served.base_url)
        assert run.returncode == 0, run.stderr + run.stdout
        assert "replayed" in run.stdout
    finally:
        served.stop()


def test_the_gil_is_released_while_a_session_runs(folder: pathlib.Path) -> None:
    served = Provider(folder, {"turns": TURNS, "stallOnce": 1})
    cancel = little.Cancel()
    outcome: List[BaseException] = []

    def session() -> None:
        try:
            little.plan(**common(folder, "run_gil"), providers={"openai": {"base_url": served.base_url}}, cancel=cancel)
        except little.LittleError as error:
            outcome.append(error)

    try:
        thread = threading.Thread(target=session)
        thread.start()
        while not served.requests():
            time.sleep(0.01)
        counted = 0
        began = time.monotonic()
        while time.monotonic() - began < 0.2:
            counted += 1  # Python runs while the session waits on the model
        assert counted > 1000
        cancel.cancel()
        thread.join(timeout=30)
        assert not thread.is_alive()
        assert isinstance(outcome[0], little.LittleError) and outcome[0].code == "cancelled"
    finally:
        served.stop()


def test_a_failed_run_carries_its_cause_code(folder: pathlib.Path) -> None:
    served = Provider(folder, {"turns": [{"text": "no tools"}, {"text": "still none"}]})
    try:
        with pytest.raises(little.LittleError) as raised:
            little.plan(**common(folder, "run_fail"), providers={"openai": {"base_url": served.base_url}}, max_turns=2)
    finally:
        served.stop()
    assert raised.value.code == "run.failed"
    assert raised.value.cause_code == "planner_session_failed"


def test_verify_in_process_says_what_little_verify_says(folder: pathlib.Path) -> None:
    registration = subprocess.run(
        [little_bin(), "lock", str(EXAMPLE / "lwir.json"), "--definition", str(EXAMPLE / "definition.json")],
        capture_output=True, text=True, check=True,
    ).stdout
    (folder / "lock.json").write_text(registration)
    cli = subprocess.run(
        [little_bin(), "verify", str(EXAMPLE / "lwir.json"), "--lock", str(folder / "lock.json"),
         "--definition", str(EXAMPLE / "definition.json")],
        capture_output=True, text=True,
    )
    assert cli.returncode == 0, cli.stderr
    verified = little.verify(lwir=EXAMPLE / "lwir.json", lock=folder / "lock.json", definition=EXAMPLE / "definition.json")
    assert f"verified {verified['lwirVersionId']} ({verified['workflowVersionHash']})" in cli.stdout
    changed = dict(LWIR, steps=[dict(LWIR["steps"][0], id="renamed")] + LWIR["steps"][1:])
    (folder / "changed.json").write_text(json.dumps(changed))
    refused = subprocess.run(
        [little_bin(), "verify", str(folder / "changed.json"), "--lock", str(folder / "lock.json")],
        capture_output=True, text=True,
    )
    assert refused.returncode == 1
    with pytest.raises(little.LittleError) as raised:
        little.verify(lwir=folder / "changed.json", lock=folder / "lock.json")
    assert raised.value.code == "verify.failed"
    assert raised.value.message in refused.stdout
