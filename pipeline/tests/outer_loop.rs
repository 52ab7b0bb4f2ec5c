//! Later outer-loop cycles: the manifest's `outerLoopContextHash`, the PlanTask's
//! `outerLoopContext`, one session per cycle in a shared log (resume, drift), and the
//! outer-loop file's validation.

mod common;

use std::time::Duration;

use common::{Scratch, registered};
use little_diagnostics::Code;
use little_pipeline::Failure;
use little_pipeline::events::{self, SessionOf as _};
use serde_json::{Value, json};

/// A scratch folder whose definition allows three outer-loop cycles.
fn three_cycles(name: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write(
        "definition.json",
        &common::example("definition.json").replace(r#""maxOuterCycles": 1"#, r#""maxOuterCycles": 3"#),
    );
    s
}

fn prior_cycles(n: u64) -> Value {
    Value::Array(
        (1..=n)
            .map(|i| {
                json!({ "cycleNumber": i, "status": "failed", "output": { "summary": format!("try {i}") },
                             "summary": "the severity was missing" })
            })
            .collect(),
    )
}

fn write_outer_loop(s: &Scratch, name: &str, cycle: u64) {
    let document = json!({ "cycleNumber": cycle, "priorCycles": prior_cycles(cycle - 1) });
    s.write(name, &serde_json::to_string_pretty(&document).unwrap());
}

/// A planner that keeps its task as `task-<cycle>.json` and marks its LWIR with the cycle,
/// so each cycle's registered version is its own.
fn cycle_planner(s: &Scratch) -> String {
    s.planner(
        "cycles",
        r#"printf '%s' "$task" > "$dir/task-$LITTLE_CYCLE.json"
echo "cycle $LITTLE_CYCLE" >> "$dir/cycles.marker"
sed "s/and classify severity\./and classify severity (cycle $LITTLE_CYCLE)./" "$dir/lwir.json""#,
    )
}

fn plan(
    s: &Scratch,
    planner: &str,
    run_id: &str,
    outer_loop: Option<&str>,
) -> Result<little_pipeline::PlanReport, Failure> {
    s.plan_cycle(planner, run_id, "definition.json", outer_loop, Duration::from_secs(60), 3, "input.json")
}

fn tool_failure(result: Result<little_pipeline::PlanReport, Failure>) -> String {
    match result {
        Err(Failure::Tool(message)) => message,
        Err(Failure::Blocked(located)) => panic!("blocked: {:?}", located[0].diagnostics),
        Err(Failure::Failed { reason, .. }) => panic!("failed: {reason}"),
        Err(Failure::Cancelled) => panic!("cancelled"),
        Ok(_) => panic!("registered"),
    }
}

#[test]
fn only_a_later_cycle_manifest_carries_the_hash_of_its_prior_cycles() {
    let s = three_cycles("manifest");
    write_outer_loop(&s, "cycle2.json", 2);
    write_outer_loop(&s, "cycle3.json", 3);
    let first = little_pipeline::capabilities_for_cycle(&s.path("definition.json"), None).unwrap();
    assert!(first.manifest.get("outerLoopContextHash").is_none(), "{}", first.manifest);
    let second =
        little_pipeline::capabilities_for_cycle(&s.path("definition.json"), Some(&s.path("cycle2.json"))).unwrap();
    let expected = little_hashing::hash_canonical(&prior_cycles(1)).unwrap();
    assert_eq!(second.manifest["outerLoopContextHash"], expected);
    // Apart from the context hash, cycle 2's manifest is cycle 1's.
    let mut without = second.manifest.clone();
    without.as_object_mut().unwrap().remove("outerLoopContextHash");
    assert_eq!(without, first.manifest);
    assert_eq!(second.manifest_hash, little_hashing::hash_canonical(&second.manifest).unwrap());
    let third =
        little_pipeline::capabilities_for_cycle(&s.path("definition.json"), Some(&s.path("cycle3.json"))).unwrap();
    let hashes = [&first.manifest_hash, &second.manifest_hash, &third.manifest_hash];
    assert!(hashes[0] != hashes[1] && hashes[1] != hashes[2] && hashes[0] != hashes[2], "{hashes:?}");
}

#[test]
fn the_planner_of_a_later_cycle_is_told_its_prior_cycles() {
    let s = three_cycles("task");
    write_outer_loop(&s, "cycle2.json", 2);
    let planner = cycle_planner(&s);
    registered(plan(&s, &planner, "run_task", None));
    registered(plan(&s, &planner, "run_task", Some("cycle2.json")));
    let first: Value = serde_json::from_str(&s.read("task-1.json")).unwrap();
    assert!(first.get("outerLoopContext").is_none(), "{first}");
    let second: Value = serde_json::from_str(&s.read("task-2.json")).unwrap();
    assert_eq!(
        second["outerLoopContext"],
        json!({ "cycleNumber": 2, "maxCycles": 3, "isFinalCycle": false, "priorCycles": prior_cycles(1) })
    );
    assert_eq!(second["kind"], "plan");
    // The final cycle says so.
    write_outer_loop(&s, "cycle3.json", 3);
    registered(plan(&s, &planner, "run_task", Some("cycle3.json")));
    let third: Value = serde_json::from_str(&s.read("task-3.json")).unwrap();
    assert_eq!(third["outerLoopContext"]["isFinalCycle"], true);
    assert_eq!(third["outerLoopContext"]["priorCycles"], prior_cycles(2));
}

#[test]
fn two_cycles_share_a_log_and_each_resume_replays_its_own_session() {
    let s = three_cycles("two-cycles");
    write_outer_loop(&s, "cycle2.json", 2);
    let planner = cycle_planner(&s);
    let one = registered(plan(&s, &planner, "run_oc", None));
    let two = registered(plan(&s, &planner, "run_oc", Some("cycle2.json")));
    assert_eq!(s.runs("cycles"), ["attempt 1", "cycle 1", "attempt 1", "cycle 2"]);
    assert_ne!(one.registration.hash(), two.registration.hash(), "each cycle registered its own LWIR");

    let log = events::read(&s.path("events.jsonl")).unwrap().events;
    let sessions: Vec<(u64, &str)> = log
        .iter()
        .filter(|e| e.kind == events::SESSION_STARTED)
        .map(|e| (e.cycle(), e.str("manifestHash").unwrap()))
        .collect();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0].0, 1);
    assert_eq!(sessions[1].0, 2);
    assert_ne!(sessions[0].1, sessions[1].1);
    assert_eq!(log.iter().filter(|e| e.kind == events::VERSION_REGISTERED).count(), 2);
    let length = log.len();

    // Resuming cycle 2 replays cycle 2's LWIR (not cycle 1's), without the planner.
    let again_two = registered(plan(&s, &planner, "run_oc", Some("cycle2.json")));
    assert_eq!(again_two.planner_runs, 0);
    assert_eq!(again_two.registration, two.registration);
    // Resuming cycle 1 after cycle 2 still replays cycle 1.
    let again_one = registered(plan(&s, &planner, "run_oc", None));
    assert_eq!(again_one.planner_runs, 0);
    assert_eq!(again_one.registration, one.registration);
    assert_eq!(s.runs("cycles").len(), 4, "the planner did not run again");
    assert_eq!(events::read(&s.path("events.jsonl")).unwrap().events.len(), length, "nothing appended");
}

#[test]
fn a_log_written_before_cycles_were_recorded_is_cycle_one() {
    let s = three_cycles("legacy");
    write_outer_loop(&s, "cycle2.json", 2);
    let planner = cycle_planner(&s);
    let one = registered(plan(&s, &planner, "run_old", None));
    // Strip every `cycle` field, as an older `little plan` wrote the log.
    let lines: Vec<String> = s
        .read("events.jsonl")
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).unwrap();
            assert!(event["payload"].as_object_mut().unwrap().remove("cycle").is_some(), "{line}");
            serde_json::to_string(&event).unwrap()
        })
        .collect();
    s.write("events.jsonl", &(lines.join("\n") + "\n"));
    let replayed = registered(plan(&s, &planner, "run_old", None));
    assert_eq!(replayed.planner_runs, 0);
    assert_eq!(replayed.registration, one.registration);
    // Cycle 2 is a new session next to it.
    let two = registered(plan(&s, &planner, "run_old", Some("cycle2.json")));
    assert_eq!(two.planner_runs, 1);
    assert_ne!(two.registration, one.registration);
}

#[test]
fn a_changed_prior_cycle_on_resume_is_drift_of_that_cycle() {
    let s = three_cycles("drift");
    write_outer_loop(&s, "cycle2.json", 2);
    let planner = cycle_planner(&s);
    registered(plan(&s, &planner, "run_dr", None));
    registered(plan(&s, &planner, "run_dr", Some("cycle2.json")));
    let changed = s.read("cycle2.json").replace("the severity was missing", "the summary was too long");
    s.write("cycle2.json", &changed);
    let Err(Failure::Blocked(located)) = plan(&s, &planner, "run_dr", Some("cycle2.json")) else {
        panic!("expected drift")
    };
    let d = &located[0].diagnostics[0];
    assert_eq!(d.code, Code::PipelineCapabilityDrift);
    assert!(d.message.contains("cycle 2"), "{}", d.message);
    assert!(d.message.contains("outerLoopContextHash: sha256:"), "{}", d.message);
    assert!(!d.message.contains("globalToolsHash"), "{}", d.message);
    assert!(d.help.as_deref().unwrap().contains("--outer-loop"), "{:?}", d.help);
    assert_eq!(s.runs("cycles").len(), 4, "the planner did not run");
    let last = events::read(&s.path("events.jsonl")).unwrap().events.pop().unwrap();
    assert_eq!((last.kind.as_str(), last.cycle()), (events::RUN_FAILED, 2));
    // Cycle 1 of the same run is untouched by cycle 2's drift.
    assert_eq!(registered(plan(&s, &planner, "run_dr", None)).planner_runs, 0);
}

#[test]
fn a_later_cycle_with_another_input_is_refused() {
    let s = three_cycles("input");
    write_outer_loop(&s, "cycle2.json", 2);
    s.write("other-input.json", r#"{ "ticketId": "T-9", "transcript": "x" }"#);
    let planner = cycle_planner(&s);
    registered(plan(&s, &planner, "run_in", None));
    let result = s.plan_cycle(
        &planner,
        "run_in",
        "definition.json",
        Some("cycle2.json"),
        Duration::from_secs(60),
        3,
        "other-input.json",
    );
    let message = tool_failure(result);
    assert!(message.contains("another input"), "{message}");
}

/// The error for an outer-loop file with `text`, which must not touch the log.
fn refused(s: &Scratch, text: &str) -> String {
    s.write("bad.json", text);
    let message = tool_failure(plan(s, &cycle_planner(s), "run_bad", Some("bad.json")));
    assert!(s.read("events.jsonl").is_empty(), "a bad argument is refused before the log: {message}");
    assert!(s.runs("cycles").is_empty());
    message
}

#[test]
fn bad_outer_loop_files_are_refused_with_their_place() {
    let s = three_cycles("bad");
    let bad = s.path("bad.json").display().to_string();
    let cases: &[(&str, &str)] = &[
        ("{ \"cycleNumber\": 2,", "is not valid JSON"),
        ("[]", ":1:1: $: the outer-loop file must be an object, found array"),
        (r#"{ "priorCycles": [] }"#, ":1:1: $: the outer-loop file has no `cycleNumber`"),
        (r#"{ "cycleNumber": "2", "priorCycles": [] }"#, "$.cycleNumber: `cycleNumber` must be a positive integer"),
        (r#"{ "cycleNumber": 1, "priorCycles": [] }"#, "cycle 1 is not a later cycle"),
        (r#"{ "cycleNumber": 2, "priorCycle": [] }"#, "unknown key `priorCycle`"),
        (r#"{ "cycleNumber": 2, "priorCycles": {} }"#, "$.priorCycles: `priorCycles` must be an array, found object"),
        (r#"{ "cycleNumber": 3, "priorCycles": [] }"#, "cycle 3 follows 2 prior cycle(s) (1..=2), found 0"),
        (
            r#"{ "cycleNumber": 3, "priorCycles": [
  { "cycleNumber": 2, "status": "failed", "output": null },
  { "cycleNumber": 1, "status": "failed", "output": null } ] }"#,
            ":2:20: $.priorCycles[0].cycleNumber: prior cycles are numbered 1..=2 in order: expected 1, found 2",
        ),
        (
            r#"{ "cycleNumber": 2, "priorCycles": [{ "cycleNumber": 1, "output": 1 }] }"#,
            "prior cycle 1 has no `status`",
        ),
        (
            r#"{ "cycleNumber": 2, "priorCycles": [{ "cycleNumber": 1, "status": "" , "output": 1 }] }"#,
            "$.priorCycles[0].status: `status` must be a non-empty string",
        ),
        (r#"{ "cycleNumber": 2, "priorCycles": [{ "cycleNumber": 1, "status": "ok" }] }"#, "has no `output`"),
        (
            r#"{ "cycleNumber": 2, "priorCycles": [{ "cycleNumber": 1, "status": "ok", "output": 1, "summary": 3 }] }"#,
            "$.priorCycles[0].summary: `summary` must be a string, found number",
        ),
        (
            r#"{ "cycleNumber": 2, "priorCycles": [{ "cycleNumber": 1, "status": "ok", "output": 1, "sumary": "" }] }"#,
            "unknown key `sumary` in prior cycle 1; did you mean `summary`?",
        ),
    ];
    for (text, expected) in cases {
        let message = refused(&s, text);
        assert!(message.starts_with(&bad), "{message}");
        assert!(message.contains(expected), "{text}\n→ {message}\nexpected: {expected}");
    }
}

#[test]
fn a_cycle_past_max_outer_cycles_is_refused() {
    let s = three_cycles("past");
    let message =
        refused(&s, &serde_json::to_string(&json!({ "cycleNumber": 4, "priorCycles": prior_cycles(3) })).unwrap());
    assert!(message.contains("cycle 4 is past the definition's `maxOuterCycles` (3)"), "{message}");
    // A definition with a single cycle has no later one.
    let one = Scratch::new("past-one");
    write_outer_loop(&one, "cycle2.json", 2);
    let message = tool_failure(plan(&one, &one.good_planner(), "run_p", Some("cycle2.json")));
    assert!(message.contains("past the definition's `maxOuterCycles` (1)"), "{message}");
    assert!(one.runs("good").is_empty());
}
