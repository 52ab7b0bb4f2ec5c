//! The bounds of a call (memory, processes, CPU time, file size, scratch), under bubblewrap
//! and with `Mode::None`, watched from the host: the call ends with the bound it hit named,
//! the host never sees more than the bound, and nothing is left.
//!
//! Memory and process bounds need a cgroup (root in CI); elsewhere those tests say why they
//! skip. In CI (`CI=true`) they must run.

mod common;

use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use little_sandbox::limits::{GIB, MIB};
use little_sandbox::{Limit, Mode, Sandbox, quota};

/// The modes to try: None always, Bwrap where bubblewrap works (and in CI).
fn modes() -> Vec<Mode> {
    let mut modes = vec![Mode::None];
    if must_run("bubblewrap", little_sandbox::check_available(Mode::Bwrap).is_ok()) {
        modes.push(Mode::Bwrap);
    }
    modes
}

/// Samples something from the host every few milliseconds while a call runs; the largest
/// value seen.
struct Watch {
    stop: Arc<AtomicBool>,
    most: Arc<AtomicU64>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Watch {
    fn start(sample: impl Fn() -> u64 + Send + 'static) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let most = Arc::new(AtomicU64::new(0));
        let (s, m) = (stop.clone(), most.clone());
        let thread = thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                m.fetch_max(sample(), Ordering::SeqCst);
                thread::sleep(Duration::from_millis(5));
            }
        });
        Watch { stop, most, thread: Some(thread) }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
        self.most.load(Ordering::SeqCst)
    }
}

/// `MemAvailable` of the host, in bytes.
fn available_memory() -> u64 {
    let text = fs::read_to_string("/proc/meminfo").unwrap();
    let line = text.lines().find(|l| l.starts_with("MemAvailable:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// Processes whose command line holds `needle`, counted as the host sees them.
fn count(needle: &str) -> u64 {
    processes_with(needle).len() as u64
}

#[test]
fn processes_stay_within_the_bound_and_then_a_fork_bomb_ends_on_time() {
    if !must_run("a pids cgroup", little_sandbox::limits::enforcement().processes.is_some()) {
        return;
    }
    for mode in modes() {
        let scratch = Scratch::new();
        let mut sandbox = sandbox(mode, &scratch.dir("w"));
        sandbox.timeout = Duration::from_secs(8);
        let bound = sandbox.limits.processes;
        // 2,000 background processes, each findable by its command line.
        let mark = marker();
        let needle = format!("sleep {mark}");
        let watch = Watch::start({
            let needle = needle.clone();
            move || count(&needle)
        });
        let out = sandbox.run(&format!("for i in $(seq 2000); do sleep {mark} & done 2>/dev/null; wait")).unwrap();
        let most = watch.finish();
        assert!(most > 0, "{mode:?}: the watch saw none of the sleeps: {out:?}");
        assert!(most <= bound, "{mode:?}: {most} processes on the host, over the bound {bound}");
        assert_eq!(out.limit, Some(Limit::Processes), "{mode:?}: {out:?}");
        assert!(gone_within(&needle, Duration::from_secs(1)), "{mode:?}: sleeps were left");

        // The bound holds: now a fork bomb.
        sandbox.timeout = Duration::from_secs(3);
        let start = Instant::now();
        // Every process of the bomb is a `bash -c` of this command: the marker finds them.
        let mark = marker();
        let out = sandbox.run(&format!("bomb() {{ bomb | bomb & }}; bomb; sleep {mark}")).unwrap();
        let took = start.elapsed();
        assert!(gone_within(&mark, Duration::from_secs(1)), "{mode:?}: the bomb was left running");
        assert!(took < sandbox.timeout + Duration::from_secs(2), "{mode:?}: the fork bomb took {took:?}");
        assert_eq!(out.limit, Some(Limit::Processes), "{mode:?}: {out:?}");
        // The test process is unharmed: it can still start a process.
        let echo = std::process::Command::new("true").status().unwrap();
        assert!(echo.success());
    }
}

#[test]
fn a_four_gibibyte_allocation_ends_at_the_memory_bound() {
    if !must_run("a memory cgroup", little_sandbox::limits::enforcement().memory.is_some()) {
        return;
    }
    for mode in modes() {
        let scratch = Scratch::new();
        let mut sandbox = sandbox(mode, &scratch.dir("w"));
        sandbox.timeout = Duration::from_secs(30);
        let bound = sandbox.limits.memory;
        assert_eq!(bound, GIB);
        let before = available_memory();
        let watch = Watch::start(move || before.saturating_sub(available_memory()));
        let out = sandbox.run("head -c 4G /dev/zero | tail | wc -c").unwrap();
        let dropped = watch.finish();
        assert_eq!(out.limit, Some(Limit::Memory), "{mode:?}: {out:?}");
        assert!(!out.timed_out, "{mode:?}: {out:?}");
        let margin = 256 * MIB;
        assert!(dropped <= bound + margin, "{mode:?}: available memory dropped by {} MiB", dropped / MIB);
    }
}

#[test]
fn a_cpu_spin_ends_at_the_cpu_bound_and_leaves_nothing() {
    for mode in modes() {
        let scratch = Scratch::new();
        let mut sandbox = sandbox(mode, &scratch.dir("w"));
        sandbox.timeout = Duration::from_secs(20);
        sandbox.limits.cpu = Some(Duration::from_secs(1));
        let escaped = marker();
        let start = Instant::now();
        let out = sandbox.run(&format!("setsid sleep {escaped} & while :; do :; done")).unwrap();
        let took = start.elapsed();
        assert_eq!(out.limit, Some(Limit::Cpu), "{mode:?}: {out:?}");
        // Ended by the CPU bound, long before the time limit (wall time stretches with the
        // machine's load: a second of CPU took five under a load of 16).
        assert!(!out.timed_out && took < sandbox.timeout, "{mode:?}: took {took:?}: {out:?}");
        if mode == Mode::Bwrap || has_cgroup() {
            assert!(gone_within(&format!("sleep {escaped}"), Duration::from_secs(1)), "{mode:?}: setsid survived");
        } else {
            kill_leftovers(&format!("sleep {escaped}"));
        }
    }
}

#[test]
fn one_file_is_held_to_the_file_size_bound() {
    for mode in modes() {
        let scratch = Scratch::new();
        let host = scratch.dir("w");
        let mut sandbox = sandbox(mode, &host);
        sandbox.limits.file_size = Some(16 * MIB);
        let out = sandbox.run("head -c 40M /dev/zero > big; echo after").unwrap();
        assert_eq!(out.limit, Some(Limit::FileSize), "{mode:?}: {out:?}");
        assert_eq!(out.stdout, "after\n", "{mode:?}: the shell goes on: {out:?}");
        assert_eq!(fs::metadata(host.join("big")).unwrap().len(), 16 * MIB, "{mode:?}");
    }
}

#[test]
fn a_gibibyte_written_into_scratch_is_rolled_back_to_its_bound() {
    for mode in modes() {
        let scratch = Scratch::new();
        let host = scratch.dir("w");
        fs::write(host.join("kept"), vec![b'k'; 4096]).unwrap();
        let mut sandbox = sandbox(mode, &host);
        sandbox.limits.scratch = 64 * MIB;
        sandbox.limits.file_size = Some(GIB);
        let out = sandbox.run("for i in $(seq 11); do head -c 100M /dev/zero > f$i; done; echo wrote").unwrap();
        assert_eq!(out.stdout, "wrote\n", "{mode:?}: {out:?}");
        assert_eq!(out.limit, Some(Limit::Scratch), "{mode:?}: {out:?}");
        let rollback = out.rollback.unwrap();
        assert!(rollback.found >= GIB && rollback.kept <= 64 * MIB, "{mode:?}: {rollback:?}");
        assert!(quota::usage(&host) <= 64 * MIB, "{mode:?}");
        assert_eq!(fs::read(host.join("kept")).unwrap(), vec![b'k'; 4096], "{mode:?}: what was there stays");
        // The next call runs as usual.
        let out = sandbox.run("rm -f f*; echo next > n; cat n").unwrap();
        assert_eq!((out.stdout.as_str(), out.limit), ("next\n", None), "{mode:?}: {out:?}");
    }
}

#[test]
fn a_writable_memory_store_is_held_to_its_own_bound() {
    for mode in modes() {
        let scratch = Scratch::new();
        let work = scratch.dir("w");
        let store = scratch.dir("store");
        let mut sandbox =
            Sandbox::new(mode, vec![mount(&work, "/job", true), mount(&store, "/mnt/memory/org", true)], "/job");
        sandbox.limits.memory_store = 8 * MIB;
        let target = match mode {
            Mode::Bwrap => "/mnt/memory/org".to_string(),
            Mode::None => store.display().to_string(),
        };
        let out = sandbox.run(&format!("head -c 20M /dev/zero > '{target}/x'")).unwrap();
        assert_eq!(out.limit, Some(Limit::MemoryStore), "{mode:?}: {out:?}");
        assert!(quota::usage(&store) <= 8 * MIB, "{mode:?}");
    }
}

#[test]
fn bash_is_an_unprivileged_user_under_bubblewrap() {
    if !must_run("bubblewrap", bwrap_usable()) {
        return;
    }
    if little_sandbox::unenforced(Mode::Bwrap).iter().any(|u| u.bound == "user") {
        assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "CI needs bubblewrap with user namespaces");
        eprintln!("note: skipping: bubblewrap cannot make a user namespace here");
        return;
    }
    let scratch = Scratch::new();
    let host = scratch.dir("w");
    let sandbox = sandbox(Mode::Bwrap, &host);
    let out = sandbox.run("id -u").unwrap();
    assert_eq!(out.stdout, "1000\n", "{out:?}");
    for (command, what) in [
        ("echo x > /proc/sys/kernel/hostname", "write /proc/sys/kernel/hostname"),
        ("echo x > /proc/sys/vm/drop_caches", "write /proc/sys/vm/drop_caches"),
        ("echo x > /usr/x", "write /usr/x"),
        ("cat /etc/shadow | grep -q .", "read /etc/shadow"),
        ("hostname evil", "set the host name"),
    ] {
        let out = sandbox.run(command).unwrap();
        assert_ne!(out.exit_code, 0, "could {what}: {out:?}");
    }
    assert!(!std::path::Path::new("/usr/x").exists());
    // Its files in scratch are the caller's outside.
    let out = sandbox.run("echo mine > mine").unwrap();
    assert_eq!(out.exit_code, 0, "{out:?}");
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid(2) is always safe.
    let uid = unsafe { libc::getuid() };
    assert_eq!(fs::metadata(host.join("mine")).unwrap().uid(), uid);
}
