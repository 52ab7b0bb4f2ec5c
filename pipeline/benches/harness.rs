//! The built-in planner harness's own time per turn, beside the model and the tool, and
//! the replay of a 40-turn session from its log. Goals: under 2 ms of little's own work a
//! turn, fsync included where the disk allows; a 40-turn replay under 50 ms, with no request
//! and no process. `cargo bench -p little-pipeline --bench harness` (docs/benchmarks.md has
//! the figures and how they are read).
//!
//! - `session/PLACE/MODE/N`: `little_pipeline::plan` with the built-in harness, in a fresh
//!   folder per iteration, against a scripted provider on 127.0.0.1 that answers at once:
//!   N turns each calling `bash` with `true`, then a turn that submits the example's valid
//!   LWIR, which is registered. `N = 0` is that last turn alone: what a session costs
//!   besides its turns (the definition, the log, the provider's client, one round trip, the
//!   submission validated, the registration). PLACE is `disk` (the target's folder, where
//!   fsync waits for the device) or `tmpfs` (`/dev/shm`, where it does not).
//! - `round_trip/N`: `Client::complete` of the N bash turns' requests exactly as the session
//!   sent them, against the same kind of server: the model's share.
//! - `tool/MODE`: `Sandbox::run("true")` in the session's own sandbox: the tool's share.
//! - `own/PLACE/MODE/N`: little's own time in a session of N bash turns,
//!   session/N − session/0 − round_trip/N − N × tool, each term timed in the same iteration.
//! - `between_calls/PLACE/MODE/N`: measured inside the sessions by an observer, the time of
//!   the N bash turns outside the model's and the tool's windows (two of a turn's four
//!   fsynced appends fall there, the other two inside the windows); the windows are printed.
//! - `parts/*/turn_N`: the request of turn N built, hashed and fingerprinted.
//! - `replay/40`: a session of 39 bash turns and the submission, recorded once, planned again
//!   with the same run id and the provider gone (asserted once, outside the timing: nothing
//!   called, nothing run, nothing appended); `replay/1`, the one-turn session likewise.
//! - `fsync/*`: one fsynced append of a typical event (`EventLog::append`) on each place, and
//!   the same line written by hand with and without `sync_data`.
//! - `store/STORE/N` (STORE `file` on the disk, or `postgres` on the server of
//!   `LITTLE_TEST_POSTGRES_URL`, when it is set): a session of N bash turns (`true`, no
//!   sandbox) and the submission, a fresh run each iteration. (store/10 − store/0) / 10 is
//!   a turn with the model and the tool; postgres − file, what the database costs a turn.
//! - `store/postgres/replay/40`: the 40-turn session planned again from the database.

use std::fs::OpenOptions;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group};
use little_pipeline::events::{self, RunLog as _};
use little_pipeline::harness::{Observer, filesystem};
use little_pipeline::{HarnessOptions, PlanReport, PlanRequest, Planner};
use little_provider::testing::{Recorded, Reply, ScriptedServer, ToolCall};
use little_provider::{Client, ProviderConfig};
use little_sandbox::{Mode, Sandbox};
use little_store::file::EventLog as FileLog;
use serde_json::{Value, json};

const RUN_ID: &str = "bench";

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-summarize-ticket").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Where the runs' folders go: `disk`, the target's temporary folder on the disk the build
/// uses, where fsync waits for the device; `tmpfs`, `/dev/shm`, where fsync returns at once,
/// for little's work without the device's wait.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Disk,
    Tmpfs,
}

impl Place {
    fn name(self) -> &'static str {
        match self {
            Place::Disk => "disk",
            Place::Tmpfs => "tmpfs",
        }
    }

    fn root(self) -> PathBuf {
        let folder = format!("little-harness-bench-{}", std::process::id());
        match self {
            Place::Disk => Path::new(env!("CARGO_TARGET_TMPDIR")).join(folder),
            Place::Tmpfs => Path::new("/dev/shm").join(folder),
        }
    }
}

/// Whether `path` is on a tmpfs.
fn on_tmpfs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: statfs(2) fills the zeroed struct it is given; the path is a NUL-terminated string.
    unsafe {
        let mut stat: libc::statfs = std::mem::zeroed();
        libc::statfs(path.as_ptr(), &mut stat) == 0 && stat.f_type == libc::TMPFS_MAGIC
    }
}

/// A run's folder: the example's definition and input, `little.toml` naming the scripted
/// provider as `openai` (streaming), a memory root. Removed when dropped.
struct RunDir {
    dir: PathBuf,
}

impl RunDir {
    fn new(place: Place, base_url: &str) -> RunDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = place.root().join(format!("run-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("memory")).unwrap();
        std::fs::write(dir.join("definition.json"), example("definition.json")).unwrap();
        std::fs::write(dir.join("input.json"), example("input.json")).unwrap();
        std::fs::write(
            dir.join("little.toml"),
            format!("[providers.openai]\nbase_url = \"{base_url}\"\nstream = true\n"),
        )
        .unwrap();
        RunDir { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `little plan` of run `bench` in this folder with the built-in harness.
    fn plan(&self, mode: Mode, observer: &mut dyn Observer) -> PlanReport {
        self.plan_in(&little_pipeline::Store::file(self.path("events.jsonl")), RUN_ID, mode, observer)
    }

    /// `little plan` of `run_id` in this folder, its history in `events`.
    fn plan_in(
        &self,
        events: &little_pipeline::Store,
        run_id: &str,
        mode: Mode,
        observer: &mut dyn Observer,
    ) -> PlanReport {
        let (definition, input) = (self.path("definition.json"), self.path("input.json"));
        let (config, memory) = (self.path("little.toml"), self.path("memory"));
        let options = HarnessOptions {
            config: Some(&config),
            sandbox: mode,
            tool_timeout: Duration::from_secs(30),
            max_turns: 40,
            max_tokens: None,
            memory_root: Some(&memory),
            bounds: Default::default(),
            host: Default::default(),
        };
        let request = PlanRequest {
            definition: &definition,
            input: &input,
            planner: Planner::Harness(options),
            run_id,
            events,
            max_attempts: 3,
            outer_loop: None,
            lock_wait: Duration::ZERO,
        };
        little_pipeline::plan(&request, observer).unwrap_or_else(|failure| panic!("the plan failed: {failure:?}"))
    }

    fn event_count(&self) -> usize {
        events::read(&self.path("events.jsonl")).unwrap().events.len()
    }

    /// The sandbox the session of this folder runs bash in.
    fn sandbox(&self, mode: Mode) -> Sandbox {
        let db = little_passes::Database::default();
        let loaded = little_pipeline::documents::load_definition(&db, &self.path("definition.json"))
            .unwrap_or_else(|failure| panic!("{failure:?}"));
        let scratch = filesystem::scratch_dir(&little_store::file::run_dir(&self.path("events.jsonl"), RUN_ID), 1);
        let definition = &loaded.definition;
        let memory = self.path("memory");
        let options = HarnessOptions {
            sandbox: mode,
            tool_timeout: Duration::from_secs(30),
            memory_root: Some(&memory),
            ..HarnessOptions::default()
        };
        let files =
            filesystem::prepare(scratch, &options.memory_root(), &options, definition, &definition.planner.skills)
                .unwrap();
        files.sandbox
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The turn a request asks for: its assistant messages, plus one.
fn turn_of(request: &Recorded) -> usize {
    request.body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count()) + 1
}

/// A provider that answers at once: turns 1..=`bash_turns` call `bash` with `true`, the
/// next one submits the example's LWIR.
fn provider(bash_turns: usize) -> ScriptedServer {
    let lwir: Value = serde_json::from_str(&example("lwir.json")).unwrap();
    let submit = Reply::tool_calls(vec![ToolCall::new("call_submit", "submit_lwir", json!({ "lwir": lwir }))]);
    ScriptedServer::with_handler(move |_, request| {
        let turn = turn_of(request);
        if turn <= bash_turns {
            Reply::tool_calls(vec![ToolCall::new(&format!("call_{turn}"), "bash", json!({ "command": "true" }))])
        } else if turn == bash_turns + 1 {
            submit.clone()
        } else {
            Reply::status(500, &format!("no reply scripted for turn {turn}"))
        }
    })
}

/// A fresh provider and folder: what one timed session starts from.
fn fresh(place: Place, bash_turns: usize) -> (ScriptedServer, RunDir) {
    let server = provider(bash_turns);
    let dir = RunDir::new(place, &server.base_url());
    (server, dir)
}

struct Silent;

impl Observer for Silent {}

/// Splits the time of a session's bash turns, as it happens: the model's window (from the
/// call's announcement, logged, to its answer, logged: the round trip and one append), the
/// tool's window (from its announcement to its end, logged: the tool and one append), and
/// what lies outside both (two appends, and all the rest of the turn).
#[derive(Default)]
struct Stopwatch {
    calling: Option<Instant>,
    answered: Option<Instant>,
    tool_started: Option<Instant>,
    tool_ended: Option<Instant>,
    totals: Windows,
}

#[derive(Clone, Copy, Default)]
struct Windows {
    turns: u32,
    model: Duration,
    tool: Duration,
    between: Duration,
}

impl Windows {
    fn add(&mut self, other: Windows) {
        self.turns += other.turns;
        self.model += other.model;
        self.tool += other.tool;
        self.between += other.between;
    }

    /// Per turn, in microseconds.
    fn report(&self, name: &str) {
        let per_turn = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(self.turns.max(1));
        eprintln!(
            "{name}: per bash turn over {} turns, model window {:.0} µs, tool window {:.0} µs, outside both {:.0} µs",
            self.turns,
            per_turn(self.model),
            per_turn(self.tool),
            per_turn(self.between)
        );
    }
}

impl Observer for Stopwatch {
    fn turn(&mut self, _turn: u64, replayed: bool) {
        assert!(!replayed);
        let now = Instant::now();
        if let Some(ended) = self.tool_ended.take() {
            self.totals.between += now - ended;
        }
        self.calling = Some(now);
    }

    fn message(&mut self, _turn: u64, message: &Value, _replayed: bool) {
        let now = Instant::now();
        if message["tool_calls"][0]["function"]["name"] == "bash" {
            self.totals.turns += 1;
            self.totals.model += now - self.calling.take().expect("an answer follows a call");
        }
        self.answered = Some(now);
    }

    fn tool_started(&mut self, _call_id: &str, tool: &str, _arguments: &Value, _replayed: bool) {
        if tool == "bash" {
            let now = Instant::now();
            self.totals.between += now - self.answered.take().expect("a tool call follows an answer");
            self.tool_started = Some(now);
        }
    }

    fn tool_ended(&mut self, _call_id: &str, tool: &str, outcome: Result<&Value, &Value>, _replayed: bool) {
        if tool == "bash" {
            assert_eq!(outcome.expect("bash ran")["exitCode"], 0);
            let now = Instant::now();
            self.totals.tool += now - self.tool_started.take().expect("a tool ends after it starts");
            self.tool_ended = Some(now);
        }
    }
}

/// Checks, once, that a session of `bash_turns` turns does what the benchmark says, and
/// returns its requests as sent (less the transport fields the client adds).
fn checked_session(place: Place, mode: Mode, bash_turns: usize) -> Vec<Value> {
    let (server, dir) = fresh(place, bash_turns);
    let report = dir.plan(mode, &mut Silent);
    let calls = u32::try_from(bash_turns).unwrap() + 1;
    assert_eq!((report.session.model_calls, report.session.tool_runs), (calls, calls));
    assert_eq!(report.attempt, 1);
    // Started, four events a turn, completed, registered.
    assert_eq!(dir.event_count(), 1 + 4 * (bash_turns + 1) + 2);
    server
        .requests()
        .into_iter()
        .map(|request| {
            let mut body = request.body;
            let fields = body.as_object_mut().unwrap();
            fields.remove("stream");
            fields.remove("stream_options");
            body
        })
        .collect()
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::None => "none",
        Mode::Bwrap => "bwrap",
    }
}

/// One fsynced append, on the disk and on the tmpfs, and its parts. Each sample writes a
/// fresh file: the events a log keeps, and the files, would otherwise grow by hundreds of
/// megabytes, and a large process forks slowly (every later sample of a tool would pay it).
fn fsync(c: &mut Criterion) {
    load("fsync");
    let mut group = c.benchmark_group("harness");
    group.sample_size(50).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    // A tool call's announcement, as the session writes it.
    let payload = json!({
        "turn": 5, "callId": "5.1", "tool": "bash", "arguments": { "command": "true" }, "caller": "model",
        "role": "planner", "cycle": 1,
    });
    let open_log =
        |dir: &RunDir| FileLog::open(&dir.path("events.jsonl"), RUN_ID, Duration::ZERO, &mut |_| {}).unwrap();
    let line = {
        let dir = RunDir::new(Place::Tmpfs, "http://127.0.0.1:9/v1");
        open_log(&dir).append(events::TOOL_STARTED, payload.clone()).unwrap();
        std::fs::read_to_string(dir.path("events.jsonl")).unwrap()
    };
    for place in [Place::Disk, Place::Tmpfs] {
        group.bench_function(format!("fsync/append/{}", place.name()), |b| {
            b.iter_custom(|iterations| {
                let dir = RunDir::new(place, "http://127.0.0.1:9/v1");
                let mut log = open_log(&dir);
                let began = Instant::now();
                for _ in 0..iterations {
                    log.append(events::TOOL_STARTED, payload.clone()).unwrap();
                }
                began.elapsed()
            })
        });
    }
    // The same line by hand: what the device's flush costs, and what a write without it does.
    for (name, sync) in [("fsync/write_sync_data/disk", true), ("fsync/write_only/disk", false)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let dir = RunDir::new(Place::Disk, "http://127.0.0.1:9/v1");
                let mut file = OpenOptions::new().create(true).append(true).open(dir.path("lines.jsonl")).unwrap();
                let began = Instant::now();
                for _ in 0..iterations {
                    file.write_all(line.as_bytes()).unwrap();
                    if sync {
                        file.sync_data().unwrap();
                    }
                }
                began.elapsed()
            })
        });
    }
    group.finish();
}

/// Whole sessions, and what of them is not little's: the round trips and the tool.
fn turns(c: &mut Criterion) {
    load("sessions");
    let mut group = c.benchmark_group("harness");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    little_sandbox::check_available(Mode::Bwrap).expect("bubblewrap is needed for the Bwrap figures");

    let sessions: [(Place, Mode, &[usize]); 3] = [
        (Place::Disk, Mode::None, &[0, 10, 39]),
        (Place::Tmpfs, Mode::None, &[0, 10]),
        (Place::Disk, Mode::Bwrap, &[0, 10]),
    ];
    for (place, mode, sizes) in sessions {
        for &n in sizes {
            checked_session(place, mode, n);
            group.bench_function(format!("session/{}/{}/{n}", place.name(), mode_name(mode)), |b| {
                b.iter_batched(
                    || fresh(place, n),
                    // The folder and the server are returned, so that removing them is not timed.
                    |(server, dir)| {
                        let report = dir.plan(mode, &mut Silent);
                        (server, dir, report)
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    let split = [
        (Place::Disk, Mode::None, 10),
        (Place::Tmpfs, Mode::None, 10),
        (Place::Disk, Mode::Bwrap, 10),
        (Place::Disk, Mode::None, 39),
    ];
    for (place, mode, n) in split {
        let name = format!("between_calls/{}/{}/{n}", place.name(), mode_name(mode));
        let mut all = Windows::default();
        group.bench_function(&name, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let (_server, dir) = fresh(place, n);
                    let mut stopwatch = Stopwatch::default();
                    dir.plan(mode, &mut stopwatch);
                    assert_eq!(stopwatch.totals.turns, u32::try_from(n).unwrap());
                    total += stopwatch.totals.between;
                    all.add(stopwatch.totals);
                }
                total
            })
        });
        all.report(&name);
    }

    for mode in [Mode::None, Mode::Bwrap] {
        let dir = RunDir::new(Place::Disk, "http://127.0.0.1:9/v1");
        let sandbox = dir.sandbox(mode);
        assert_eq!(sandbox.run("true").unwrap().exit_code, 0);
        group.bench_function(format!("tool/{}", mode_name(mode)), |b| b.iter(|| sandbox.run("true").unwrap()));
    }

    let mut parts = Vec::new();
    for n in [10, 39] {
        let requests = checked_session(Place::Disk, Mode::None, n);
        assert_eq!(requests.len(), n + 1);
        let bash_requests = &requests[..n];
        let sizes: Vec<usize> = bash_requests.iter().map(|body| body.to_string().len()).collect();
        eprintln!(
            "round_trip/{n}: the bash turns' requests are {} to {} bytes of JSON, {} in all",
            sizes[0],
            sizes[n - 1],
            sizes.iter().sum::<usize>()
        );
        group.bench_function(format!("round_trip/{n}"), |b| {
            b.iter_batched(
                || {
                    let server = provider(n);
                    let client = Client::new(&ProviderConfig::new("openai", &server.base_url())).unwrap();
                    (server, client)
                },
                |(server, client)| {
                    for body in bash_requests {
                        let answer = client.complete(body, &mut |_| {}).unwrap();
                        assert_eq!(answer.message["tool_calls"][0]["function"]["name"], "bash");
                        black_box(answer);
                    }
                    (server, client)
                },
                BatchSize::PerIteration,
            )
        });
        parts.push((n, requests[n - 1].clone()));
    }
    group.finish();
    requests_parts(c, &parts);
}

/// The estimate of little's own time, each term timed in the same iteration one
/// after the other (a change in the machine's load between benchmarks, which moves the start
/// of a process here from 2 to over 100 ms, then stays out of the difference): a session of
/// N bash turns, less a session of the submission alone, less the same N requests' round
/// trips, less N runs of the tool. Reported per session; a sample whose sum is negative
/// counts as zero and is told.
fn own(c: &mut Criterion) {
    load("own");
    let mut group = c.benchmark_group("harness");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let cases = [
        (Place::Disk, Mode::None, 10),
        (Place::Tmpfs, Mode::None, 10),
        (Place::Disk, Mode::Bwrap, 10),
        (Place::Disk, Mode::None, 39),
    ];
    for (place, mode, n) in cases {
        let requests = checked_session(place, mode, n);
        let bash_requests = &requests[..n];
        let tool_dir = RunDir::new(place, "http://127.0.0.1:9/v1");
        let sandbox = tool_dir.sandbox(mode);
        let name = format!("own/{}/{}/{n}", place.name(), mode_name(mode));
        let mut negative = 0;
        let mut terms = [Duration::ZERO; 4];
        let mut runs = 0u32;
        group.bench_function(&name, |b| {
            b.iter_custom(|iterations| {
                let mut own = 0.0;
                for _ in 0..iterations {
                    let timed = |bash_turns| {
                        let (server, dir) = fresh(place, bash_turns);
                        let began = Instant::now();
                        dir.plan(mode, &mut Silent);
                        let elapsed = began.elapsed();
                        drop((server, dir));
                        elapsed
                    };
                    let session = timed(n);
                    let fixed = timed(0);
                    let server = provider(n);
                    let client = Client::new(&ProviderConfig::new("openai", &server.base_url())).unwrap();
                    let began = Instant::now();
                    for body in bash_requests {
                        black_box(client.complete(body, &mut |_| {}).unwrap());
                    }
                    let round_trips = began.elapsed();
                    drop((server, client));
                    let began = Instant::now();
                    for _ in 0..n {
                        black_box(sandbox.run("true").unwrap());
                    }
                    let tools = began.elapsed();
                    own +=
                        session.as_secs_f64() - fixed.as_secs_f64() - round_trips.as_secs_f64() - tools.as_secs_f64();
                    for (sum, term) in terms.iter_mut().zip([session, fixed, round_trips, tools]) {
                        *sum += term;
                    }
                    runs += 1;
                }
                if own < 0.0 {
                    negative += 1;
                }
                Duration::from_secs_f64(own.max(0.0))
            })
        });
        let mean = |d: Duration| d.as_secs_f64() * 1e3 / f64::from(runs.max(1));
        eprintln!(
            "{name}: over {runs} iterations, mean session {:.2} ms, submission alone {:.2} ms, round trips {:.2} ms, \
             tools {:.2} ms; {negative} samples negative",
            mean(terms[0]),
            mean(terms[1]),
            mean(terms[2]),
            mean(terms[3])
        );
    }
    group.finish();
}

/// What a turn does with its request besides sending it, on the request of turn N as the
/// session built it: the body built from the conversation (a copy of every message, dropped
/// after the call), its hash, and its fingerprint (a short hash of each part).
fn requests_parts(c: &mut Criterion, parts: &[(usize, Value)]) {
    let mut group = c.benchmark_group("harness");
    group.sample_size(50).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(2));
    for (n, body) in parts {
        let (model, tools) = (&body["model"], &body["tools"]);
        let messages: Vec<Value> = body["messages"].as_array().unwrap().clone();
        group.bench_function(format!("parts/request_body/turn_{n}"), |b| {
            b.iter(|| {
                json!({ "model": model, "messages": messages, "tools": tools, "tool_choice": "auto", "temperature": 0 })
            })
        });
        group.bench_function(format!("parts/request_hash/turn_{n}"), |b| {
            b.iter(|| little_pipeline::capabilities::hash(black_box(body)))
        });
        group.bench_function(format!("parts/fingerprint/turn_{n}"), |b| {
            b.iter(|| little_pipeline::harness::replay::fingerprint(black_box(body)))
        });
    }
    group.finish();
}

/// A finished run planned again: answered from its log.
fn replay(c: &mut Criterion) {
    load("replay");
    let mut group = c.benchmark_group("harness");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for turns in [1, 40] {
        let (server, dir) = fresh(Place::Disk, turns - 1);
        let recorded = dir.plan(Mode::None, &mut Silent);
        let calls = u32::try_from(turns).unwrap();
        assert_eq!((recorded.session.model_calls, recorded.session.tool_runs), (calls, calls));
        drop(server);
        let length = dir.event_count();
        // The provider is gone: a model call would fail the plan, and none is made.
        let replayed = dir.plan(Mode::None, &mut Silent);
        assert_eq!((replayed.session.model_calls, replayed.session.tool_runs), (0, 0), "nothing called, nothing run");
        assert_eq!((replayed.session.model_replayed, replayed.session.tool_replayed), (calls, calls));
        assert_eq!(replayed.registration.id(), recorded.registration.id());
        assert_eq!(dir.event_count(), length, "nothing appended");
        group.bench_function(format!("replay/{turns}"), |b| b.iter(|| dir.plan(Mode::None, &mut Silent)));
    }
    group.finish();
}

/// A session with its history in a file log on the disk and in PostgreSQL, side by side.
fn stores(c: &mut Criterion) {
    load("store");
    let mut group = c.benchmark_group("harness");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let database = std::env::var("LITTLE_TEST_POSTGRES_URL").ok().filter(|url| !url.is_empty());
    if database.is_none() {
        eprintln!("store/postgres: skipped: LITTLE_TEST_POSTGRES_URL is not set (scripts/postgres-server.sh start)");
    }
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let fresh_run = || format!("bench-{}-{}", std::process::id(), RUNS.fetch_add(1, Ordering::Relaxed));
    for n in [0, 10] {
        let server = provider(n);
        let file = || {
            let dir = RunDir::new(Place::Disk, &server.base_url());
            let store = little_pipeline::Store::file(dir.path("events.jsonl"));
            (dir, store)
        };
        group.bench_function(format!("store/file/{n}"), |b| {
            b.iter_batched(
                file,
                |(dir, store)| dir.plan_in(&store, RUN_ID, Mode::None, &mut Silent),
                BatchSize::PerIteration,
            )
        });
        if let Some(url) = &database {
            let dir = RunDir::new(Place::Disk, &server.base_url());
            let store = little_pipeline::Store {
                location: little_store::Location::parse(url).unwrap(),
                lease: little_pipeline::Store::DEFAULT_LEASE,
                work_dir: Some(dir.dir.clone()),
                on_event: None,
            };
            group.bench_function(format!("store/postgres/{n}"), |b| {
                b.iter_batched(
                    fresh_run,
                    |run| dir.plan_in(&store, &run, Mode::None, &mut Silent),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    if let Some(url) = &database {
        let (server, dir) = fresh(Place::Disk, 39);
        let store = little_pipeline::Store {
            location: little_store::Location::parse(url).unwrap(),
            lease: little_pipeline::Store::DEFAULT_LEASE,
            work_dir: Some(dir.dir.clone()),
            on_event: None,
        };
        let run = fresh_run();
        let recorded = dir.plan_in(&store, &run, Mode::None, &mut Silent);
        assert_eq!(recorded.session.model_calls, 40);
        drop(server);
        let replayed = dir.plan_in(&store, &run, Mode::None, &mut Silent);
        assert_eq!((replayed.session.model_calls, replayed.session.tool_runs), (0, 0), "nothing called, nothing run");
        group.bench_function("store/postgres/replay/40", |b| {
            b.iter(|| dir.plan_in(&store, &run, Mode::None, &mut Silent))
        });
    }
    group.finish();
}

criterion_group!(benches, turns, own, replay, fsync, stores);

/// The machine's load when a group starts: the figures are only as good as the quiet they ran in.
/// Also the benchmark's own resident memory: a large process forks slowly, and every tool
/// call forks.
fn load(what: &str) {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status.lines().find(|l| l.starts_with("VmRSS:")).map_or("", |l| l["VmRSS:".len()..].trim());
    eprintln!("{what}: load average {}, resident {rss}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
}

fn main() {
    assert!(on_tmpfs(Path::new("/dev/shm")), "the fsync-free figures need /dev/shm to be a tmpfs");
    assert!(!on_tmpfs(Path::new(env!("CARGO_TARGET_TMPDIR"))), "the disk figures need the target folder on a disk");
    load("start");
    benches();
    load("end");
    Criterion::default().configure_from_args().final_summary();
    for place in [Place::Disk, Place::Tmpfs] {
        let _ = std::fs::remove_dir_all(place.root());
    }
}
