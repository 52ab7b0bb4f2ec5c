//! `supervise::run_supervised` on its own: stdin, the stderr line callback, exit statuses,
//! and a grandchild that keeps the pipes open.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use little_sandbox::supervise::{run_supervised, run_supervised_with_stderr_lines};

fn sh(script: &str) -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(script);
    cmd
}

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn stdin_bytes_are_written_and_closed() {
    let out = run_supervised(sh("cat"), Some(b"hello\n".to_vec()), MINUTE, 1024).unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str()), (0, "hello\n"), "{out:?}");
    // More than a pipe holds, while the output is read at the same time.
    let big = vec![b'x'; 1 << 20];
    let out = run_supervised(sh("cat"), Some(big), MINUTE, 16).unwrap();
    assert_eq!((out.stdout.as_str(), out.truncated), ("x".repeat(16).as_str(), true), "{out:?}");
    let out = run_supervised(sh("wc -c"), Some(vec![b'y'; 1 << 20]), MINUTE, 1024).unwrap();
    assert_eq!(out.stdout.trim(), "1048576", "{out:?}");
    // A command that never reads its stdin does not hold the call.
    let out = run_supervised(sh("exit 0"), Some(vec![b'z'; 1 << 20]), MINUTE, 1024).unwrap();
    assert_eq!(out.exit_code, 0, "{out:?}");
    // Without bytes, stdin is /dev/null.
    let out = run_supervised(sh("cat; echo end"), None, MINUTE, 1024).unwrap();
    assert_eq!(out.stdout, "end\n", "{out:?}");
}

#[test]
fn stderr_lines_reach_the_callback_as_they_come() {
    let mut lines = Vec::new();
    let out = run_supervised_with_stderr_lines(
        sh("echo one >&2; echo out; printf 'two\\nthree' >&2"),
        None,
        MINUTE,
        4,
        &mut |line| lines.push(line.to_string()),
        None,
    )
    .unwrap();
    assert_eq!(lines, ["one", "two", "three"]);
    // The callback sees every line; the kept stderr is bounded.
    assert_eq!((out.stderr.as_str(), out.stdout.as_str(), out.truncated), ("one\n", "out\n", true), "{out:?}");
}

#[test]
fn exit_statuses_map_to_codes() {
    assert_eq!(run_supervised(sh("exit 7"), None, MINUTE, 16).unwrap().exit_code, 7);
    assert_eq!(run_supervised(sh("kill -KILL $$"), None, MINUTE, 16).unwrap().exit_code, 137);
    let out = run_supervised(sh("sleep 5"), None, Duration::from_millis(100), 16).unwrap();
    assert_eq!((out.exit_code, out.timed_out), (124, true), "{out:?}");
    let err = run_supervised(Command::new("/nonexistent/program"), None, MINUTE, 16).unwrap_err();
    assert!(err.starts_with("cannot start `/nonexistent/program`"), "{err}");
}

#[test]
fn a_grandchild_holding_the_pipes_does_not_hold_the_call() {
    let escaped = marker();
    let start = Instant::now();
    let out = run_supervised(sh(&format!("setsid sleep {escaped} & echo hi")), None, MINUTE, 64).unwrap();
    let elapsed = start.elapsed();
    kill_leftovers(&format!("sleep {escaped}"));
    assert_eq!((out.exit_code, out.stdout.as_str()), (0, "hi\n"), "{out:?}");
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");
}

#[test]
fn a_huge_timeout_does_not_overflow() {
    let out = run_supervised(sh("echo ok"), None, Duration::MAX, 16).unwrap();
    assert_eq!(out.stdout, "ok\n");
}

#[test]
fn the_hook_runs_in_the_child_before_exec_and_its_error_ends_the_spawn() {
    use std::os::fd::AsRawFd;
    let scratch = Scratch::new();
    let path = scratch.dir("hook").join("written");
    let file = std::fs::File::create(&path).unwrap();
    let fd = file.as_raw_fd();
    // The child writes its own pid before exec; the command then prints its pid.
    let hook = move || {
        let mut digits = [0u8; 16];
        // SAFETY: getpid(2) and write(2) on a descriptor the parent keeps open.
        let mut pid = unsafe { libc::getpid() };
        let mut at = digits.len();
        while pid > 0 {
            at -= 1;
            digits[at] = b'0' + (pid % 10) as u8;
            pid /= 10;
        }
        unsafe { libc::write(fd, digits[at..].as_ptr().cast(), digits.len() - at) };
        Ok(())
    };
    let out = run_supervised_with_stderr_lines(sh("echo $$"), None, MINUTE, 64, &mut |_| {}, Some(&hook)).unwrap();
    drop(file);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), out.stdout.trim(), "{out:?}");

    let refuse = || Err(std::io::Error::from_raw_os_error(libc::EPERM));
    let err =
        run_supervised_with_stderr_lines(sh("echo ran"), None, MINUTE, 64, &mut |_| {}, Some(&refuse)).unwrap_err();
    assert!(err.starts_with("cannot start `/bin/sh`") && err.contains("Operation not permitted"), "{err}");
}
