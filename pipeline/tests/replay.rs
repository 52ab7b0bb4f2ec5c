//! Replay per call (docs/reference/harness.md#replay-and-resume), proven by mutation: a session is recorded once; each
//! mutation changes one recorded part of one call in the log (keeping the log readable),
//! and resuming must then stop with exactly one `pipeline.replay_divergence` that names
//! that call and that part, having sent and run nothing. The unmutated log replays whole.
//! One suite, run against each store: the JSON Lines file and PostgreSQL (the server of
//! `LITTLE_TEST_POSTGRES_URL`; without it those say so and pass, except in CI).

mod common;

use common::model::{bash, good_lwir, scripted, submit};
use common::{Scratch, blocked_codes, registered};
use little_diagnostics::Code;
use little_pipeline::Failure;
use little_pipeline::events::{self, Event};
use serde_json::{Value, json};

/// Records a three-turn session (two bash calls, a submission) and returns the folder,
/// the log's lines and the server (kept alive to count requests).
fn recorded(s: Scratch) -> (Scratch, Vec<Event>, little_provider::testing::ScriptedServer, std::path::PathBuf) {
    let server = scripted(vec![bash("b1", "echo one"), bash("b2", "echo two >> marker"), submit("s1", good_lwir())]);
    let config = s.provider(&server.base_url(), true);
    let mut options = s.harness_options(&config);
    options.sandbox = little_sandbox::Mode::None;
    registered(s.plan_builtin("run_r", options, 3));
    let log = s.events("run_r");
    (s, log, server, config)
}

fn resume(s: &Scratch, config: &std::path::Path) -> Result<little_pipeline::PlanReport, Failure> {
    let mut options = s.harness_options(config);
    options.sandbox = little_sandbox::Mode::None;
    s.plan_builtin("run_r", options, 3)
}

fn write_log(s: &Scratch, events: &[Event]) {
    s.rewrite_events("run_r", events);
}

/// The folder of the running test, its history in `store`.
fn scratch(store: Store) -> Option<Scratch> {
    let name = format!("replay-{}", std::thread::current().name().unwrap_or("t").replace("::", "-"));
    match store {
        Store::File => Some(Scratch::new(&name)),
        Store::Postgres => common::test_database(&name).map(|url| Scratch::on_postgres(&name, url)),
    }
}

#[derive(Clone, Copy)]
enum Store {
    File,
    Postgres,
}

/// Each test of the suite, once a store.
macro_rules! against_each_store {
    ($($test:ident),* $(,)?) => {
        mod file {
            $(#[test] fn $test() { if let Some(s) = super::scratch(super::Store::File) { super::$test(s) } })*
        }
        mod postgres {
            $(#[test] fn $test() { if let Some(s) = super::scratch(super::Store::Postgres) { super::$test(s) } })*
        }
    };
}

against_each_store!(
    the_unmutated_log_replays_without_calling_anything,
    every_mutated_call_is_exactly_one_divergence_naming_it
);

/// One mutation: which event (by type and ordinal), what to change in its payload, and
/// what the diagnostic must name.
struct Mutation {
    name: &'static str,
    kind: &'static str,
    nth: usize,
    change: fn(&mut Value),
    names: &'static [&'static str],
    path: &'static str,
}

fn mutations() -> Vec<Mutation> {
    fn other_hash(payload: &mut Value) {
        payload["requestHash"] = json!(format!("sha256:{}", "0".repeat(64)));
    }
    vec![
        Mutation {
            name: "the model of turn 1",
            kind: events::MODEL_CALLED,
            nth: 0,
            change: |p| {
                other_hash(p);
                p["request"]["model"] = json!("0000000000000000");
            },
            names: &["turn 1"],
            path: "$.model",
        },
        Mutation {
            name: "the tools offered at turn 2",
            kind: events::MODEL_CALLED,
            nth: 1,
            change: |p| {
                other_hash(p);
                p["request"]["tools"] = json!("0000000000000000");
            },
            names: &["turn 2"],
            path: "$.tools",
        },
        Mutation {
            name: "the system message at turn 1",
            kind: events::MODEL_CALLED,
            nth: 0,
            change: |p| {
                other_hash(p);
                p["request"]["messages"][0] = json!("0000000000000000");
            },
            names: &["turn 1"],
            path: "$.messages[0]",
        },
        Mutation {
            name: "a tool result sent at turn 3",
            kind: events::MODEL_CALLED,
            nth: 2,
            change: |p| {
                other_hash(p);
                p["request"]["messages"][5] = json!("0000000000000000");
            },
            names: &["turn 3"],
            path: "$.messages[5]",
        },
        Mutation {
            name: "a request hash alone",
            kind: events::MODEL_CALLED,
            nth: 1,
            change: other_hash,
            names: &["turn 2", "recorded parts match"],
            path: "$",
        },
        Mutation {
            name: "the tool of call 2.1",
            kind: events::TOOL_STARTED,
            nth: 1,
            change: |p| p["tool"] = json!("validate_lwir"),
            names: &["tool call 2.1", "turn 2"],
            path: "$.tool",
        },
        Mutation {
            name: "the arguments of call 1.1",
            kind: events::TOOL_STARTED,
            nth: 0,
            change: |p| p["arguments"] = json!({ "command": "echo three" }),
            names: &["tool call 1.1", "turn 1"],
            path: "$.arguments",
        },
    ]
}

fn the_unmutated_log_replays_without_calling_anything(s: Scratch) {
    let (s, log, server, config) = recorded(s);
    let replayed = registered(resume(&s, &config));
    assert_eq!((replayed.session.model_calls, replayed.session.tool_runs), (0, 0));
    assert_eq!((replayed.session.model_replayed, replayed.session.tool_replayed), (3, 3));
    assert_eq!(server.request_count(), 3);
    assert_eq!(s.events("run_r"), log);
}

fn every_mutated_call_is_exactly_one_divergence_naming_it(s: Scratch) {
    let (s, log, server, config) = recorded(s);
    let marker = s.scratch_dir("run_r").join("marker");
    for mutation in mutations() {
        let mut events = log.clone();
        let event = events
            .iter_mut()
            .filter(|e| e.kind == mutation.kind)
            .nth(mutation.nth)
            .unwrap_or_else(|| panic!("{}: no such event", mutation.name));
        let seq = event.seq;
        (mutation.change)(&mut event.payload);
        write_log(&s, &events);
        let result = resume(&s, &config);
        let Err(Failure::Blocked(located)) = &result else { panic!("{}: {result:?}", mutation.name) };
        let diagnostics: Vec<_> = located.iter().flat_map(|l| &l.diagnostics).collect();
        assert_eq!(diagnostics.len(), 1, "{}", mutation.name);
        let d = diagnostics[0];
        assert_eq!(d.code, Code::PipelineReplayDivergence, "{}", mutation.name);
        assert_eq!(d.path.as_deref(), Some(mutation.path), "{}: {}", mutation.name, d.message);
        for name in mutation.names {
            assert!(d.message.contains(name), "{}: {}", mutation.name, d.message);
        }
        assert!(d.message.contains(&format!("event {seq} of the log")), "{}: {}", mutation.name, d.message);
        assert_eq!(server.request_count(), 3, "{}: nothing was sent", mutation.name);
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), "two\n", "{}: nothing was run", mutation.name);
        let last = s.events("run_r").pop().unwrap();
        assert_eq!(last.str("causeCode"), Some("replay_divergence"), "{}", mutation.name);
    }
    // And the codes of the whole run: the same single code each time.
    write_log(&s, &log);
    registered(resume(&s, &config));
    let mut events = log.clone();
    (mutations()[0].change)(&mut events.iter_mut().find(|e| e.kind == events::MODEL_CALLED).unwrap().payload);
    write_log(&s, &events);
    assert_eq!(blocked_codes(resume(&s, &config)), [Code::PipelineReplayDivergence]);
}
