//! The sandbox's own spawn through `clone3(2)` with `CLONE_INTO_CGROUP` (Linux 5.7): the
//! child is born in its call's cgroup v2 instead of being moved into it between fork and
//! exec. A move writes `cgroup.procs`, which takes the cgroup core's thread-group lock for
//! writing and waits out an RCU grace period (about 10 ms on a busy machine); a birth in
//! the cgroup takes it only for reading.
//!
//! Where the kernel refuses (`ENOSYS`: no clone3, or a seccomp filter that hides it;
//! `EINVAL`, `E2BIG`: no `CLONE_INTO_CGROUP`; `EOPNOTSUPP`), the refusal is remembered for
//! the life of the process and the caller spawns with `std::process::Command` as before
//! ([`refused`] says why, for the bound report).

use std::ffi::{CString, c_char};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::limits::{JoinFds, Rlimit, apply_in_child};
use crate::supervise::{prepare_child, reap};

/// `struct clone_args` of `<linux/sched.h>`, up to `cgroup` (`CLONE_ARGS_SIZE_VER2`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

const CLONE_PIDFD: u64 = 0x1000;
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// The errno of the first refusal; 0 while clone3 into a cgroup has not been refused.
static REFUSED: AtomicI32 = AtomicI32::new(0);

/// Why this process spawns by moving children into their cgroup rather than through
/// clone3, if it does (known once a spawn or [`probe`] was refused).
pub fn refused() -> Option<io::Error> {
    match REFUSED.load(Ordering::SeqCst) {
        0 => None,
        errno => Some(io::Error::from_raw_os_error(errno)),
    }
}

/// Whether the errno of a failed clone3 means the kernel cannot do it at all (so the
/// caller falls back), rather than that this one spawn failed.
fn is_refusal(errno: i32) -> bool {
    matches!(errno, libc::ENOSYS | libc::EINVAL | libc::E2BIG | libc::EOPNOTSUPP)
}

/// A child born in its cgroup: its pid, a pidfd for it, and the parent's ends of its pipes.
pub(crate) struct Spawned {
    pub pid: i32,
    pub pidfd: Option<OwnedFd>,
    pub stdin: Option<File>,
    pub stdout: File,
    pub stderr: File,
}

/// How the child is set up before `exec`, besides its pipes.
pub(crate) struct ChildSetup<'a> {
    /// The process that spawns it (the child dies with it, and checks it is still there).
    pub parent: libc::pid_t,
    /// A descriptor it inherits; all others above 2 are closed at exec.
    pub keep_fd: Option<RawFd>,
    pub rlimits: &'a [Option<Rlimit>],
    /// The files it writes `0` into to join its other cgroups (v1's `tasks`).
    pub join: JoinFds,
}

/// Spawns `command` (whose environment must have been cleared and set whole: exactly the
/// variables `get_envs` lists are passed) in a process group of its own, born in the
/// cgroup whose directory `cgroup` is open; stdin a pipe when `piped_stdin`, else
/// `/dev/null`; stdout and stderr pipes. `Ok(None)`: clone3 into a cgroup is refused here
/// (or the program is not an absolute path), so the caller spawns otherwise.
pub(crate) fn spawn_into_cgroup(
    command: &Command,
    cgroup: RawFd,
    piped_stdin: bool,
    setup: &ChildSetup<'_>,
) -> Result<Option<Spawned>, String> {
    if REFUSED.load(Ordering::SeqCst) != 0 || !command.get_program().as_bytes().starts_with(b"/") {
        return Ok(None);
    }
    let program_name = command.get_program().to_string_lossy().into_owned();
    let cannot = |what: &str, err: io::Error| format!("cannot start `{program_name}`: {what}: {err}");
    let cstring = |bytes: &[u8]| CString::new(bytes).map_err(|_| format!("cannot start `{program_name}`: a NUL byte"));
    // Everything the child needs is made here: between clone and exec it allocates nothing.
    let program = cstring(command.get_program().as_bytes())?;
    let mut argv = vec![program.clone()];
    for arg in command.get_args() {
        argv.push(cstring(arg.as_bytes())?);
    }
    let mut envp = Vec::new();
    for (name, value) in command.get_envs() {
        if let Some(value) = value {
            envp.push(cstring(&[name.as_bytes(), b"=", value.as_bytes()].concat())?);
        }
    }
    let cwd = command.get_current_dir().map(|dir| cstring(dir.as_os_str().as_bytes())).transpose()?;
    let pointers = |strings: &[CString]| -> Vec<*const c_char> {
        strings.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect()
    };
    let (argv_ptrs, envp_ptrs) = (pointers(&argv), pointers(&envp));

    let (stdin_read, stdin_write) = if piped_stdin {
        let (read, write) = pipe_above_stdio().map_err(|e| cannot("pipe", e))?;
        (read, Some(write))
    } else {
        (dev_null().map_err(|e| cannot("/dev/null", e))?, None)
    };
    let (stdout_read, stdout_write) = pipe_above_stdio().map_err(|e| cannot("pipe", e))?;
    let (stderr_read, stderr_write) = pipe_above_stdio().map_err(|e| cannot("pipe", e))?;
    // The child writes its errno here when it cannot exec; closed at exec, so end of file
    // means the program runs.
    let (error_read, error_write) = pipe_above_stdio().map_err(|e| cannot("pipe", e))?;

    let mut pidfd: RawFd = -1;
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP | CLONE_PIDFD,
        pidfd: &mut pidfd as *mut RawFd as u64,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: cgroup as u64,
        ..CloneArgs::default()
    };
    let child_fds = [stdin_read.as_raw_fd(), stdout_write.as_raw_fd(), stderr_write.as_raw_fd()];
    // SAFETY: clone3(2) without CLONE_VM is fork(2): the child gets a copy of this
    // process (this thread alone) and returns 0 on the same stack; it then makes only
    // async-signal-safe system calls on data prepared above, and execs or exits.
    let pid = unsafe { libc::syscall(libc::SYS_clone3, &args as *const CloneArgs, size_of::<CloneArgs>()) };
    if pid == 0 {
        // SAFETY: in the child; see above.
        unsafe { in_child(&child_fds, error_write.as_raw_fd(), setup, &program, &argv_ptrs, &envp_ptrs, cwd.as_ref()) }
    }
    if pid < 0 {
        let err = io::Error::last_os_error();
        let errno = err.raw_os_error().unwrap_or(0);
        if is_refusal(errno) {
            REFUSED.store(errno, Ordering::SeqCst);
            return Ok(None);
        }
        return Err(cannot("clone3", err));
    }
    let pid = pid as i32;
    // SAFETY: CLONE_PIDFD stored a new descriptor, ours alone.
    let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
    drop((stdin_read, stdout_write, stderr_write, error_write));
    if let Some(errno) = read_errno(&error_read) {
        let _ = reap(pid);
        return Err(format!("cannot start `{program_name}`: {}", io::Error::from_raw_os_error(errno)));
    }
    Ok(Some(Spawned {
        pid,
        pidfd,
        stdin: stdin_write.map(File::from),
        stdout: File::from(stdout_read),
        stderr: File::from(stderr_read),
    }))
}

/// The child, between clone3 and exec: its own process group, its pipes on 0, 1, 2, the
/// parent's death its own, no other descriptor past exec, default signal handling, the
/// rlimits, the working directory; then `execve`. On any failure its errno goes to
/// `error` and it exits 127.
///
/// # Safety
/// Only in the child of a fork-like clone: it never returns.
#[allow(clippy::too_many_arguments)]
unsafe fn in_child(
    fds: &[RawFd; 3],
    error: RawFd,
    setup: &ChildSetup<'_>,
    program: &CString,
    argv: &[*const c_char],
    envp: &[*const c_char],
    cwd: Option<&CString>,
) -> ! {
    let fail = |errno: i32| -> ! {
        let bytes = errno.to_ne_bytes();
        // SAFETY: write(2) and _exit(2) are async-signal-safe.
        unsafe {
            libc::write(error, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(127)
        }
    };
    let last = || io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
    // SAFETY: plain system calls on integers and on memory prepared before the clone.
    unsafe {
        if libc::setpgid(0, 0) != 0 {
            fail(last());
        }
        for (target, &fd) in fds.iter().enumerate() {
            // dup2 leaves the copy open across exec (the originals, above 2, close).
            if libc::dup2(fd, target as RawFd) < 0 {
                fail(last());
            }
        }
        if let Err(err) = prepare_child(setup.parent, setup.keep_fd) {
            fail(err.raw_os_error().unwrap_or(libc::EIO));
        }
        if let Err(err) = apply_in_child(setup.join, setup.rlimits) {
            fail(err.raw_os_error().unwrap_or(libc::EIO));
        }
        // As std's spawn does: the signals blocked and SIGPIPE ignored here are not the
        // command's business.
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        if let Some(cwd) = cwd
            && libc::chdir(cwd.as_ptr()) != 0
        {
            fail(last());
        }
        libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr());
        fail(last())
    }
}

/// The errno the child reported, or `None` once its end closed at exec.
fn read_errno(read: &OwnedFd) -> Option<i32> {
    let mut bytes = [0u8; 4];
    let mut got = 0;
    loop {
        // SAFETY: read(2) into the rest of a buffer we own.
        let n = unsafe { libc::read(read.as_raw_fd(), bytes[got..].as_mut_ptr().cast(), bytes.len() - got) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return None;
        }
        got += n as usize;
        if got == bytes.len() {
            return Some(i32::from_ne_bytes(bytes));
        }
    }
}

/// A close-on-exec pipe whose ends are both above 2, so that a caller running with a
/// standard stream closed cannot have them replaced by the child's stdio.
pub(crate) fn pipe_above_stdio() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1, -1];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and ours.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(read)?, above_stdio(write)?))
}

fn dev_null() -> io::Result<OwnedFd> {
    // SAFETY: open(2) of a NUL-terminated path.
    let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, ours alone.
    above_stdio(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `fd` moved above 2 when it is 0, 1 or 2 (close-on-exec).
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if moved < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `moved` is new and ours.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// Whether clone3 can put a child into the cgroup whose directory `cgroup` is open: a
/// child is cloned there and exits at once. A refusal is remembered ([`refused`]).
pub(crate) fn probe(cgroup: RawFd) -> bool {
    if REFUSED.load(Ordering::SeqCst) != 0 {
        return false;
    }
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: cgroup as u64,
        ..CloneArgs::default()
    };
    // SAFETY: a fork-like clone whose child exits at once, running no code of ours.
    let pid = unsafe { libc::syscall(libc::SYS_clone3, &args as *const CloneArgs, size_of::<CloneArgs>()) };
    if pid == 0 {
        // SAFETY: in the child: _exit(2) only.
        unsafe { libc::_exit(0) }
    }
    if pid < 0 {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if is_refusal(errno) {
            REFUSED.store(errno, Ordering::SeqCst);
        }
        return false;
    }
    let _ = reap(pid as i32);
    true
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// A cgroup v2 of this test's own (removed on drop), where one can be made.
    struct TestCgroup(PathBuf, OwnedFd);

    impl TestCgroup {
        fn new(name: &str) -> Option<TestCgroup> {
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            let root = std::env::var_os(crate::limits::CGROUP_V2_ROOT_VAR).map(PathBuf::from).or_else(|| {
                mounts.lines().find_map(|line| {
                    let (before, after) = line.split_once(" - ")?;
                    after.starts_with("cgroup2 ").then(|| before.split(' ').nth(4).map(PathBuf::from))?
                })
            })?;
            let dir = root.join(format!("little-spawn-test-{}-{name}", std::process::id()));
            std::fs::create_dir(&dir).ok()?;
            let path = CString::new(dir.as_os_str().as_bytes()).unwrap();
            // SAFETY: open(2) of a NUL-terminated path.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
            // SAFETY: a new descriptor, ours alone.
            (fd >= 0).then(|| TestCgroup(dir, unsafe { OwnedFd::from_raw_fd(fd) }))
        }
    }

    impl Drop for TestCgroup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }

    fn setup() -> ChildSetup<'static> {
        // SAFETY: getpid(2) is always safe.
        ChildSetup { parent: unsafe { libc::getpid() }, keep_fd: None, rlimits: &[], join: [-1; 3] }
    }

    #[test]
    fn a_child_is_born_in_the_cgroup_with_its_output_and_exit_code() {
        let Some(cgroup) = TestCgroup::new("born") else { return eprintln!("note: no writable cgroup v2 here") };
        let mut command = Command::new("/bin/sh");
        command.args(["-c", "cat /proc/self/cgroup; read line; echo \"$line\" >&2; exit 7"]).env_clear();
        let Some(mut child) = spawn_into_cgroup(&command, cgroup.1.as_raw_fd(), true, &setup()).unwrap() else {
            return eprintln!("note: clone3 into a cgroup is refused here: {:?}", refused());
        };
        use std::io::{Read, Write};
        child.stdin.take().unwrap().write_all(b"given\n").unwrap();
        let (mut out, mut err) = (String::new(), String::new());
        child.stdout.read_to_string(&mut out).unwrap();
        child.stderr.read_to_string(&mut err).unwrap();
        assert_eq!(reap(child.pid).code(), Some(7));
        let name = cgroup.0.file_name().unwrap().to_string_lossy().into_owned();
        assert!(out.lines().any(|line| line.starts_with("0::") && line.ends_with(&name)), "{out}");
        assert_eq!(err, "given\n");
    }

    #[test]
    fn a_program_that_cannot_run_is_an_error_naming_it() {
        let Some(cgroup) = TestCgroup::new("missing") else { return eprintln!("note: no writable cgroup v2 here") };
        let command = Command::new("/nonexistent/program");
        match spawn_into_cgroup(&command, cgroup.1.as_raw_fd(), false, &setup()) {
            Err(err) => assert!(err.contains("`/nonexistent/program`") && err.contains("No such file"), "{err}"),
            Ok(None) => eprintln!("note: clone3 into a cgroup is refused here: {:?}", refused()),
            Ok(Some(child)) => panic!("a missing program ran as {}", child.pid),
        }
    }

    #[test]
    fn only_the_kernel_saying_it_cannot_is_a_refusal() {
        for errno in [libc::ENOSYS, libc::EINVAL, libc::E2BIG, libc::EOPNOTSUPP] {
            assert!(is_refusal(errno));
        }
        for errno in [libc::EAGAIN, libc::ENOMEM, libc::EBUSY, libc::EPERM] {
            assert!(!is_refusal(errno));
        }
    }
}
