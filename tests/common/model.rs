//! Fixtures of the end-to-end harness tests: a scripted model over a real socket whose
//! answer is chosen by the request's turn (so a resumed `little plan` that asks a turn
//! again gets that turn's answer again), a folder per test holding the worked example and
//! a `little.toml`, `little plan` run or spawned as a child process, and what the tests
//! read back (the log's lines, the requests per turn, processes by their command line).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use little_provider::testing::{Recorded, Reply, ScriptedServer, ToolCall};
use serde_json::{Value, json};

use super::Run;

// ---------------------------------------------------------------------------------------
// The scripted model.

/// The turn a request asks for: the assistant messages it carries, plus one.
pub fn turn_of(request: &Recorded) -> usize {
    request.body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count()) + 1
}

/// The reply to turn `turn` from `turns`; a turn past the script gets a 500.
fn by_turn(turns: &[Reply], turn: usize) -> Reply {
    turns.get(turn - 1).cloned().unwrap_or_else(|| Reply::status(500, &format!("no reply scripted for turn {turn}")))
}

/// Answers turn N with `turns[N-1]`.
pub fn scripted(turns: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::with_handler(move |_, request| by_turn(&turns, turn_of(request)))
}

/// The first requests get `first`, one each in order (failures a call retries through);
/// every later request is answered by its turn, as [`scripted`].
pub fn failing_first(first: Vec<Reply>, turns: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::with_handler(move |number, request| match first.get(number) {
        Some(reply) => reply.clone(),
        None => by_turn(&turns, turn_of(request)),
    })
}

/// As [`scripted`], but the first request of `stall_turn` is never answered (a model call
/// in flight when the test kills `little`).
pub fn stalling_once(turns: Vec<Reply>, stall_turn: usize) -> ScriptedServer {
    let stalled = Arc::new(AtomicBool::new(false));
    ScriptedServer::with_handler(move |_, request| {
        let turn = turn_of(request);
        if turn == stall_turn && !stalled.swap(true, Ordering::SeqCst) {
            return Reply::Stall;
        }
        by_turn(&turns, turn)
    })
}

/// The turn of each request the server received, in order.
pub fn turns(server: &ScriptedServer) -> Vec<usize> {
    server.requests().iter().map(turn_of).collect()
}

/// The requests of one turn, in order.
pub fn requests_of(server: &ScriptedServer, turn: usize) -> Vec<Recorded> {
    server.requests().into_iter().filter(|r| turn_of(r) == turn).collect()
}

pub fn call(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, tool, arguments)
}

pub fn bash_call(id: &str, command: &str) -> ToolCall {
    call(id, "bash", json!({ "command": command }))
}

/// A turn that runs one bash command.
pub fn bash(id: &str, command: &str) -> Reply {
    Reply::tool_calls(vec![bash_call(id, command)])
}

pub fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/support-summarize-ticket").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The worked example's LWIR.
pub fn good_lwir() -> Value {
    serde_json::from_str(&example("lwir.json")).unwrap()
}

/// The worked example's LWIR naming a model that is not a slot (`binding.model_not_permitted`).
pub fn bad_lwir() -> Value {
    serde_json::from_str(&example("lwir.json").replace("\"gpt-4o-mini\"", "\"gpt-4o\"")).unwrap()
}

/// A turn that submits `lwir`.
pub fn submit(id: &str, lwir: Value) -> Reply {
    Reply::tool_calls(vec![call(id, "submit_lwir", json!({ "lwir": lwir }))])
}

// ---------------------------------------------------------------------------------------
// A folder per test, and `little plan` in it.

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Digits unique to this call among the tests of this process and others: for `sleep`
/// arguments (`300.<digits>`) that find a leftover process by its command line, and for
/// secrets.
pub fn unique() -> String {
    format!("{}{:04}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst))
}

/// The run id every test uses.
pub const RUN: &str = "run_e2e";

/// A scratch folder with the worked example (`definition.json`, `input.json`,
/// `lwir.json`), removed when the test passes (kept for a look when it fails).
pub struct Case {
    pub dir: PathBuf,
    /// Variables set on the child's environment only.
    env: Vec<(String, String)>,
    /// `--events`: the folder's `events.jsonl`, or a database URL.
    pub events: String,
    /// `--run-id`.
    pub run: String,
}

impl Case {
    pub fn new(name: &str) -> Case {
        let dir = std::env::temp_dir().join(format!("little-cli-harness-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dir = dir.canonicalize().unwrap();
        for name in ["definition.json", "input.json", "lwir.json"] {
            std::fs::write(dir.join(name), example(name)).unwrap();
        }
        let events = dir.join("events.jsonl").display().to_string();
        Case { dir, env: Vec::new(), events, run: RUN.to_string() }
    }

    /// A folder of its own whose runs keep their history in the database `url`, as run `run`.
    pub fn on_store(name: &str, url: &str, run: &str) -> Case {
        let mut case = Case::new(name);
        case.events = url.to_string();
        case.run = run.to_string();
        case
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn write(&self, name: &str, text: &str) {
        let path = self.path(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// Sets a variable on the child's environment (never on the test process).
    pub fn env(&mut self, name: &str, value: &str) {
        self.env.push((name.to_string(), value.to_string()));
    }

    /// `little.toml` naming a provider `openai` (the example's planner provider) at
    /// `base_url`, streaming, with `extra` lines added to its table.
    pub fn provider(&self, base_url: &str, extra: &str) {
        self.write("little.toml", &format!("[providers.openai]\nbase_url = \"{base_url}\"\nstream = true\n{extra}"));
    }

    pub fn log(&self) -> PathBuf {
        self.path("events.jsonl")
    }

    /// The run's scratch directory on the host.
    pub fn scratch(&self) -> PathBuf {
        self.dir.join(".little/runs").join(&self.run).join("cycle-1/scratch")
    }

    /// A file of the scratch, empty when missing.
    pub fn scratch_file(&self, name: &str) -> String {
        std::fs::read_to_string(self.scratch().join(name)).unwrap_or_default()
    }

    /// The arguments of `little plan` in this folder with its `little.toml`, and `extra`.
    pub fn plan_args(&self, extra: &[&str]) -> Vec<String> {
        let config = self.path("little.toml").display().to_string();
        let mut args = self.plan_args_without_config(&["--config", &config]);
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// The arguments of `little plan` in this folder without `--config`, and `extra`.
    pub fn plan_args_without_config(&self, extra: &[&str]) -> Vec<String> {
        let path = |name: &str| self.path(name).display().to_string();
        let mut args: Vec<String> = vec![
            "plan".into(),
            path("definition.json"),
            "--input".into(),
            path("input.json"),
            "--run-id".into(),
            self.run.clone(),
            "--events".into(),
            self.events.clone(),
            "--memory-root".into(),
            path("memory"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// The `little` binary with `args`, in this folder, with colour off and the case's
    /// variables set.
    pub fn command(&self, args: &[String]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_little"));
        command.args(args).current_dir(&self.dir).env("NO_COLOR", "1");
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command
    }

    /// Runs `little ARGS` to its end; fails the test on a panic or a signal.
    pub fn little(&self, args: &[String]) -> Run {
        finished(self.command(args).output().expect("the little binary runs"))
    }

    /// Runs `little plan` (with `extra`) to its end.
    pub fn plan(&self, extra: &[&str]) -> Run {
        self.little(&self.plan_args(extra))
    }

    /// Runs `little plan -o lock.json` to its end.
    pub fn plan_to_lock(&self) -> Run {
        let lock = self.path("lock.json").display().to_string();
        self.plan(&["-o", &lock])
    }

    /// Runs `little plan` (with `extra`) on a terminal of its own (`script` from
    /// util-linux): stdout and stderr both go to the terminal, whose output is `stdout`.
    pub fn plan_on_a_terminal(&self, extra: &[&str]) -> Run {
        let quote = |arg: &str| format!("'{}'", arg.replace('\'', "'\\''"));
        let mut line = quote(env!("CARGO_BIN_EXE_little"));
        for arg in self.plan_args(extra) {
            line.push(' ');
            line.push_str(&quote(&arg));
        }
        let mut command = Command::new("script");
        command.args(["-qec", &line, "/dev/null"]).current_dir(&self.dir).env("NO_COLOR", "1").stdin(Stdio::null());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        finished(command.output().expect("script runs"))
    }

    /// Starts `little plan` (with `extra`) and returns at once.
    pub fn spawn_plan(&self, extra: &[&str]) -> Child {
        self.command(&self.plan_args(extra))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the little binary starts")
    }

    /// The log's lines, each parsed (a torn last line is a test failure); from a database,
    /// what `little events --format json` exports of the run.
    pub fn lines(&self) -> Vec<Value> {
        if !self.events.ends_with(".jsonl") {
            let run = self.little(&[
                "events".into(),
                self.events.clone(),
                "--run-id".into(),
                self.run.clone(),
                "--format".into(),
                "json".into(),
            ]);
            if run.code != 0 && run.stderr.contains("has no events") {
                return Vec::new();
            }
            assert_eq!(run.code, 0, "{}", run.stderr);
            return serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
        }
        let text = std::fs::read_to_string(self.log()).unwrap_or_default();
        assert!(text.is_empty() || text.ends_with('\n'), "the log ends in a torn line:\n{text}");
        text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))).collect()
    }

    /// The `type` of each line of the log, in order.
    pub fn kinds(&self) -> Vec<String> {
        self.lines().iter().map(|e| e["type"].as_str().unwrap().to_string()).collect()
    }

    /// The WorkflowVersion and lock `little lock` gives the example's LWIR: what a
    /// session that submits [`good_lwir`] must register.
    pub fn locked(&self) -> Value {
        let path = |name: &str| self.path(name).display().to_string();
        let run = self.little(&["lock".into(), path("lwir.json"), "--definition".into(), path("definition.json")]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        serde_json::from_str(&run.stdout).unwrap()
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The [`Run`] of an output; a panic or a signal fails the test.
pub fn finished(output: std::process::Output) -> Run {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let code = output.status.code().unwrap_or_else(|| panic!("little was killed by a signal; stderr:\n{stderr}"));
    assert!(!stderr.contains("panicked"), "little panicked:\n{stderr}");
    assert_ne!(code, 101, "little panicked:\n{stderr}");
    Run { code, stdout: String::from_utf8_lossy(&output.stdout).into_owned(), stderr }
}

/// Kills a child with SIGKILL (what `Child::kill` sends) and reaps it.
pub fn sigkill(mut child: Child) {
    child.kill().expect("the child can be killed");
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "little ended before the kill: {status:?}");
}

// ---------------------------------------------------------------------------------------
// What the tests read back.

/// The events of one type.
pub fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|e| e["type"] == kind).collect()
}

/// One payload field of each event of a type, as text.
pub fn field_of(lines: &[Value], kind: &str, field: &str) -> Vec<String> {
    of_type(lines, kind)
        .into_iter()
        .map(|e| match &e["payload"][field] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The recorded result of a tool call (`harness.tool_call.succeeded`).
pub fn tool_result(lines: &[Value], call_id: &str) -> Value {
    of_type(lines, "harness.tool_call.succeeded")
        .into_iter()
        .find(|e| e["payload"]["callId"] == call_id)
        .unwrap_or_else(|| panic!("no result of call {call_id}"))["payload"]["result"]
        .clone()
}

/// Pids of live processes whose command line contains `needle` (zombies have none).
pub fn processes_with(needle: &str) -> Vec<i32> {
    let own = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|raw| String::from_utf8_lossy(&raw).replace('\0', " ").contains(needle))
        })
        .collect()
}

/// Pids of live processes running exactly `sleep SECONDS` (not the shells or the
/// bubblewrap whose command lines hold that text).
pub fn sleeping(seconds: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{seconds}\0");
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|raw| raw == wanted.as_bytes()))
        .collect()
}

/// Kills, when dropped, every process whose command line holds one of its tokens: what a
/// failing test leaves running (`sleep 1000.<digits>`) does not outlive it.
pub struct Leftovers(pub Vec<String>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for pid in self.0.iter().flat_map(|token| processes_with(token)) {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// Waits up to `timeout` for `done`; returns whether it came.
pub fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
