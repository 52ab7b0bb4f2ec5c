//! Process plumbing shared by [`Sandbox::run`](crate::Sandbox::run) and other runners: spawn a
//! command in a process group of its own, keep bounded output, enforce a deadline, reap.
//!
//! Every command runs as the leader of a new process group (`setpgid(0, 0)`) with
//! `PR_SET_PDEATHSIG(SIGKILL)`, so it dies with the thread that spawned it, and its group is
//! recorded in a fixed static registry until it is reaped, so that a signal handler can kill
//! what is still running ([`kill_registered_groups`]).
//!
//! Output is read on the calling thread with `poll(2)` over non-blocking pipes (no reader
//! threads to abandon): at most `max_output` bytes of each stream are kept, the rest is read
//! and counted, never held. When the command exits, its whole group is killed with `SIGKILL`
//! (what it left running in the background goes with it); the pipes are then drained until
//! they close, for at most [`DRAIN_GRACE`], since a process that left the group (`setsid`)
//! may hold them open forever. At the deadline the group is killed and the call returns
//! within about a second whatever still holds the pipes. An [`Abort`] ends the call the
//! same way at once, from another thread: its eventfd wakes the `poll`.
//!
//! Limitation: a process that calls `setsid(2)` or `setpgid(2)` leaves the group and is not
//! killed here; run the command in a PID namespace (bubblewrap, [`Mode::Bwrap`](crate::Mode))
//! to contain it.

use std::ffi::{c_int, c_uint};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::limits::{CallCgroup, Rlimits};
use crate::spawn::{self, ChildSetup, Environment, Placement, Spawned};
use crate::{Abort, Output};

/// How long the pipes are still read after the command exited and its group was killed,
/// waiting for them to close.
pub const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// How long a killed command is waited for before it is left to a background reaper.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// Longest stderr line handed to a line callback; the rest of a longer line is dropped.
const MAX_LINE: usize = 64 * 1024;

/// Exit code reported when the deadline passed (as coreutils `timeout` does).
pub const TIMEOUT_EXIT_CODE: i32 = 124;

const SLOTS: usize = 256;
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
/// Per slot of [`GROUPS`], the open `cgroup.kill` of its call's cgroup v2, or -1.
static CGROUP_KILL: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
/// Per slot of [`GROUPS`], the open `cgroup.procs` of its call's cgroup where there is no
/// `cgroup.kill` (cgroup v1; v2 before Linux 5.14), or -1.
static CGROUP_PROCS: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
/// How many [`kill_registered_groups`] are running: a descriptor taken out of the registry
/// meanwhile is left open (once), since a killer may be about to use it.
static KILLERS: AtomicUsize = AtomicUsize::new(0);

/// What else ends a registered command besides its process group: its call's cgroup, which
/// holds what left the group (`setsid`, bubblewrap's namespace) and what bubblewrap's
/// `--die-with-parent` misses (its namespace's init asks for its parent's death signal only
/// after starting the command, so a `little` stopped in that moment leaves it running).
#[derive(Default)]
pub(crate) struct CgroupHandles {
    /// `cgroup.kill`, open for writing.
    pub kill: Option<OwnedFd>,
    /// `cgroup.procs`, open for reading, where there is no `cgroup.kill`.
    pub procs: Option<OwnedFd>,
}

/// Records a process group as running, for [`kill_registered_groups`]. Ids 0 and 1 (and
/// negative ones) are ignored, since `kill(-1, …)` would signal every process. The registry
/// has 256 slots; when all are taken the group is not recorded (its leader still dies with
/// its parent through `PR_SET_PDEATHSIG`).
pub fn register_group(pgid: i32) {
    register_call(pgid, CgroupHandles::default());
}

/// [`register_group`], with the call's cgroup, which the registry then owns.
pub(crate) fn register_call(pgid: i32, cgroup: CgroupHandles) {
    if pgid <= 1 {
        return;
    }
    for (index, slot) in GROUPS.iter().enumerate() {
        if slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            CGROUP_KILL[index].store(cgroup.kill.map_or(-1, IntoRawFd::into_raw_fd), Ordering::SeqCst);
            CGROUP_PROCS[index].store(cgroup.procs.map_or(-1, IntoRawFd::into_raw_fd), Ordering::SeqCst);
            return;
        }
    }
}

/// Removes one record of a process group added by [`register_group`].
pub fn unregister_group(pgid: i32) {
    if pgid <= 1 {
        return;
    }
    for (index, slot) in GROUPS.iter().enumerate() {
        if slot.load(Ordering::SeqCst) != pgid {
            continue;
        }
        for fds in [&CGROUP_KILL, &CGROUP_PROCS] {
            let fd = fds[index].swap(-1, Ordering::SeqCst);
            if fd >= 0 && KILLERS.load(Ordering::SeqCst) == 0 {
                // SAFETY: the registry owned this descriptor, and no killer can hold it.
                unsafe { libc::close(fd) };
            }
        }
        if slot.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            return;
        }
    }
}

/// Sends `SIGKILL` to every process group recorded by [`register_group`] and not yet
/// unregistered, and to everything in their calls' cgroups, once the spawns under way on
/// other threads have registered theirs (waited for up to a second). Async-signal-safe
/// (atomics, `clock_gettime(2)`, `sched_yield(2)`, `pread(2)`, `write(2)` and `kill(2)`
/// only), so it may be called from a signal handler, e.g. on Ctrl-C before the process
/// exits. The records stay: the runner that owns a group unregisters it when it reaps its
/// leader.
pub fn kill_registered_groups() {
    KILLERS.fetch_add(1, Ordering::SeqCst);
    let start = monotonic_nanos();
    while SPAWNING.load(Ordering::SeqCst) > 0 && monotonic_nanos().saturating_sub(start) < 1_000_000_000 {
        // SAFETY: sched_yield(2) has no preconditions.
        unsafe { libc::sched_yield() };
    }
    for (index, slot) in GROUPS.iter().enumerate() {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 1 {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        let kill = CGROUP_KILL[index].load(Ordering::SeqCst);
        if kill >= 0 {
            // SAFETY: write(2) of a static byte to a descriptor the registry keeps open.
            unsafe { libc::write(kill, b"1".as_ptr().cast(), 1) };
        }
        let procs = CGROUP_PROCS[index].load(Ordering::SeqCst);
        if procs >= 0 {
            kill_listed(procs);
        }
    }
    KILLERS.fetch_sub(1, Ordering::SeqCst);
}

/// Kills every process `cgroup.procs` (open as `procs`) lists, reading it again until it
/// lists none, at most four times (a process forking meanwhile lands in the same list).
/// Async-signal-safe: `pread(2)` into a buffer on the stack, and `kill(2)`.
fn kill_listed(procs: RawFd) {
    for _ in 0..4 {
        let mut buf = [0u8; 512];
        let (mut offset, mut pid, mut killed) = (0i64, 0i32, false);
        loop {
            // SAFETY: pread(2) into a buffer we own, of its length.
            let n = unsafe { libc::pread(procs, buf.as_mut_ptr().cast(), buf.len(), offset) };
            if n <= 0 {
                break;
            }
            offset += n as i64;
            for &byte in &buf[..n as usize] {
                if byte.is_ascii_digit() {
                    pid = pid.saturating_mul(10).saturating_add((byte - b'0') as i32);
                } else if pid > 1 {
                    // SAFETY: kill(2) of a process in a call's own cgroup.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    (pid, killed) = (0, true);
                }
            }
        }
        if pid > 1 {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        if !killed {
            return;
        }
    }
}

/// The groups recorded now, for tests.
#[cfg(test)]
pub(crate) fn registered_groups() -> Vec<i32> {
    GROUPS.iter().map(|slot| slot.load(Ordering::SeqCst)).filter(|&pgid| pgid > 1).collect()
}

fn monotonic_nanos() -> u64 {
    // SAFETY: clock_gettime(2) writes into a zeroed timespec we own.
    unsafe {
        let mut now: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
        now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
    }
}

/// Spawns between their clone and the registration of their group.
static SPAWNING: AtomicUsize = AtomicUsize::new(0);

/// One spawn between its clone and the registration of its child's group: while it is open
/// the stop signals are blocked on this thread (a handler run here could not wait for it),
/// and [`kill_registered_groups`] on another thread waits for it to close, so no signal
/// finds a command running but not yet registered.
pub(crate) struct SpawnWindow {
    previous: libc::sigset_t,
}

impl SpawnWindow {
    pub(crate) fn open() -> SpawnWindow {
        // SAFETY: sigset operations on sets we own; pthread_sigmask on this thread.
        unsafe {
            let mut stop: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut stop);
            for signal in crate::spawn::STOP_SIGNALS {
                libc::sigaddset(&mut stop, signal);
            }
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &stop, &mut previous);
            SPAWNING.fetch_add(1, Ordering::SeqCst);
            SpawnWindow { previous }
        }
    }
}

impl Drop for SpawnWindow {
    fn drop(&mut self) {
        SPAWNING.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: restores the mask this thread had; a stop signal that came meanwhile is
        // handled now, with the group registered.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut()) };
    }
}

/// Runs `command` to completion or to the deadline; see the module documentation.
///
/// The command's stdin, stdout and stderr are replaced (stdin is `/dev/null` unless `stdin`
/// is given, then those bytes are written and the pipe closed); its other inherited file
/// descriptors are closed at exec. The exit code is the command's, 128 + the signal when a
/// signal killed it, 124 with `timed_out` past `timeout`. `Err` only when it cannot be
/// spawned.
///
/// The command runs with this process's environment and the command's own `env` and
/// `env_remove` applied, in its `current_dir`. `std` gives no way to read a `Command`'s
/// `env_clear` or `pre_exec` hooks, so those are not seen: remove variables one by one,
/// and give a hook to [`run_supervised_with_stderr_lines`].
pub fn run_supervised(
    command: Command,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    max_output: usize,
) -> Result<Output, String> {
    supervise(command, stdin, timeout, max_output, Extra { inherit_environment: true, ..Extra::default() })
}

/// [`run_supervised`], also handing each line of stderr (without its `\n`, lossy UTF-8) to
/// `on_stderr_line` as it arrives, e.g. to show progress. Every line is handed over, also
/// those past `max_output`; a line longer than 64 KiB is cut there. `before_exec` runs in
/// the child last before `exec` (in place of `CommandExt::pre_exec`, which this spawn
/// cannot see), under the same rules: async-signal-safe calls only, no allocation.
pub fn run_supervised_with_stderr_lines(
    command: Command,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    max_output: usize,
    on_stderr_line: &mut dyn FnMut(&str),
    before_exec: Option<&BeforeExec>,
) -> Result<Output, String> {
    let extra =
        Extra { on_stderr_line: Some(on_stderr_line), inherit_environment: true, before_exec, ..Extra::default() };
    supervise(command, stdin, timeout, max_output, extra)
}

/// A hook run in the child between fork and exec; an `Err` ends the spawn with its errno.
pub type BeforeExec = dyn Fn() -> io::Result<()> + Sync;

/// What the crate's own callers add to [`run_supervised`].
#[derive(Default)]
pub(crate) struct Extra<'a> {
    pub on_stderr_line: Option<&'a mut dyn FnMut(&str)>,
    /// A descriptor the command inherits (bubblewrap's status pipe); all others above 2 are
    /// closed at exec.
    pub keep_fd: Option<RawFd>,
    /// Called at the deadline (or on abort) with the child's pid, before its group is killed; when it
    /// returns true, the child is given half of [`KILL_WAIT`] to exit by itself first (bubblewrap,
    /// once the namespace's init is killed, exits only after everything in it is gone).
    pub on_timeout: Option<&'a mut dyn FnMut(i32) -> bool>,
    /// The call's cgroup: the child is born in it (cgroup v2, clone3) or joins it before
    /// `exec`, and what is left in it is killed with the process group.
    pub cgroup: Option<&'a CallCgroup>,
    /// Whether the command gets this process's environment with its own changes applied
    /// ([`run_supervised`]); else exactly the variables it sets (the sandbox's calls, which
    /// clear the environment and set it whole).
    pub inherit_environment: bool,
    /// Resource limits the child sets before `exec`.
    pub rlimits: Option<Rlimits>,
    /// Ends the call at once when aborted (the command is killed as at its deadline).
    pub abort: Option<&'a Abort>,
    /// Run in the child last before `exec`.
    pub before_exec: Option<&'a BeforeExec>,
}

pub(crate) fn supervise(
    command: Command,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    max_output: usize,
    extra: Extra<'_>,
) -> Result<Output, String> {
    let start = Instant::now();
    let deadline = start.checked_add(timeout);
    // SAFETY: getpid(2) is always safe.
    let parent = unsafe { libc::getpid() };
    let cgroup = extra.cgroup;
    let rlimits = extra.rlimits;
    let setup = ChildSetup {
        parent,
        keep_fd: extra.keep_fd,
        rlimits: rlimits.as_ref().map_or(&[], |r| &r[..]),
        before_exec: extra.before_exec,
    };
    let environment = if extra.inherit_environment { Environment::Inherited } else { Environment::Exact };
    let Spawned { pid, pidfd, stdin: stdin_pipe, stdout, stderr } =
        spawn::spawn(&command, environment, stdin.is_some(), &setup, Placement::of(cgroup))?;
    let kill_all = |pid: i32| {
        kill_group(pid);
        if let Some(cgroup) = cgroup {
            cgroup.kill_all();
        }
    };

    let (mut stdout, mut stderr) = (Some(stdout), Some(stderr));
    let mut input = match (stdin_pipe, stdin) {
        (Some(pipe), Some(bytes)) => Some(Input { pipe, bytes, written: 0 }),
        _ => None,
    };
    for fd in [stdout.as_ref().map(|s| s.as_raw_fd()), stderr.as_ref().map(|s| s.as_raw_fd())] {
        fd.into_iter().for_each(set_nonblocking);
    }
    if let Some(input) = &input {
        set_nonblocking(input.pipe.as_raw_fd());
    }

    let mut out = Capture::new(max_output);
    let mut err = Capture::new(max_output);
    let mut lines = extra.on_stderr_line.map(|callback| Lines { callback, pending: Vec::new(), overlong: false });
    let mut buf = vec![0u8; 64 * 1024];
    let mut status: Option<ExitStatus> = None;
    let mut drain_until = None;
    let abort = extra.abort;
    let aborted = || abort.is_some_and(Abort::is_aborted);
    // Polled only while the command runs: once aborted it stays readable.
    let wake_fd = abort.and_then(Abort::wake_fd);

    loop {
        if status.is_none() && aborted() {
            break;
        }
        let now = Instant::now();
        let state = if status.is_none() { child_state(pid) } else { ChildState::Running };
        if state != ChildState::Running {
            // Kill what the command left in its group while its zombie still holds the id,
            // so the id cannot name another group yet. (Reaped behind our back, the id may
            // already be another's: then nothing is killed.)
            if state == ChildState::Zombie {
                kill_all(pid);
            } else if let Some(cgroup) = cgroup {
                cgroup.kill_all();
            }
            unregister_group(pid);
            status = Some(reap(pid));
            input = None;
            drain_until = Some(now + DRAIN_GRACE);
        }
        let limit = if status.is_some() { drain_until } else { deadline };
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break;
        }
        if limit.is_some_and(|limit| now >= limit) {
            break;
        }

        let mut fds: [libc::pollfd; 5] = [libc::pollfd { fd: -1, events: 0, revents: 0 }; 5];
        if let Some(s) = &stdout {
            fds[0] = pollfd(s.as_raw_fd(), libc::POLLIN);
        }
        if let Some(s) = &stderr {
            fds[1] = pollfd(s.as_raw_fd(), libc::POLLIN);
        }
        if let Some(i) = &input {
            fds[2] = pollfd(i.pipe.as_raw_fd(), libc::POLLOUT);
        }
        if status.is_none()
            && let Some(p) = &pidfd
        {
            fds[3] = pollfd(p.as_raw_fd(), libc::POLLIN);
        }
        if status.is_none()
            && let Some(fd) = wake_fd
        {
            fds[4] = pollfd(fd, libc::POLLIN);
        }
        let mut wait_ms = limit.map_or(-1, |limit| millis_until(now, limit));
        if status.is_none() && (pidfd.is_none() || (abort.is_some() && wake_fd.is_none())) {
            // Without a pidfd (or an eventfd) the exit (or the abort) is noticed by asking every 10 ms.
            wait_ms = if wait_ms < 0 { 10 } else { wait_ms.min(10) };
        }
        // SAFETY: `fds` is a valid array of 5 pollfd; entries with fd -1 are ignored.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if ready < 0 {
            continue; // EINTR: a signal arrived; go round.
        }
        if fds[0].revents != 0 {
            pump(&mut stdout, &mut buf, |data| out.push(data));
        }
        if fds[1].revents != 0 {
            pump(&mut stderr, &mut buf, |data| {
                err.push(data);
                if let Some(lines) = &mut lines {
                    lines.push(data);
                }
            });
        }
        if fds[2].revents != 0
            && let Some(i) = &mut input
            && i.write()
        {
            input = None; // everything written, or the command closed its end: close ours.
        }
    }

    let stopped = status.is_none();
    let was_aborted = stopped && aborted();
    if stopped {
        // One budget for the whole teardown, so the call returns within KILL_WAIT.
        let until = Instant::now() + KILL_WAIT;
        if let Some(on_timeout) = extra.on_timeout
            && on_timeout(pid)
        {
            wait_exit(pid, pidfd.as_ref(), Instant::now() + KILL_WAIT / 2);
        }
        kill_all(pid);
        drop(input);
        if wait_exit(pid, pidfd.as_ref(), until) {
            unregister_group(pid);
            reap(pid);
        } else {
            // Still not gone a second after the deadline (stuck in the kernel): leave the reaping
            // to a thread so no zombie stays, and return now.
            unregister_group(pid);
            std::thread::spawn(move || reap(pid));
        }
        // What was written before the kill and is still buffered.
        pump(&mut stdout, &mut buf, |data| out.push(data));
        pump(&mut stderr, &mut buf, |data| {
            err.push(data);
            if let Some(lines) = &mut lines {
                lines.push(data);
            }
        });
    }
    if let Some(lines) = &mut lines {
        lines.finish();
    }
    let (stdout, out_cut) = out.finish();
    let (stderr, err_cut) = err.finish();
    Ok(Output {
        exit_code: match status {
            None if was_aborted => 128 + libc::SIGKILL,
            None => TIMEOUT_EXIT_CODE,
            Some(status) => exit_code(status),
        },
        stdout,
        stderr,
        truncated: out_cut || err_cut,
        timed_out: stopped && !was_aborted,
        duration: start.elapsed(),
        limit: None,
        rollback: None,
        aborted: was_aborted,
    })
}

/// The exit code of a reaped process: its code, or 128 + the signal that killed it.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => -1,
    }
}

/// In the child between fork and exec: die with the parent, and close at exec every
/// descriptor above 2 except `keep_fd`.
pub(crate) fn prepare_child(parent: libc::pid_t, keep_fd: Option<RawFd>) -> io::Result<()> {
    // SAFETY: plain system calls on integers.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        // The parent may have died before the prctl took effect.
        if libc::getppid() != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        // Mark for closing at exec (not close: the spawn's exec-error pipe must stay open).
        // Failure (a kernel older than 5.11) leaves them as they were.
        const CLOSE_RANGE_CLOEXEC: c_uint = 1 << 2;
        let close_from = |first: c_uint, last: c_uint| {
            libc::syscall(libc::SYS_close_range, first, last, CLOSE_RANGE_CLOEXEC);
        };
        match keep_fd {
            Some(fd) if fd > 2 => {
                if fd > 3 {
                    close_from(3, fd as c_uint - 1);
                }
                close_from(fd as c_uint + 1, c_uint::MAX);
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            _ => close_from(3, c_uint::MAX),
        }
    }
    Ok(())
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd { fd, events, revents: 0 }
}

fn millis_until(now: Instant, limit: Instant) -> c_int {
    let left = limit.saturating_duration_since(now);
    // Round up, so a wake-up is never early and the loop does not spin.
    let ms = left.as_micros().div_ceil(1000);
    ms.min(c_int::MAX as u128) as c_int
}

pub(crate) fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

pub(crate) fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open(2) returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the kernel just gave us this descriptor and nobody else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ChildState {
    Running,
    /// Exited and not reaped: its pid (and so its group id) cannot be reused yet.
    Zombie,
    /// Reaped by someone else (a `waitpid(-1)` elsewhere, or SIGCHLD ignored).
    Gone,
}

/// Whether the child has exited, without reaping it.
fn child_state(pid: i32) -> ChildState {
    // SAFETY: waitid(2) writes into a zeroed siginfo_t we own.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
        if rc != 0 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => ChildState::Running,
                _ => ChildState::Gone,
            }
        } else if info.si_pid() != 0 {
            ChildState::Zombie
        } else {
            ChildState::Running
        }
    }
}

fn exited(pid: i32) -> bool {
    child_state(pid) != ChildState::Running
}

/// Waits until `until` for the child to exit (without reaping it).
fn wait_exit(pid: i32, pidfd: Option<&OwnedFd>, until: Instant) -> bool {
    loop {
        if exited(pid) {
            return true;
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        match pidfd {
            Some(fd) => {
                let mut fds = [pollfd(fd.as_raw_fd(), libc::POLLIN)];
                // SAFETY: a valid array of one pollfd.
                unsafe { libc::poll(fds.as_mut_ptr(), 1, millis_until(now, until)) };
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) on our own child's group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

pub(crate) fn reap(pid: i32) -> ExitStatus {
    let mut status = 0;
    loop {
        // SAFETY: waitpid(2) on our own child, into an int we own.
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return ExitStatus::from_raw(status);
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            // A failed wait (the child reaped elsewhere) reads as killed by SIGKILL.
            return ExitStatus::from_raw(libc::SIGKILL);
        }
    }
}

/// Reads what is ready (at most 16 chunks, to stay fair to the other pipe); closes the pipe
/// at end of file or on error.
fn pump<R: Read>(pipe: &mut Option<R>, buf: &mut [u8], mut sink: impl FnMut(&[u8])) {
    let Some(reader) = pipe else { return };
    for _ in 0..16 {
        match reader.read(buf) {
            Ok(0) => {
                *pipe = None;
                return;
            }
            Ok(n) => sink(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => {
                *pipe = None;
                return;
            }
        }
    }
}

struct Input {
    pipe: File,
    bytes: Vec<u8>,
    written: usize,
}

impl Input {
    /// Writes what the pipe takes; true when done (all written, or the reader is gone).
    fn write(&mut self) -> bool {
        loop {
            if self.written >= self.bytes.len() {
                return true;
            }
            match self.pipe.write(&self.bytes[self.written..]) {
                Ok(0) => return true,
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(_) => return true,
            }
        }
    }
}

/// The first `max` bytes of a stream, and how many there were in all.
pub(crate) struct Capture {
    kept: Vec<u8>,
    total: u64,
    max: usize,
}

impl Capture {
    pub(crate) fn new(max: usize) -> Capture {
        Capture { kept: Vec::new(), total: 0, max }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        let room = self.max.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&data[..data.len().min(room)]);
        self.total += data.len() as u64;
    }

    /// The kept bytes as lossy UTF-8 of at most `max` bytes, and whether anything was cut.
    /// A character split by the cut is dropped whole rather than shown as U+FFFD.
    pub(crate) fn finish(self) -> (String, bool) {
        let mut truncated = self.total > self.kept.len() as u64;
        let mut kept = self.kept;
        if truncated {
            let cut = kept.len() - incomplete_tail(&kept);
            kept.truncate(cut);
        }
        let mut text = match String::from_utf8(kept) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        };
        // U+FFFD takes three bytes where the invalid byte took one: keep the bound.
        if text.len() > self.max {
            let mut cut = self.max;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            truncated = true;
        }
        (text, truncated)
    }
}

/// How many bytes at the end of `bytes` are the start of a UTF-8 character that is not
/// complete.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead byte
        }
        let len = match byte {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        return if len > back { back } else { 0 };
    }
    0
}

/// Splits stderr into lines for a callback.
struct Lines<'a> {
    callback: &'a mut dyn FnMut(&str),
    pending: Vec<u8>,
    overlong: bool,
}

impl Lines<'_> {
    fn push(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let (part, rest, complete) = match data.iter().position(|&b| b == b'\n') {
                Some(i) => (&data[..i], &data[i + 1..], true),
                None => (data, &[][..], false),
            };
            let room = MAX_LINE.saturating_sub(self.pending.len());
            self.overlong |= part.len() > room;
            self.pending.extend_from_slice(&part[..part.len().min(room)]);
            if complete {
                self.emit();
            }
            data = rest;
        }
    }

    fn emit(&mut self) {
        let mut kept = std::mem::take(&mut self.pending);
        if self.overlong {
            let cut = kept.len() - incomplete_tail(&kept);
            kept.truncate(cut);
        }
        (self.callback)(&String::from_utf8_lossy(&kept));
        self.overlong = false;
    }

    fn finish(&mut self) {
        if !self.pending.is_empty() {
            self.emit();
        }
    }
}

/// What `/proc/PID/stat` says of a process: its parent, group, session and start time
/// (field 22, in clock ticks since boot, which tells a process from a later one that got
/// its pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub ppid: i32,
    pub pgrp: i32,
    pub sid: i32,
    pub start_time: u64,
}

impl ProcStat {
    /// The stat of a live process.
    pub fn of(pid: i32) -> Option<ProcStat> {
        let text = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        ProcStat::parse(&text)
    }

    /// Fields 4 (ppid), 5 (pgrp), 6 (session) and 22 (starttime) of a stat line. The
    /// command name (field 2, in parentheses) may hold spaces and parentheses, so fields are
    /// counted from the last `)`. Allocates nothing: a child may call it between fork and exec.
    pub fn parse(line: &[u8]) -> Option<ProcStat> {
        let close = line.iter().rposition(|&b| b == b')')?;
        let mut fields = line[close + 1..].split(|&b| b == b' ').filter(|f| !f.is_empty());
        let mut nth = |n: usize| -> Option<&[u8]> { fields.nth(n) };
        // Field 3 (the state) is the first after the name.
        let (ppid, pgrp, sid, start) = (nth(1)?, nth(0)?, nth(0)?, nth(15)?);
        let number = |bytes: &[u8]| std::str::from_utf8(bytes).ok()?.trim().parse::<i64>().ok();
        Some(ProcStat {
            ppid: i32::try_from(number(ppid)?).ok()?,
            pgrp: i32::try_from(number(pgrp)?).ok()?,
            sid: i32::try_from(number(sid)?).ok()?,
            start_time: u64::try_from(number(start)?).ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_the_first_bytes_and_counts_the_rest() {
        let mut c = Capture::new(4);
        c.push(b"ab");
        c.push(b"cdef");
        assert_eq!(c.finish(), ("abcd".to_string(), true));
        let mut c = Capture::new(4);
        c.push(b"abcd");
        assert_eq!(c.finish(), ("abcd".to_string(), false));
    }

    #[test]
    fn capture_never_splits_a_character() {
        // "é" is two bytes: a cut after 5 bytes drops the half character.
        let mut c = Capture::new(5);
        c.push("ééé".as_bytes());
        assert_eq!(c.finish(), ("éé".to_string(), true));
        let mut c = Capture::new(3);
        c.push("€x".as_bytes()); // three bytes, then one more
        assert_eq!(c.finish(), ("€".to_string(), true));
        let mut c = Capture::new(2);
        c.push("€".as_bytes());
        assert_eq!(c.finish(), (String::new(), true));
    }

    #[test]
    fn capture_keeps_invalid_bytes_as_replacement_within_the_bound() {
        let mut c = Capture::new(4);
        c.push(b"a\xffb");
        assert_eq!(c.finish(), ("a\u{fffd}".to_string(), true));
        let mut c = Capture::new(8);
        c.push(b"a\xffb");
        assert_eq!(c.finish(), ("a\u{fffd}b".to_string(), false));
        // A stream that ends on half a character keeps it, as U+FFFD: it was not cut.
        let mut c = Capture::new(8);
        c.push(&"é".as_bytes()[..1]);
        assert_eq!(c.finish(), ("\u{fffd}".to_string(), false));
    }

    #[test]
    fn incomplete_tail_finds_the_partial_character() {
        assert_eq!(incomplete_tail(b""), 0);
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_tail("é".as_bytes()), 0);
        assert_eq!(incomplete_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_tail("😀".as_bytes()), 0);
        assert_eq!(incomplete_tail(b"\x80\x80\x80\x80"), 0);
    }

    #[test]
    fn lines_split_on_newlines_across_chunks() {
        let mut seen = Vec::new();
        let mut callback = |line: &str| seen.push(line.to_string());
        let mut lines = Lines { callback: &mut callback, pending: Vec::new(), overlong: false };
        lines.push(b"one\ntw");
        lines.push(b"o\n\nthree");
        lines.finish();
        assert_eq!(seen, ["one", "two", "", "three"]);
    }

    #[test]
    fn registry_ignores_ids_that_would_signal_everything() {
        register_group(1);
        register_group(0);
        register_group(-5);
        for slot in &GROUPS {
            assert!(!matches!(slot.load(Ordering::SeqCst), i32::MIN..=-1 | 1));
        }
    }

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let line = b"42 (a) b (c) S 1 42 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 98765 0 0\n";
        assert_eq!(ProcStat::parse(line), Some(ProcStat { ppid: 1, pgrp: 42, sid: 7, start_time: 98765 }));
        assert_eq!(ProcStat::parse(b"42 (x) S 1"), None);
        let own = ProcStat::of(std::process::id() as i32).unwrap();
        assert_eq!(own.ppid, std::os::unix::process::parent_id() as i32);
    }
}
