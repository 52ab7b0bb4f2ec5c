//! cgroup v2: a call is born in a cgroup of its own (clone3 with `CLONE_INTO_CGROUP`), in
//! both modes, and what it leaves there (also what left its process group) dies with it.
//!
//! The probe is once per process, so each test runs this binary again with
//! `LITTLE_SANDBOX_CGROUP_V2_ROOT` naming a writable cgroup v2 directory (a machine whose
//! v2 mount has no controllers, as a hybrid one, has one too); the bounds the v2 directory
//! cannot hold are held by v1 or the rlimits, as elsewhere.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::*;
use little_sandbox::limits::{CGROUP_V2_ROOT_VAR, cgroup_entry};
use little_sandbox::{Mode, Sandbox};

/// A cgroup v2 directory this process may make cgroups in: the given one, else the v2
/// mount's root when it is writable.
fn v2_root() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CGROUP_V2_ROOT_VAR) {
        return Some(dir.into());
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let point = mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        after.starts_with("cgroup2 ").then(|| before.split(' ').nth(4).map(PathBuf::from))?
    })?;
    let probe = point.join(format!("little-test-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    std::fs::remove_dir(&probe).ok()?;
    Some(point)
}

/// Runs `test` in this binary again with the v2 directory given; true when this is that run.
fn in_v2_run(test: &str) -> bool {
    if std::env::var_os(CGROUP_V2_ROOT_VAR).is_some() {
        return true;
    }
    let Some(root) = v2_root() else {
        must_run("a writable cgroup v2 hierarchy", false);
        return false;
    };
    let run = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CGROUP_V2_ROOT_VAR, &root)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "{test} under cgroup v2 ({}) failed:\n{stdout}\n{stderr}", root.display());
    assert!(stdout.contains("1 passed"), "{test} did not run: {stdout}");
    false
}

/// The call's cgroup v2 as `/proc/self/cgroup` shows it from inside.
fn own_v2_cgroup(sandbox: &Sandbox) -> String {
    let out = sandbox.run("cat /proc/self/cgroup").unwrap();
    assert_eq!(out.exit_code, 0, "{out:?}");
    out.stdout.lines().find_map(|line| line.strip_prefix("0::")).unwrap_or_default().to_string()
}

fn born_in_its_cgroup(mode: Mode) {
    let entry = cgroup_entry();
    assert!(entry.contains("born in its cgroup"), "{entry}");
    let scratch = Scratch::new();
    let sandbox = sandbox(mode, &scratch.dir("w"));
    let (first, second) = (own_v2_cgroup(&sandbox), own_v2_cgroup(&sandbox));
    let prefix = format!("/little-{}-", std::process::id());
    assert!(first.contains(&prefix) && second.contains(&prefix), "{first} / {second}");
    assert_ne!(first, second, "each call has a cgroup of its own");
    // Output, exit codes and bounds as with any spawn.
    let out = sandbox.run("echo out; echo err >&2; exit 3").unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str(), out.stderr.as_str()), (3, "out\n", "err\n"));
    let out = sandbox.run("ulimit -t; ulimit -f").unwrap();
    assert_eq!(out.stdout, "60\n262144\n", "the rlimits are set: {out:?}");
}

#[test]
fn a_plain_call_is_born_in_its_cgroup() {
    if in_v2_run("a_plain_call_is_born_in_its_cgroup") {
        born_in_its_cgroup(Mode::None);
    }
}

#[test]
fn a_bubblewrap_call_is_born_in_its_cgroup() {
    if in_v2_run("a_bubblewrap_call_is_born_in_its_cgroup") && must_run("bubblewrap", bwrap_usable()) {
        born_in_its_cgroup(Mode::Bwrap);
    }
}

/// A `setsid` escapee left the process group but not the cgroup it was born in.
#[test]
fn what_a_call_leaves_in_its_cgroup_dies_with_it() {
    if !in_v2_run("what_a_call_leaves_in_its_cgroup_dies_with_it") {
        return;
    }
    let scratch = Scratch::new();
    let sandbox = sandbox(Mode::None, &scratch.dir("w"));
    let (grouped, escaped) = (marker(), marker());
    let out = sandbox.run(&format!("sleep {grouped} & setsid sleep {escaped} > /dev/null 2>&1 & echo ok")).unwrap();
    assert_eq!(out.stdout, "ok\n");
    assert!(gone_within(&format!("sleep {grouped}"), Duration::from_secs(1)));
    assert!(gone_within(&format!("sleep {escaped}"), Duration::from_secs(1)), "the escapee survived its cgroup");
}
