//! Fixtures of the pipeline tests: a scratch folder per test with the worked example's
//! definition, input and LWIR, and scripted planners (POSIX sh).

#![allow(dead_code)] // each test file uses its own part

pub mod model;

use std::path::{Path, PathBuf};
use std::time::Duration;

use little_diagnostics::Code;
use little_pipeline::harness::Observer;
use little_pipeline::{Failure, HarnessOptions, PlanReport, PlanRequest, Planner};

pub fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-summarize-ticket").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A scratch folder holding `definition.json`, `input.json`, `lwir.json`; its runs keep
/// their history in `events.jsonl` there, or in a PostgreSQL database.
pub struct Scratch {
    pub dir: PathBuf,
    /// The database URL, when the runs' history is kept there.
    database: Option<String>,
    /// Whether the test wrote the log itself (an edited history need not be one little
    /// writes).
    tampered: std::cell::Cell<bool>,
}

/// The test server's URL (`scripts/postgres-server.sh start`), or `None` with a note
/// outside CI; in CI (`CI=true`) a missing server fails the test.
pub fn test_database(test: &str) -> Option<String> {
    match std::env::var("LITTLE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!("{test}: LITTLE_TEST_POSTGRES_URL is not set, and CI must test against PostgreSQL")
        }
        _ => {
            eprintln!("{test}: skipped: LITTLE_TEST_POSTGRES_URL is not set (scripts/postgres-server.sh start)");
            None
        }
    }
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        Scratch::with_database(name, None)
    }

    /// A scratch folder whose runs keep their history in the database `url`, under run ids
    /// of their own (`<folder>-<run id>`), their files in the folder.
    pub fn on_postgres(name: &str, url: String) -> Scratch {
        Scratch::with_database(name, Some(url))
    }

    fn with_database(name: &str, database: Option<String>) -> Scratch {
        let dir = std::env::temp_dir().join(format!("little-pipeline-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let scratch = Scratch { dir, database, tampered: std::cell::Cell::new(false) };
        scratch.write("definition.json", &example("definition.json"));
        scratch.write("input.json", &example("input.json"));
        scratch.write("lwir.json", &example("lwir.json"));
        scratch
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn write(&self, name: &str, text: &str) {
        if name == "events.jsonl" {
            self.tampered.set(true);
        }
        std::fs::write(self.path(name), text).unwrap();
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// A planner script that appends `attempt N` to `marker` each time it runs, then runs `body`.
    pub fn planner(&self, name: &str, body: &str) -> String {
        let script = format!(
            "#!/bin/sh\nset -eu\ndir='{}'\ntask=$(cat)\necho \"attempt $LITTLE_ATTEMPT\" >> \"$dir/{name}.marker\"\n{body}\n",
            self.dir.display()
        );
        self.write(&format!("{name}.sh"), &script);
        format!("sh '{}'", self.path(&format!("{name}.sh")).display())
    }

    /// The lines of a planner's marker file: one per run.
    pub fn runs(&self, name: &str) -> Vec<String> {
        self.read(&format!("{name}.marker")).lines().map(str::to_string).collect()
    }

    /// A planner that emits the valid LWIR at once.
    pub fn good_planner(&self) -> String {
        self.planner("good", "cat \"$dir/lwir.json\"")
    }

    /// A planner whose first draft names a model that is not a slot, and that repairs it
    /// from the findings in its task.
    pub fn repairing_planner(&self) -> String {
        self.planner(
            "repair",
            r#"if printf '%s' "$task" | grep -q '"code":"binding.model_not_permitted"'; then
  cat "$dir/lwir.json"
else
  sed 's/"gpt-4o-mini"/"gpt-4o"/g' "$dir/lwir.json"
fi"#,
        )
    }

    pub fn plan(&self, planner: &str, run_id: &str) -> Result<PlanReport, Failure> {
        self.plan_with(planner, run_id, "definition.json", "input.json", Duration::from_secs(60), 3)
    }

    pub fn plan_with(
        &self,
        planner: &str,
        run_id: &str,
        definition: &str,
        input: &str,
        timeout: Duration,
        max_attempts: u32,
    ) -> Result<PlanReport, Failure> {
        self.plan_cycle(planner, run_id, definition, None, timeout, max_attempts, input)
    }

    /// A plan of the cycle an outer-loop file (in the scratch folder) names; `None` is cycle 1.
    #[allow(clippy::too_many_arguments)]
    pub fn plan_cycle(
        &self,
        planner: &str,
        run_id: &str,
        definition: &str,
        outer_loop: Option<&str>,
        timeout: Duration,
        max_attempts: u32,
        input: &str,
    ) -> Result<PlanReport, Failure> {
        let (definition, input, events) =
            (self.path(definition), self.path(input), little_pipeline::Store::file(self.path("events.jsonl")));
        let outer_loop = outer_loop.map(|name| self.path(name));
        let request = PlanRequest {
            outer_loop: outer_loop.as_deref(),
            definition: &definition,
            input: &input,
            planner: Planner::External { command: planner, timeout },
            run_id,
            events: &events,
            max_attempts,
            lock_wait: Duration::ZERO,
        };
        little_pipeline::plan(&request, &mut Silent)
    }

    /// `little.toml` naming the scripted provider as `openai` (the example's planner provider).
    pub fn provider(&self, base_url: &str, stream: bool) -> PathBuf {
        self.write("little.toml", &format!("[providers.openai]\nbase_url = \"{base_url}\"\nstream = {stream}\n"));
        self.path("little.toml")
    }

    /// Harness options for this folder: its `little.toml`, a memory root inside it.
    pub fn harness_options(&self, config: &Path) -> HarnessOptions<'static> {
        let config: &'static Path = Box::leak(config.to_path_buf().into_boxed_path());
        let memory: &'static Path = Box::leak(self.path("memory").into_boxed_path());
        HarnessOptions {
            config: Some(config),
            sandbox: little_sandbox::Mode::Bwrap,
            tool_timeout: Duration::from_secs(30),
            max_turns: 10,
            max_tokens: None,
            memory_root: Some(memory),
            bounds: Default::default(),
            host: Default::default(),
        }
    }

    /// A plan with the built-in harness.
    pub fn plan_builtin(
        &self,
        run_id: &str,
        options: HarnessOptions<'_>,
        max_attempts: u32,
    ) -> Result<PlanReport, Failure> {
        let (definition, input, events) = (self.path("definition.json"), self.path("input.json"), self.store());
        let run_id = &self.run_id(run_id);
        let request = PlanRequest {
            outer_loop: None,
            definition: &definition,
            input: &input,
            planner: Planner::Harness(options),
            run_id,
            events: &events,
            max_attempts,
            lock_wait: Duration::ZERO,
        };
        little_pipeline::plan(&request, &mut Silent)
    }

    /// Where this folder's runs keep their history.
    pub fn store(&self) -> little_pipeline::Store {
        match &self.database {
            None => little_pipeline::Store::file(self.path("events.jsonl")),
            Some(url) => little_pipeline::Store {
                location: little_store::Location::parse(url).unwrap(),
                lease: little_pipeline::Store::DEFAULT_LEASE,
                work_dir: Some(self.dir.clone()),
                on_event: None,
            },
        }
    }

    /// The id a run of this folder has in its store: a database is shared by every test.
    pub fn run_id(&self, run_id: &str) -> String {
        match &self.database {
            None => run_id.to_string(),
            Some(_) => format!("{}-{run_id}", self.dir.file_name().unwrap().to_string_lossy()),
        }
    }

    /// The run's scratch directory (cycle 1).
    pub fn scratch_dir(&self, run_id: &str) -> PathBuf {
        self.dir.join(".little/runs").join(self.run_id(run_id)).join("cycle-1/scratch")
    }

    /// The events of a run.
    pub fn events(&self, run_id: &str) -> Vec<little_pipeline::events::Event> {
        let run = self.run_id(run_id);
        let mut events = Vec::new();
        little_store::scan(&self.store().location, Some(&run), |event| {
            events.push(event);
            Ok(())
        })
        .unwrap();
        events
    }

    /// Replaces the recorded events of a run with `events` (the test's edit of a history).
    pub fn rewrite_events(&self, run_id: &str, events: &[little_pipeline::events::Event]) {
        self.tampered.set(true);
        match &self.database {
            None => {
                let text: String = events.iter().map(|e| e.to_text() + "\n").collect();
                self.write("events.jsonl", &text);
            }
            Some(url) => {
                let run = self.run_id(run_id);
                let mut sql = format!("BEGIN; DELETE FROM little.events WHERE run_id = '{run}';\n");
                for event in events {
                    sql.push_str(&format!(
                        "INSERT INTO little.events (run_id, seq, kind, body) VALUES ('{run}', {}, '{}', $body${}$body$);\n",
                        event.seq,
                        event.kind,
                        event.to_text()
                    ));
                }
                sql.push_str("COMMIT;\n");
                let output = std::process::Command::new("psql")
                    .args([url.as_str(), "-v", "ON_ERROR_STOP=1", "-q", "-c", &sql])
                    .output()
                    .expect("psql runs");
                assert!(output.status.success(), "psql: {}", String::from_utf8_lossy(&output.stderr));
            }
        }
    }

    /// The event types of a run, in order.
    pub fn event_types(&self, run_id: &str) -> Vec<String> {
        little_pipeline::events::read(&self.path("events.jsonl"))
            .unwrap()
            .events
            .into_iter()
            .filter(|e| e.run_id == run_id)
            .map(|e| e.kind)
            .collect()
    }
}

/// Every event a test's sessions wrote to the folder's log follows the event schema
/// (`little schema event`), from which the packages' event types are generated: a field
/// the pipeline adds, drops or retypes fails the test that wrote it.
impl Drop for Scratch {
    fn drop(&mut self) {
        let log = self.path("events.jsonl");
        if std::thread::panicking() || self.tampered.get() || !log.exists() {
            return;
        }
        let validator = little_conformance::examples::schema_validator("event");
        for event in little_pipeline::events::read(&log).expect("the log reads").events {
            let json = event.to_json();
            let errors: Vec<String> =
                validator.iter_errors(&json).map(|e| format!("{}: {e}", e.instance_path())).collect();
            assert!(
                errors.is_empty(),
                "event {} ({}) of run {} does not follow schemas/event.schema.json: {errors:#?}\n{json:#}",
                event.seq,
                event.kind,
                event.run_id
            );
        }
    }
}

/// An observer that shows nothing.
pub struct Silent;

impl Observer for Silent {}

/// The codes of a blocked failure, in order; panics on success or a tool failure.
pub fn blocked_codes(result: Result<PlanReport, Failure>) -> Vec<Code> {
    match result {
        Err(Failure::Blocked(located)) => located.iter().flat_map(|l| &l.diagnostics).map(|d| d.code).collect(),
        Err(Failure::Tool(message)) => panic!("tool failure: {message}"),
        Err(Failure::Failed { reason, .. }) => panic!("failed: {reason}"),
        Err(Failure::Cancelled) => panic!("cancelled"),
        Ok(report) => panic!("registered {}", report.registration.id()),
    }
}

pub fn registered(result: Result<PlanReport, Failure>) -> PlanReport {
    match result {
        Ok(report) => report,
        Err(Failure::Blocked(located)) => panic!(
            "blocked: {:#?}",
            located.iter().flat_map(|l| &l.diagnostics).map(|d| (&d.code, &d.message, &d.path)).collect::<Vec<_>>()
        ),
        Err(Failure::Tool(message)) => panic!("tool failure: {message}"),
        Err(Failure::Failed { reason, .. }) => panic!("failed: {reason}"),
        Err(Failure::Cancelled) => panic!("cancelled"),
    }
}
