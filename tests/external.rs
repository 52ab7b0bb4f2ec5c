//! `little plan --planner` and `little events` as a user runs them, on what an outside
//! tester tried: a planner that holds its pipes past the time limit, `little` killed or
//! interrupted mid-attempt, a log write that fails, huge output on stdout and stderr,
//! events the log cannot hold, files that are not logs, edited logs, two runs on one log,
//! and a large log shown in bounded memory.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{Run, little, little_in};

fn example(name: &str) -> PathBuf {
    common::worked_example(name)
}

fn scratch(name: &str) -> PathBuf {
    common::fresh_dir("little-cli-external", name)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// A planner script in `dir` running `body` (`$dir` is the folder, `$lwir` the example's
/// valid LWIR); the command that runs it.
fn planner(dir: &Path, name: &str, body: &str) -> String {
    let script = format!("#!/bin/sh\ndir='{}'\nlwir='{}'\n{body}\n", dir.display(), example("lwir.json").display());
    let path = dir.join(format!("{name}.sh"));
    std::fs::write(&path, script).unwrap();
    format!("sh '{}'", path.display())
}

fn plan_args(dir: &Path, planner: &str, run_id: &str, extra: &[&str]) -> Vec<String> {
    common::external_plan_args(dir, planner, run_id, extra)
}

/// `little` started in the background, its output in files of `dir`.
fn spawn(dir: &Path, args: &[String], name: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_little"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join(format!("{name}.out"))).unwrap())
        .stderr(std::fs::File::create(dir.join(format!("{name}.err"))).unwrap())
        .spawn()
        .expect("the little binary runs")
}

/// Waits for a file to hold a line (a pid a planner wrote), up to 30 s.
fn wait_for(path: &Path) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let text = read(path);
        if text.ends_with('\n') {
            return text.trim().to_string();
        }
        assert!(Instant::now() < until, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn pid_in(path: &Path) -> u32 {
    wait_for(path).parse().unwrap()
}

/// Whether a process is running (a zombie is not).
fn alive(pid: u32) -> bool {
    read(Path::new(&format!("/proc/{pid}/stat"))).rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

/// Waits up to 10 s for a process to end.
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

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

/// Ends a process a test left behind on purpose.
struct Reaper(Vec<u32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for pid in &self.0 {
            if alive(*pid) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
    }
}

/// Waits for a child, polling its peak memory (`VmHWM` of `/proc/PID/status`, in KiB).
fn wait_measuring(mut child: Child) -> (ExitStatus, u64) {
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        for line in read(Path::new(&status_path)).lines() {
            if let Some(kib) = line.strip_prefix("VmHWM:") {
                peak = peak.max(kib.trim().trim_end_matches("kB").trim().parse().unwrap_or(0));
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            eprintln!("peak resident memory: {} MiB", peak / 1024);
            return (status, peak);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn events_of(dir: &Path) -> Run {
    little(["events", &dir.join("events.jsonl").display().to_string(), "--format", "json"])
}

fn event_types(dir: &Path, run_id: &str) -> Vec<String> {
    let run = events_of(dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["runId"] == run_id)
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_planner_holding_its_pipes_from_another_session_cannot_stall_the_time_limit() {
    let dir = scratch("setsid");
    let mut reaper = Reaper(Vec::new());
    // It hangs, and its `setsid` child (out of its process group) holds stdout open.
    let hang = planner(&dir, "hang", "setsid sleep 1000 &\necho $! > \"$dir/escaped\"\nsleep 1000");
    let started = Instant::now();
    let run = little(plan_args(&dir, &hang, "run_hang", &["--timeout", "2s"]));
    let took = started.elapsed();
    reaper.0.push(pid_in(&dir.join("escaped")));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("did not finish attempt 1 within 2s"), "{}", run.stderr);
    assert!(took < Duration::from_secs(8), "the time limit is a time limit: {took:?}");

    // It answers and exits, its `setsid` child still holding stdout: the answer counts.
    let answer = planner(&dir, "answer", "setsid sleep 1000 &\necho $! > \"$dir/escaped2\"\ncat \"$lwir\"");
    let started = Instant::now();
    let run = little(plan_args(&dir, &answer, "run_answer", &["--timeout", "60s"]));
    reaper.0.push(pid_in(&dir.join("escaped2")));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
}

/// A planner that records the leader of its process group (`sh -c CMD`), its script's
/// shell and a child, then waits; run again (the file `again` exists) it answers at once.
fn waiting_planner(dir: &Path) -> String {
    planner(
        dir,
        "waits",
        "if [ -e \"$dir/again\" ]; then cat \"$lwir\"; exit 0; fi\n\
         sleep 1000 &\necho $! > \"$dir/child\"\necho $$ > \"$dir/script\"\n\
         cut -d' ' -f5 /proc/$$/stat > \"$dir/leader\"\nwait",
    )
}

/// The pids `waiting_planner` wrote: its group's leader, its script's shell, its child.
fn planner_pids(dir: &Path) -> [u32; 3] {
    ["leader", "script", "child"].map(|name| pid_in(&dir.join(name)))
}

#[test]
fn sigterm_and_ctrl_c_of_little_end_the_planner_and_its_children() {
    for name in ["TERM", "INT"] {
        let dir = scratch(&format!("signal-{name}"));
        let planner = waiting_planner(&dir);
        let mut little = spawn(&dir, &plan_args(&dir, &planner, "run_s", &[]), "plan");
        let pids = planner_pids(&dir);
        let _reaper = Reaper(pids.to_vec());
        signal(little.id(), name);
        let status = little.wait().unwrap();
        assert!(!status.success(), "{name}: {status:?}");
        for pid in pids {
            assert!(dies(pid), "{name}: a process of the planner's group outlived little");
        }
    }
}

#[test]
fn after_sigkill_of_little_the_resume_kills_what_the_planner_left_running() {
    let dir = scratch("sigkill");
    let planner = waiting_planner(&dir);
    let mut little = spawn(&dir, &plan_args(&dir, &planner, "run_k", &[]), "plan");
    let [leader, script, child] = planner_pids(&dir);
    let _reaper = Reaper(vec![leader, script, child]);
    signal(little.id(), "KILL");
    little.wait().unwrap();
    assert!(dies(leader), "the planner dies with little (PR_SET_PDEATHSIG)");
    // What it started did not: no handler runs on SIGKILL. The record of its group remains.
    assert!(alive(script) && alive(child));
    let record = dir.join(".little/runs/run_k/processes");
    assert!(record.exists());

    std::fs::write(dir.join("again"), "").unwrap();
    let run = little_in(&dir, plan_args(&dir, &planner, "run_k", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("left running (process group"), "{}", run.stderr);
    assert!(dies(script) && dies(child), "the resume killed the group the killed little left running");
    assert!(!record.exists(), "and cleared its record");
    assert_eq!(
        event_types(&dir, "run_k"),
        [
            "harness.session.started",
            "harness.model.called",
            "harness.model.responded",
            "harness.session.completed",
            "WorkflowVersionRegistered"
        ]
    );
}

#[test]
fn a_failed_log_write_ends_the_planner_and_its_children() {
    let dir = scratch("log-write");
    // 40 KB of arguments in one event, past a file size limit of 16 KiB (`ulimit -f` counts
    // 512-byte blocks; SIGXFSZ ignored, the write fails with EFBIG).
    let big = format!(
        r#"little-event {{"type":"harness.tool_call.started","callId":"c1","tool":"bash","arguments":"{}"}}"#,
        "x".repeat(40_000)
    );
    std::fs::write(dir.join("big.txt"), format!("{big}\n")).unwrap();
    let planner = planner(
        &dir,
        "big",
        "sleep 1000 &\necho $! > \"$dir/child\"\necho $$ > \"$dir/leader\"\ncat \"$dir/big.txt\" >&2\nwait",
    );
    let mut args = vec!["-c".to_string(), "ulimit -f 32; trap '' XFSZ; exec \"$0\" \"$@\"".to_string()];
    args.push(env!("CARGO_BIN_EXE_little").to_string());
    // The planner would wait out its time limit if the failed write did not end it.
    args.extend(plan_args(&dir, &planner, "run_w", &["--timeout", "30s"]));
    let started = Instant::now();
    let output = Command::new("sh").args(&args).current_dir(&dir).env("NO_COLOR", "1").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let (child, leader) = (pid_in(&dir.join("child")), pid_in(&dir.join("leader")));
    let _reaper = Reaper(vec![child, leader]);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot append to the event log"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20), "the planner was not waited for");
    assert!(dies(leader), "the planner outlived the failed write");
    assert!(dies(child), "its child outlived the failed write");
    assert_eq!(event_types(&dir, "run_w"), ["harness.session.started", "harness.model.called"]);
}

#[test]
fn a_planner_flooding_stdout_fails_its_attempt_in_bounded_memory() {
    let dir = scratch("flood-stdout");
    let planner = planner(&dir, "flood", "yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx | head -c 200000000");
    let little = spawn(&dir, &plan_args(&dir, &planner, "run_f", &[]), "plan");
    let (status, peak_kib) = wait_measuring(little);
    let stderr = read(&dir.join("plan.err"));
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the planner wrote more than 16 MiB on stdout in attempt 1"), "{stderr}");
    assert!(peak_kib < 80 * 1024, "200 MB on stdout took {} MiB", peak_kib / 1024);
    assert_eq!(event_types(&dir, "run_f"), ["harness.session.started", "harness.model.called", "harness.model.failed"]);
    let events = read(&dir.join("events.jsonl"));
    assert!(events.len() < 16 * 1024, "nothing of the output is in the log: {} bytes", events.len());
    assert!(events.contains(r#""reason":"wrote more than 16 MiB on stdout""#), "{events}");
}

#[test]
fn a_planner_flooding_stderr_without_a_newline_is_shown_in_bounded_memory() {
    let dir = scratch("flood-stderr");
    let planner = planner(&dir, "flood", "head -c 200000000 /dev/zero | tr '\\0' x >&2\necho >&2\ncat \"$lwir\"");
    let little = spawn(&dir, &plan_args(&dir, &planner, "run_e", &[]), "plan");
    let (status, peak_kib) = wait_measuring(little);
    let stderr = read(&dir.join("plan.err"));
    assert_eq!(status.code(), Some(0), "{}", &stderr[stderr.len().saturating_sub(2000)..]);
    assert!(peak_kib < 80 * 1024, "200 MB of stderr took {} MiB", peak_kib / 1024);
    assert!(stderr.len() < 200 * 1024, "the line was cut: {} bytes shown", stderr.len());
}

#[test]
fn an_event_nested_too_deep_leaves_a_log_every_reader_and_run_can_read() {
    let dir = scratch("deep");
    let depth = 126;
    let deep = format!(
        r#"little-event {{"type":"harness.tool_call.started","callId":"c1","tool":"bash","arguments":{}1{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(dir.join("deep.txt"), format!("{deep}\n")).unwrap();
    let poisoner = planner(&dir, "deep", "cat \"$dir/deep.txt\" >&2\ncat \"$lwir\"");
    let run = little_in(&dir, plan_args(&dir, &poisoner, "run_p", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("was not recorded: it is nested deeper"), "{}", run.stderr);

    let shown = little(["events", &dir.join("events.jsonl").display().to_string()]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(events_of(&dir).code, 0);
    let resumed = little_in(&dir, plan_args(&dir, &poisoner, "run_p", &[]));
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    assert!(resumed.stdout.contains("replayed from the event log"), "{}", resumed.stdout);
    let good = planner(&dir, "good", "cat \"$lwir\"");
    let other = little_in(&dir, plan_args(&dir, &good, "run_other", &[]));
    assert_eq!(other.code, 0, "{}", other.stderr);
}

#[test]
fn a_file_that_is_not_a_log_is_refused_and_left_byte_for_byte() {
    let dir = scratch("not-a-log");
    let package = br#"{"name":"my-app","version":"1.0.0","dependencies":{"left-pad":"^1.3.0"}}"#;
    let path = dir.join("package.json");
    std::fs::write(&path, package).unwrap();
    let good = planner(&dir, "good", "touch \"$dir/ran\"\ncat \"$lwir\"");
    let mut args = plan_args(&dir, &good, "run_n", &[]);
    let at = args.iter().position(|a| a == "--events").unwrap() + 1;
    args[at] = path.display().to_string();
    let run = little_in(&dir, &args);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("is not an event log of `little`"), "{}", run.stderr);
    assert_eq!(std::fs::read(&path).unwrap(), package, "the file is as it was");
    assert!(!dir.join("ran").exists(), "the planner did not run");
    let shown = little(["events", &path.display().to_string()]);
    assert_eq!(shown.code, 2);
    assert_eq!(std::fs::read(&path).unwrap(), package);
}

#[test]
fn a_duplicated_or_a_missing_seq_is_an_error_naming_its_line() {
    let dir = scratch("seq");
    let good = planner(&dir, "good", "cat \"$lwir\"");
    let run = little_in(&dir, plan_args(&dir, &good, "run_q", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let log = dir.join("events.jsonl");
    let text = read(&log);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    for (edited, line, word) in
        [([&lines[..3], &lines[2..]].concat(), 4, "duplicated"), ([&lines[..2], &lines[3..]].concat(), 3, "lost")]
    {
        let edited = edited.join("\n") + "\n";
        std::fs::write(&log, &edited).unwrap();
        let shown = little(["events", &log.display().to_string()]);
        assert_eq!(shown.code, 2, "{word}: {}", shown.stdout);
        let expected = format!("line {line} of the event log");
        assert!(shown.stderr.contains(&expected) && shown.stderr.contains(word), "{}", shown.stderr);
        let resumed = little_in(&dir, plan_args(&dir, &good, "run_q", &[]));
        assert_eq!(resumed.code, 2, "{word}: {}", resumed.stdout);
        assert!(resumed.stderr.contains(&expected) && resumed.stderr.contains(word), "{}", resumed.stderr);
        assert_eq!(read(&log), edited, "the log is left as it was");
    }
}

#[test]
fn a_second_run_on_a_busy_log_waits_for_it_or_is_refused_at_once() {
    let dir = scratch("two-runs");
    // It takes 1.5 s, and then holds on until the test releases it (at most 20 s more), so
    // that a slow start of the second run cannot miss the first.
    let slow = planner(
        &dir,
        "slow",
        "echo go > \"$dir/started-$LITTLE_RUN_ID\"\nsleep 1.5\ni=0\n\
         while [ ! -e \"$dir/release-$LITTLE_RUN_ID\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n\
         cat \"$lwir\"",
    );
    let release = |run: &str| std::fs::write(dir.join(format!("release-{run}")), "").unwrap();
    let first = spawn(&dir, &plan_args(&dir, &slow, "run_a", &[]), "a");
    wait_for(&dir.join("started-run_a"));
    release("run_b");
    let second = spawn(&dir, &plan_args(&dir, &slow, "run_b", &[]), "b");
    let until = Instant::now() + Duration::from_secs(30);
    while !read(&dir.join("b.err")).contains("waiting up to") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    release("run_a");
    let (first, second) = (first.wait_with_output().unwrap(), second.wait_with_output().unwrap());
    assert!(first.status.success(), "{}", read(&dir.join("a.err")));
    assert!(second.status.success(), "{}", read(&dir.join("b.err")));
    let waited = read(&dir.join("b.err"));
    assert!(waited.contains("is being written by another `little`; waiting up to 30 s"), "{waited}");
    let shown = little(["events", &dir.join("events.jsonl").display().to_string()]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    for run in ["run_a", "run_b"] {
        assert_eq!(event_types(&dir, run).last().unwrap(), "WorkflowVersionRegistered");
    }

    let first = spawn(&dir, &plan_args(&dir, &slow, "run_c", &[]), "c");
    wait_for(&dir.join("started-run_c"));
    let started = Instant::now();
    let refused = little_in(&dir, plan_args(&dir, &slow, "run_d", &["--lock-wait", "0"]));
    let took = started.elapsed();
    release("run_c");
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("still being written by another `little`"), "{}", refused.stderr);
    assert!(took < Duration::from_secs(3), "refused at once: {took:?}");
    assert!(first.wait_with_output().unwrap().status.success());
    assert!(!dir.join("started-run_d").exists());
}

#[test]
fn events_as_json_streams_a_large_log_in_bounded_memory() {
    use std::io::Write;
    let dir = scratch("large-log");
    let log = dir.join("events.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
    let arguments = "y".repeat(900);
    let count = 64_000;
    for seq in 1..=count {
        writeln!(
            file,
            r#"{{"runId":"big","seq":{seq},"type":"harness.tool_call.started","payload":{{"callId":"a1.{seq}","tool":"bash","arguments":{{"command":"{arguments}"}}}}}}"#
        )
        .unwrap();
    }
    drop(file);
    assert!(std::fs::metadata(&log).unwrap().len() > 60_000_000);
    let child = Command::new(env!("CARGO_BIN_EXE_little"))
        .args(["events", &log.display().to_string(), "--format", "json"])
        .stdout(std::fs::File::create(dir.join("shown.json")).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (status, peak_kib) = wait_measuring(child);
    assert!(status.success());
    assert!(peak_kib < 64 * 1024, "a 60 MB log took {} MiB to show", peak_kib / 1024);
    let shown = read(&dir.join("shown.json"));
    assert_eq!(shown.lines().count(), count + 2);
    assert!(shown.starts_with("[\n  {\"runId\":\"big\",\"seq\":1,") && shown.ends_with("\n]\n"));
    let _ = std::fs::remove_dir_all(&dir); // 120 MB
}
