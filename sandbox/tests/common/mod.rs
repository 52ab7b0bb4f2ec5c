//! Helpers of the sandbox tests: scratch directories, unique markers, process scans.
#![allow(dead_code)] // each test binary uses its own share of them

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use little_sandbox::{Mode, Mount, Sandbox, check_available};

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn unique() -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}{:03}{}", std::process::id(), n, nanos % 1000)
}

/// A number of seconds unique to this call, for `sleep`, so that a leftover process can be
/// found by its command line: `1000.<digits>`.
pub fn marker() -> String {
    format!("1000.{}", unique())
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct Scratch {
    pub root: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        let root = std::env::temp_dir().join(format!("little-sandbox-test-{}", unique()));
        fs::create_dir_all(&root).unwrap();
        Scratch { root }
    }

    /// A subdirectory, created.
    pub fn dir(&self, name: &str) -> PathBuf {
        let dir = self.root.join(name);
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

pub fn mount(host: &Path, guest: impl Into<PathBuf>, writable: bool) -> Mount {
    Mount { host: host.to_path_buf(), guest: guest.into(), writable }
}

/// Whether the Bwrap tests can run; prints why not when they cannot.
pub fn bwrap_usable() -> bool {
    match check_available(Mode::Bwrap) {
        Ok(()) => true,
        Err(err) => {
            eprintln!("note: skipping a bubblewrap test: {err}");
            false
        }
    }
}

/// A sandbox of `mode` with one writable mount at `/job` (Bwrap) over `host`, working there.
pub fn sandbox(mode: Mode, host: &Path) -> Sandbox {
    Sandbox::new(mode, vec![mount(host, "/job", true)], "/job")
}

/// Pids of live processes whose command line contains `needle` (zombies have none).
pub fn processes_with(needle: &str) -> Vec<i32> {
    let own = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|raw| String::from_utf8_lossy(&raw).replace('\0', " ").contains(needle))
        })
        .collect()
}

/// Whether no process with `needle` in its command line is left, waiting up to `grace` for
/// killed ones to finish dying.
pub fn gone_within(needle: &str, grace: Duration) -> bool {
    let until = Instant::now() + grace;
    loop {
        if processes_with(needle).is_empty() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills what a test knowingly left behind (a `setsid` escapee under Mode::None).
pub fn kill_leftovers(needle: &str) {
    for pid in processes_with(needle) {
        // SAFETY: kill(2) of a process this test started.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// The names of the variables in `env` output.
pub fn env_names(env_output: &str) -> Vec<String> {
    let mut names: Vec<String> =
        env_output.lines().filter_map(|line| line.split_once('=')).map(|(name, _)| name.to_string()).collect();
    names.sort();
    names
}

/// Whether calls get a cgroup here (memory or pids), which holds what leaves the group.
pub fn has_cgroup() -> bool {
    let how = little_sandbox::limits::enforcement();
    how.memory.is_some() || how.processes.is_some()
}

/// Whether a test that needs what only root or cgroups give must run: in CI (`CI=true`)
/// it must, and fails when it cannot; elsewhere it is skipped with a note.
pub fn must_run(what: &str, available: bool) -> bool {
    if available {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI runs as root with cgroups, but {what} is not available here");
    }
    eprintln!("note: skipping a test: {what} is not available here");
    false
}

/// What bash adds by itself to the environment it was given.
pub const BASH_OWN: [&str; 3] = ["PWD", "SHLVL", "_"];
