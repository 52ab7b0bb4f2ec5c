//! The external planner's process and what it may put in the log: harness fields and call
//! ids, events the log cannot hold, the bound on stdout, and the side file that lets a
//! resume kill the process group an earlier `little` left running.

mod common;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::{Scratch, registered};
use little_pipeline::events::{self, SessionOf as _};
use little_pipeline::harness::Observer;
use little_pipeline::{Failure, PlanReport, PlanRequest, Planner};
use serde_json::{Value, json};

/// Keeps the notes (warnings, the planner's stderr) a run shows.
#[derive(Default)]
struct Notes(Vec<String>);

impl Observer for Notes {
    fn note(&mut self, message: &str) {
        self.0.push(message.to_string());
    }
}

fn plan(s: &Scratch, planner: &str, run_id: &str, timeout: Duration) -> (Result<PlanReport, Failure>, Vec<String>) {
    let (definition, input, log) =
        (s.path("definition.json"), s.path("input.json"), little_pipeline::Store::file(s.path("events.jsonl")));
    let request = PlanRequest {
        definition: &definition,
        input: &input,
        planner: Planner::External { command: planner, timeout },
        run_id,
        events: &log,
        max_attempts: 3,
        outer_loop: None,
        lock_wait: Duration::ZERO,
    };
    let mut notes = Notes::default();
    let result = little_pipeline::plan(&request, &mut notes);
    (result, notes.0)
}

fn tool_events(s: &Scratch, run_id: &str) -> Vec<events::Event> {
    s.events(run_id).into_iter().filter(|e| events::PLANNER_TOOL_EVENTS.contains(&e.kind.as_str())).collect()
}

/// `little-event` lines for a planner script, each echoed to stderr.
fn report(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("echo 'little-event {line}' >&2\n")).collect()
}

#[test]
fn harness_fields_a_planner_sets_are_the_harnesss_and_call_ids_are_numbered_per_attempt() {
    let s = Scratch::new("ext-fields");
    let forged = json!({
        "attempt": 99, "caller": "user", "cycle": 7, "turn": 3, "role": "fixer",
        "runId": "someone_else", "seq": 1, "plannerCallId": "forged",
    });
    let event = |kind: &str, call: Option<Value>, extra: Value| {
        let mut fields = forged.as_object().unwrap().clone();
        fields.insert("type".into(), json!(kind));
        fields.extend(extra.as_object().unwrap().clone());
        if let Some(call) = call {
            fields.insert("callId".into(), call);
        }
        Value::Object(fields)
    };
    let lines = [
        event(events::TOOL_STARTED, Some(json!("c1")), json!({"tool": "bash"})),
        event(events::TOOL_STARTED, Some(json!(7)), json!({"tool": "read"})),
        event(events::TOOL_SUCCEEDED, Some(json!("c1")), json!({"tool": "bash"})),
        event(events::TOOL_STARTED, None, json!({"tool": "anonymous"})),
        event(events::TOOL_FAILED, Some(json!(7)), json!({"tool": "read"})),
        event(events::TOOL_STARTED, Some(json!("7")), json!({"tool": "a string, not the number"})),
    ];
    // Attempt 1 is refused (a model that is not a slot), attempt 2 repairs it: the call ids
    // start again in each attempt.
    let planner = s.planner(
        "fields",
        &format!(
            r#"{}if printf '%s' "$task" | grep -q '"code":"binding.model_not_permitted"'; then
  cat "$dir/lwir.json"
else
  sed 's/"gpt-4o-mini"/"gpt-4o"/g' "$dir/lwir.json"
fi"#,
            report(&lines)
        ),
    );
    let (result, _) = plan(&s, &planner, "run_f", Duration::from_secs(60));
    assert_eq!(registered(result).attempt, 2);
    let recorded = tool_events(&s, "run_f");
    assert_eq!(recorded.len(), 12);
    let seen: Vec<(u64, &str, Option<&Value>)> = recorded
        .iter()
        .map(|e| (e.attempt().unwrap(), e.str("callId").unwrap(), e.payload.get("plannerCallId")))
        .collect();
    let ids = ["1", "2", "1", "3", "2", "4"];
    let planner_ids = [Some(json!("c1")), Some(json!(7)), Some(json!("c1")), None, Some(json!(7)), Some(json!("7"))];
    let expected: Vec<(u64, String, Option<Value>)> = (1..=2)
        .flat_map(|attempt| {
            ids.iter().zip(&planner_ids).map(move |(n, p)| (attempt, format!("a{attempt}.{n}"), p.clone()))
        })
        .collect();
    assert_eq!(
        seen,
        expected.iter().map(|(a, id, p)| (*a, id.as_str(), p.as_ref())).collect::<Vec<_>>(),
        "each distinct planner call id is a call; an event without one is a call of its own"
    );
    for event in &recorded {
        assert_eq!(event.run_id, "run_f");
        assert_eq!(event.payload["caller"], "model", "{event:?}");
        assert_eq!(event.payload["cycle"], 1, "{event:?}");
        assert_eq!(event.payload["role"], "planner", "{event:?}");
        assert_eq!(event.payload.get("turn"), None, "{event:?}");
        assert_eq!(event.payload.get("runId"), None, "{event:?}");
        assert_eq!(event.payload.get("seq"), None, "{event:?}");
        assert_ne!(event.payload.get("plannerCallId"), Some(&json!("forged")), "{event:?}");
    }
    // The run's seq is the harness's, whatever a planner says.
    let seqs: Vec<u64> = s.events("run_f").iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

#[test]
fn an_attempt_run_again_goes_on_numbering_its_calls() {
    let s = Scratch::new("ext-rerun");
    let started = report(&[json!({"type": events::TOOL_STARTED, "callId": "c1", "tool": "bash"})]);
    // The first run reports a call and hangs past the limit; the second reports the same
    // planner call id again and answers.
    let planner = s.planner(
        "rerun",
        &format!("{started}if [ -e \"$dir/answer\" ]; then cat \"$dir/lwir.json\"; else sleep 30; fi"),
    );
    let (result, _) = plan(&s, &planner, "run_r", Duration::from_millis(1500));
    assert!(matches!(result, Err(Failure::Tool(_))));
    s.write("answer", "");
    let (result, _) = plan(&s, &planner, "run_r", Duration::from_secs(60));
    registered(result);
    let ids: Vec<String> = tool_events(&s, "run_r").iter().map(|e| e.str("callId").unwrap().to_string()).collect();
    assert_eq!(ids, ["a1.1", "a1.2"], "a call id names one call of the run");
}

/// A JSON array nested `depth` deep.
fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn an_event_the_log_cannot_hold_is_refused_with_a_warning_and_the_run_goes_on() {
    let s = Scratch::new("ext-deep");
    let deep =
        format!(r#"{{"type":"harness.tool_call.started","callId":"deep","tool":"bash","arguments":{}}}"#, nested(126));
    // The same event within the bound (the payload adds one level) is recorded.
    let fine = format!(
        r#"{{"type":"harness.tool_call.started","callId":"fine","tool":"bash","arguments":{}}}"#,
        nested(events::MAX_DEPTH - 1)
    );
    s.write("deep.txt", &format!("little-event {deep}\nlittle-event {fine}\n"));
    let planner = s.planner("deep", r#"cat "$dir/deep.txt" >&2; cat "$dir/lwir.json""#);
    let (result, notes) = plan(&s, &planner, "run_deep", Duration::from_secs(60));
    registered(result);
    let warnings: Vec<&String> = notes.iter().filter(|n| n.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{notes:?}");
    assert!(warnings[0].contains("was not recorded") && warnings[0].contains("nested deeper"), "{notes:?}");
    let recorded = tool_events(&s, "run_deep");
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].payload["plannerCallId"], "fine");
    assert_eq!(events::depth(&recorded[0].payload), events::MAX_DEPTH);
    // The log reads back, and the run resumes from it.
    assert_eq!(s.events("run_deep").last().unwrap().kind, events::VERSION_REGISTERED);
    let (again, _) = plan(&s, &planner, "run_deep", Duration::from_secs(60));
    assert_eq!(registered(again).planner_runs, 0);
}

#[test]
fn stdout_past_16_mib_fails_the_attempt_and_nothing_of_it_is_recorded() {
    let s = Scratch::new("ext-huge");
    let planner = s.planner("huge", &format!("head -c {} /dev/zero | tr '\\0' x", (16 << 20) + 1));
    let (result, _) = plan(&s, &planner, "run_huge", Duration::from_secs(120));
    let Err(Failure::Tool(message)) = result else { panic!("expected a tool failure") };
    assert!(message.contains("more than 16 MiB on stdout in attempt 1"), "{message}");
    assert_eq!(s.event_types("run_huge"), [events::SESSION_STARTED, events::MODEL_CALLED, events::MODEL_FAILED]);
    let failed = s.events("run_huge").pop().unwrap();
    assert_eq!(failed.payload["reason"], "wrote more than 16 MiB on stdout");
    let size = std::fs::metadata(s.path("events.jsonl")).unwrap().len();
    assert!(size < 16 * 1024, "the log holds nothing of the output: {size} bytes");
    // Exactly 16 MiB is an output (that does not validate: it is not JSON).
    let s = Scratch::new("ext-16mib");
    let planner = s.planner("full", &format!("head -c {} /dev/zero | tr '\\0' x", 16 << 20));
    let (result, _) = plan(&s, &planner, "run_full", Duration::from_secs(120));
    assert!(matches!(result, Err(Failure::Blocked(_))));
    let _ = std::fs::remove_dir_all(&s.dir); // three 16 MiB attempts in the log
}

/// A process's group, session and start time, as `/proc/PID/stat` says.
fn stat(pid: u32) -> Option<(i64, i64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = text[text.rfind(')')? + 2..].split(' ').collect();
    if fields[0] == "Z" {
        return None; // a zombie is dead
    }
    Some((fields[2].parse().ok()?, fields[3].parse().ok()?, fields[19].parse().ok()?))
}

fn alive(pid: u32) -> bool {
    stat(pid).is_some()
}

/// Waits up to 10 s for a process to die.
fn dies(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn kill(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

/// Kills, when the test ends (passed or not), the processes it left running on purpose.
struct Reaper(Vec<u32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        self.0.iter().filter(|pid| alive(**pid)).for_each(|pid| kill(*pid));
    }
}

fn record_path(s: &Scratch, run_id: &str) -> std::path::PathBuf {
    s.dir.join(".little/runs").join(run_id).join("processes")
}

fn canonical_log(s: &Scratch) -> String {
    std::fs::canonicalize(s.path("events.jsonl")).unwrap().display().to_string()
}

#[test]
fn the_planner_records_its_group_while_it_runs_and_the_record_is_cleared_after() {
    let s = Scratch::new("ext-record");
    let planner = s.planner(
        "record",
        r#"cp "$dir/.little/runs/$LITTLE_RUN_ID/processes" "$dir/seen"
leader=$(cut -d' ' -f5 /proc/$$/stat)
cut -d' ' -f1,6,22 /proc/$leader/stat > "$dir/stat"
cat "$dir/lwir.json""#,
    );
    let (result, _) = plan(&s, &planner, "run_rec", Duration::from_secs(60));
    registered(result);
    let seen: Value = serde_json::from_str(&s.read("seen")).unwrap();
    // The leader of the planner's group (`sh -c CMD`), its session and its start time.
    let leader: Vec<u64> = s.read("stat").split_whitespace().map(|n| n.parse().unwrap()).collect();
    assert_eq!(seen, json!({ "log": canonical_log(&s), "pgid": leader[0], "sid": leader[1], "startTime": leader[2] }));
    assert!(!record_path(&s, "run_rec").exists(), "cleared once the planner's group is gone");
}

/// A process group of the test's own, as a killed `little` would leave it: its leader
/// (`sh`) runs `body`.
fn group(body: &str) -> Child {
    use std::os::unix::process::CommandExt;
    Command::new("sh").args(["-c", body]).process_group(0).spawn().unwrap()
}

fn write_record(s: &Scratch, run_id: &str, log: &str, pgid: u32, sid: i64, start: u64) {
    std::fs::create_dir_all(s.dir.join(".little/runs").join(run_id)).unwrap();
    let record = json!({ "log": log, "pgid": pgid, "sid": sid, "startTime": start });
    std::fs::write(record_path(s, run_id), format!("{record}\n")).unwrap();
}

/// Waits up to 10 s for a child of the test to end, and reaps it.
fn ends(child: &mut Child) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_resume_kills_the_group_an_earlier_little_left_running_and_nothing_else() {
    let s = Scratch::new("ext-leftover");
    s.write("other.jsonl", "");
    let planner = s.good_planner();
    // The log exists from here on (its canonical path names it in a record).
    registered(plan(&s, &planner, "run_first", Duration::from_secs(60)).0);
    let mut reaper = Reaper(Vec::new());
    let member = |name: &str| -> u32 {
        let until = Instant::now() + Duration::from_secs(10);
        while s.read(name).trim().is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        s.read(name).trim().parse().unwrap()
    };

    // A live leader with the recorded start time: its whole group is killed.
    let mut leader = group(&format!("sleep 1000 & echo $! > '{}'; wait", s.path("live").display()));
    let live = member("live");
    reaper.0.push(live); // the leader, the test's child, ends with it
    let (_, sid, start) = stat(leader.id()).unwrap();
    write_record(&s, "run_live", &canonical_log(&s), leader.id(), sid, start);
    let (result, notes) = plan(&s, &planner, "run_live", Duration::from_secs(60));
    registered(result);
    assert!(ends(&mut leader), "the leader was killed");
    assert!(dies(live), "and its group");
    assert!(notes.iter().any(|n| n.contains(&format!("left running (process group {})", leader.id()))), "{notes:?}");
    assert!(!record_path(&s, "run_live").exists());

    // The leader gone (as `PR_SET_PDEATHSIG` ends it with a killed `little`), a member of
    // its group left: the member is killed.
    let mut leader = group(&format!(
        "sleep 1000 & echo $! > '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        s.path("orphan").display(),
        s.path("go").display()
    ));
    let orphan = member("orphan");
    reaper.0.push(orphan);
    let (_, sid, start) = stat(leader.id()).unwrap();
    s.write("go", "");
    assert!(ends(&mut leader));
    assert!(alive(orphan));
    write_record(&s, "run_orphan", &canonical_log(&s), leader.id(), sid, start);
    let (result, notes) = plan(&s, &planner, "run_orphan", Duration::from_secs(60));
    registered(result);
    assert!(dies(orphan), "the group outlived its leader, and was killed: {notes:?}");
    assert!(!record_path(&s, "run_orphan").exists());

    // Another start time: the pid is another process's now. Another log: not this run's.
    let mut other = group(&format!("sleep 1000 & echo $! > '{}'; wait", s.path("other").display()));
    let other_member = member("other");
    reaper.0.extend([other.id(), other_member]);
    let (_, sid, start) = stat(other.id()).unwrap();
    write_record(&s, "run_reused", &canonical_log(&s), other.id(), sid, start + 1);
    registered(plan(&s, &planner, "run_reused", Duration::from_secs(60)).0);
    assert!(alive(other.id()) && alive(other_member), "a reused pid is not killed");
    assert!(!record_path(&s, "run_reused").exists(), "the stale record is cleared");
    let elsewhere = std::fs::canonicalize(s.path("other.jsonl")).unwrap().display().to_string();
    write_record(&s, "run_elsewhere", &elsewhere, other.id(), sid, start);
    registered(plan(&s, &planner, "run_elsewhere", Duration::from_secs(60)).0);
    assert!(alive(other.id()) && alive(other_member), "another log's planner is not killed");
    drop(reaper);
    let _ = other.wait();
}
