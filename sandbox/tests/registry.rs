//! The registry of running process groups and `kill_registered_groups`, in a test binary of
//! its own: killing every registered group would hit the other tests' commands. Also checks
//! that no zombie child is left behind.

mod common;

use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use little_sandbox::supervise::{register_group, run_supervised, unregister_group};
use little_sandbox::{Mode, kill_registered_groups};

#[test]
fn registered_groups_are_killed_and_nothing_is_left_unreaped() {
    // A group registered by hand dies, whole.
    let mark = marker();
    let mut child =
        Command::new("/bin/sh").arg("-c").arg(format!("sleep {mark} & sleep {mark}")).process_group(0).spawn().unwrap();
    let pgid = child.id() as i32;
    register_group(pgid);
    kill_registered_groups();
    unregister_group(pgid);
    assert_eq!(child.wait().unwrap().signal(), Some(9));
    assert!(gone_within(&format!("sleep {mark}"), Duration::from_secs(1)));

    // A command running under run_supervised on another thread dies at once.
    let mark = marker();
    let script = format!("sleep {mark}");
    let runner = std::thread::spawn(move || {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(script);
        run_supervised(cmd, None, Duration::from_secs(30), 64)
    });
    let until = Instant::now() + Duration::from_secs(10);
    while processes_with(&format!("sleep {mark}")).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let start = Instant::now();
    kill_registered_groups();
    let out = runner.join().unwrap().unwrap();
    assert_eq!((out.exit_code, out.timed_out), (137, false), "{out:?}");
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());

    // Nothing stays registered once reaped: a later kill hits nothing of ours.
    let out = run_supervised(Command::new("/bin/true"), None, Duration::from_secs(30), 64).unwrap();
    assert_eq!(out.exit_code, 0);

    // Many runs, in both modes, with timeouts and background processes: no zombie child.
    let scratch = Scratch::new();
    let mut modes = vec![Mode::None];
    if bwrap_usable() {
        modes.push(Mode::Bwrap);
    }
    for mode in modes {
        let mut sandbox = sandbox(mode, &scratch.dir("w"));
        sandbox.timeout = Duration::from_millis(200);
        for command in ["true", "exit 4", "sleep 1000 & echo", "sleep 5"] {
            sandbox.run(command).unwrap();
        }
    }
    assert_eq!(zombie_children(), Vec::<i32>::new());
}

/// Children of this process that exited and were not reaped.
fn zombie_children() -> Vec<i32> {
    let own = std::process::id().to_string();
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            let Some(close) = stat.rfind(')') else { return false };
            let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            fields.first() == Some(&"Z") && fields.get(1) == Some(&own.as_str())
        })
        .collect()
}
