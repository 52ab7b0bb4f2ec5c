//! When `little` is told to stop (SIGTERM), the handlers of `signals` kill every running
//! command's group, grandchildren included, which `PR_SET_PDEATHSIG` alone would miss.
//! The test binary re-runs itself as the process that receives the signal.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use little_sandbox::Mode;
use little_sandbox::signals::KillChildrenOnSignal;

const HELPER: &str = "LITTLE_SANDBOX_SIGNAL_HELPER";

/// Run as a child of the real test: installs the handlers, then runs a command that leaves
/// a grandchild (`sleep A &`) and waits.
#[test]
fn helper_runs_a_command_until_signalled() {
    let Ok(spec) = std::env::var(HELPER) else { return };
    let (mode, marker, dir) = {
        let mut parts = spec.splitn(3, ':');
        let mode = if parts.next() == Some("bwrap") { Mode::Bwrap } else { Mode::None };
        (mode, parts.next().unwrap().to_string(), parts.next().unwrap().to_string())
    };
    let _handlers = KillChildrenOnSignal::install();
    let out = sandbox(mode, dir.as_ref()).run(&format!("sleep {marker} & sleep {marker}; true"));
    panic!("the command should not have ended: {out:?}");
}

#[test]
fn sigterm_kills_the_running_commands_with_their_children() {
    let scratch = Scratch::new();
    let mut modes = vec!["none"];
    if bwrap_usable() {
        modes.push("bwrap");
    }
    for mode in modes {
        let marker = marker();
        let dir = scratch.dir(mode);
        let mut helper = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "helper_runs_a_command_until_signalled", "--nocapture", "--test-threads=1"])
            .env(HELPER, format!("{mode}:{marker}:{}", dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let needle = format!("sleep {marker}");
        let until = Instant::now() + Duration::from_secs(10);
        while processes_with(&needle).len() < 2 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(processes_with(&needle).len() >= 2, "{mode}: the helper's command did not start");
        // SAFETY: kill(2) of the helper this test started.
        unsafe { libc::kill(helper.id() as i32, libc::SIGTERM) };
        let status = helper.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM), "{mode}: {status:?}");
        let gone = gone_within(&needle, Duration::from_secs(2));
        kill_leftovers(&needle);
        assert!(gone, "{mode}: the command's processes outlived the signal");
    }
}
