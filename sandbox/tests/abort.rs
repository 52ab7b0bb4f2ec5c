//! An [`Abort`] ends the call in flight at once, in both modes: the call returns aborted
//! (not timed out), nothing it started is left, a call of another sandbox running beside it
//! is untouched, and a later call of the aborted sandbox does not start.

mod common;

use std::time::{Duration, Instant};

use common::*;
use little_sandbox::{Abort, Mode, Sandbox};

/// Kill to return: the teardown's own budget is a second; the rest is a loaded machine.
const PROMPT: Duration = Duration::from_secs(3);

fn aborted_mid_call(mode: Mode) {
    let scratch = Scratch::new();
    let mut aborted = sandbox(mode, &scratch.dir("a"));
    let abort = Abort::new();
    aborted.abort = Some(abort.clone());
    let bystander_dir = scratch.dir("b");
    let bystander = sandbox(mode, &bystander_dir);
    let (mine, theirs) = (marker(), marker());
    let (output, bystander_output) = std::thread::scope(|scope| {
        // The bystander runs until the test lets it end (a file `go` in its scratch).
        let other = scope.spawn(|| {
            bystander.run(&format!("sleep {theirs} & until [ -e go ]; do sleep 0.02; done; echo bystander done"))
        });
        let running = scope.spawn(|| aborted.run(&format!("echo started; sleep {mine} & sleep {mine}")));
        assert!(
            wait_for(Duration::from_secs(20), || !sleeping(&mine).is_empty() && !sleeping(&theirs).is_empty()),
            "the sleeps never started"
        );
        let asked = Instant::now();
        abort.abort();
        let output = running.join().unwrap().unwrap();
        let took = asked.elapsed();
        assert!(took < PROMPT, "the aborted call took {took:?} to return");
        assert!(processes_with(&format!("sleep {mine}")).is_empty(), "a process of the aborted call is left");
        assert!(!sleeping(&theirs).is_empty(), "the other sandbox's call was killed with it");
        std::fs::write(bystander_dir.join("go"), "").unwrap();
        (output, other.join().unwrap().unwrap())
    });
    assert!(output.aborted && !output.timed_out, "{output:?}");
    assert_eq!(output.exit_code, 137, "{output:?}");
    assert_eq!(output.stdout, "started\n", "what it wrote before the abort is kept");
    assert_eq!((bystander_output.exit_code, bystander_output.stdout.as_str()), (0, "bystander done\n"));
    assert!(!bystander_output.aborted);

    // Aborted for good: the next call does not start.
    let token = scratch.root.join("a/ran");
    let again = aborted.run("touch ran").unwrap();
    assert!(again.aborted && again.exit_code == 137, "{again:?}");
    assert!(!token.exists(), "a call after the abort ran");
}

/// Pids of live processes running exactly `sleep SECONDS` (not the shells or the
/// bubblewrap whose command lines hold that text).
fn sleeping(seconds: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{seconds}\0");
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|raw| raw == wanted.as_bytes()))
        .collect()
}

fn wait_for(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + timeout;
    while !done() {
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

#[test]
fn an_abort_ends_a_plain_call_and_only_that_call() {
    aborted_mid_call(Mode::None);
}

#[test]
fn an_abort_ends_a_bubblewrap_call_and_only_that_call() {
    if bwrap_usable() {
        aborted_mid_call(Mode::Bwrap);
    }
}

#[test]
fn a_sandbox_without_an_abort_is_not_aborted() {
    let scratch = Scratch::new();
    let out = Sandbox::new(Mode::None, vec![mount(&scratch.dir("w"), "/w", true)], "/w").run("echo hi").unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str(), out.aborted), (0, "hi\n", false));
}
