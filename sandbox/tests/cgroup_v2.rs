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
/// mount's root when it is writable. Probed once: the tests run on several threads, and
/// two probes of the same name would see each other's directory and fail.
fn v2_root() -> Option<PathBuf> {
    static ROOT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    ROOT.get_or_init(probe_v2_root).clone()
}

fn probe_v2_root() -> Option<PathBuf> {
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

/// Set in a run of this binary where clone3 is hidden (see [`hide_clone3`]).
const HIDE_CLONE3: &str = "LITTLE_TEST_HIDE_CLONE3";

/// Runs `test` in this binary again with the v2 directory given; true when this is that run.
fn in_v2_run(test: &str) -> bool {
    in_v2_run_with(test, &[])
}

/// [`in_v2_run`] with more variables set in the run.
fn in_v2_run_with(test: &str, vars: &[(&str, &str)]) -> bool {
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
        .envs(vars.iter().copied())
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

/// Makes `clone3(2)` fail with `ENOSYS` in this thread and what it starts, as the default
/// seccomp profiles of container runtimes do (so that glibc falls back to `clone`).
fn hide_clone3() {
    #[repr(C)]
    struct Instruction {
        code: u16,
        jump_true: u8,
        jump_false: u8,
        k: u32,
    }
    #[repr(C)]
    struct Program {
        len: u16,
        filter: *const Instruction,
    }
    const LOAD_SYSCALL_NUMBER: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, offset 0 of seccomp_data
    const JUMP_IF_EQUAL: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RETURN: u16 = 0x06; // BPF_RET | BPF_K
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
    let filter = [
        Instruction { code: LOAD_SYSCALL_NUMBER, jump_true: 0, jump_false: 0, k: 0 },
        Instruction { code: JUMP_IF_EQUAL, jump_true: 0, jump_false: 1, k: libc::SYS_clone3 as u32 },
        Instruction { code: RETURN, jump_true: 0, jump_false: 0, k: SECCOMP_RET_ERRNO | libc::ENOSYS as u32 },
        Instruction { code: RETURN, jump_true: 0, jump_false: 0, k: SECCOMP_RET_ALLOW },
    ];
    let program = Program { len: filter.len() as u16, filter: filter.as_ptr() };
    // SAFETY: prctl(2) with a filter program that outlives the call (the kernel copies it).
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        let rc = libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &program as *const Program);
        assert_eq!(rc, 0, "seccomp: {}", std::io::Error::last_os_error());
    }
}

/// Where the kernel refuses clone3, the call is moved into its cgroup instead, and holds
/// the same: a cgroup of its own, its output, and nothing left behind.
#[test]
fn where_clone3_is_refused_a_call_is_moved_into_its_cgroup() {
    let test = "where_clone3_is_refused_a_call_is_moved_into_its_cgroup";
    if !in_v2_run_with(test, &[(HIDE_CLONE3, "1")]) {
        return;
    }
    assert!(std::env::var_os(HIDE_CLONE3).is_some(), "run without clone3 hidden");
    hide_clone3();
    let entry = cgroup_entry();
    assert!(entry.contains("moved into its cgroup through cgroup.procs, since clone3"), "{entry}");
    assert!(entry.contains("Function not implemented"), "{entry}");
    let mut modes = vec![Mode::None];
    if bwrap_usable() {
        modes.push(Mode::Bwrap);
    }
    for mode in modes {
        let scratch = Scratch::new();
        let sandbox = sandbox(mode, &scratch.dir("w"));
        let cgroup = own_v2_cgroup(&sandbox);
        assert!(cgroup.contains(&format!("/little-{}-", std::process::id())), "{mode:?}: {cgroup}");
        let out = sandbox.run("echo out; echo err >&2; exit 3").unwrap();
        assert_eq!((out.exit_code, out.stdout.as_str(), out.stderr.as_str()), (3, "out\n", "err\n"), "{mode:?}");
        let escaped = marker();
        let out = sandbox.run(&format!("setsid sleep {escaped} > /dev/null 2>&1 & echo ok")).unwrap();
        assert_eq!(out.stdout, "ok\n", "{mode:?}");
        assert!(gone_within(&format!("sleep {escaped}"), Duration::from_secs(1)), "{mode:?}: the escapee survived");
    }
}
