//! The sandbox's spawn: every command the sandbox runs starts here, as the leader of a
//! process group of its own that is registered for [`crate::signals`] before the command
//! can run a line, and, on cgroup v2, born in its call's cgroup (`clone3(2)` with
//! `CLONE_INTO_CGROUP`, Linux 5.7).
//!
//! Why not `std::process::Command::spawn`: it returns only once the child has exec'd, and
//! a `little` stopped by a signal in between found the command's group not yet registered
//! and left running what the command had started by then; and it cannot start a child in
//! a cgroup, only move it there, which writes `cgroup.procs`, taking the cgroup core's
//! thread-group lock for writing and waiting out an RCU grace period (about 10 ms on a busy
//! machine; a birth in the cgroup takes that lock only for reading).
//!
//! The window between the clone and the registration is closed both ways: the spawning
//! thread blocks the stop signals until the group is registered, and the signal handler,
//! run on another thread, waits for spawns under way ([`crate::supervise::SpawnWindow`]).
//!
//! Where the kernel refuses clone3 into a cgroup (`ENOSYS`: no clone3, or a seccomp filter
//! that hides it, as container runtimes' default profiles do; `EINVAL`, `E2BIG`: no
//! `CLONE_INTO_CGROUP`; `EOPNOTSUPP`), the refusal is remembered for the life of the
//! process ([`refused`] says why, for the bound report), and children are made by
//! `fork(2)` and move into their cgroups themselves before `exec`.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString, c_char};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::limits::{CallCgroup, JoinFds, Rlimit, apply_in_child};
use crate::supervise::{
    BeforeExec, CgroupHandles, SpawnWindow, pidfd_open, prepare_child, reap, register_call, unregister_group,
};

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

/// A running child: its pid (also its process group, registered), a pidfd for it where the
/// kernel gives one, and the parent's ends of its pipes.
pub(crate) struct Spawned {
    pub pid: i32,
    pub pidfd: Option<OwnedFd>,
    pub stdin: Option<File>,
    pub stdout: File,
    pub stderr: File,
}

/// How the child is set up before `exec`, besides its pipes and its cgroups.
pub(crate) struct ChildSetup<'a> {
    /// The process that spawns it (the child dies with it, and checks it is still there).
    pub parent: libc::pid_t,
    /// A descriptor it inherits; all others above 2 are closed at exec.
    pub keep_fd: Option<RawFd>,
    pub rlimits: &'a [Option<Rlimit>],
    /// Run last before `exec` ([`crate::supervise::BeforeExec`]).
    pub before_exec: Option<&'a BeforeExec>,
}

/// Which environment the child gets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Environment {
    /// Exactly the variables the command sets (`Command::env`), as after `env_clear`: what
    /// the sandbox passes, always.
    Exact,
    /// This process's environment with the command's `env` and `env_remove` applied (std's
    /// default; `std` offers no way to read whether `env_clear` was called).
    Inherited,
}

/// Where the child goes: born in a cgroup v2 directory (open) where clone3 allows, the
/// files it writes `0` into to join its other cgroups, whether born in the v2 one or not,
/// and what the registry of running commands keeps to kill them all.
pub(crate) struct Placement {
    pub born_in: Option<RawFd>,
    pub join_if_born: JoinFds,
    pub join_if_moved: JoinFds,
    pub handles: CgroupHandles,
}

impl Placement {
    /// No cgroup.
    pub(crate) fn none() -> Placement {
        Placement { born_in: None, join_if_born: [-1; 3], join_if_moved: [-1; 3], handles: CgroupHandles::default() }
    }

    /// The call's cgroups, or none.
    pub(crate) fn of(cgroup: Option<&CallCgroup>) -> Placement {
        match cgroup {
            None => Placement::none(),
            Some(cgroup) => Placement {
                born_in: cgroup.clone_into(),
                join_if_born: cgroup.join_fds(true),
                join_if_moved: cgroup.join_fds(false),
                handles: cgroup.handles(),
            },
        }
    }
}

/// Spawns `command` in a process group of its own, registered before it runs; stdin a
/// pipe when `piped_stdin`, else `/dev/null`; stdout and stderr pipes; in the cgroups of
/// `placement`. `Err` names the program and why it could not start.
pub(crate) fn spawn(
    command: &Command,
    environment: Environment,
    piped_stdin: bool,
    setup: &ChildSetup<'_>,
    placement: Placement,
) -> Result<Spawned, String> {
    let program_name = command.get_program().to_string_lossy().into_owned();
    let cannot = |what: &str, err: io::Error| format!("cannot start `{program_name}`: {what}: {err}");
    let cstring = |bytes: &[u8]| CString::new(bytes).map_err(|_| format!("cannot start `{program_name}`: a NUL byte"));
    // Everything the child needs is made here: between clone and exec it allocates nothing.
    let variables = environment_of(command, environment);
    let path = resolve(command.get_program(), variables.get(OsStr::new("PATH")).map(OsString::as_os_str))
        .ok_or_else(|| format!("cannot start `{program_name}`: {}", io::Error::from_raw_os_error(libc::ENOENT)))?;
    let program = cstring(path.as_os_str().as_bytes())?;
    let mut argv = vec![cstring(command.get_program().as_bytes())?];
    for arg in command.get_args() {
        argv.push(cstring(arg.as_bytes())?);
    }
    let mut envp = Vec::with_capacity(variables.len());
    for (name, value) in &variables {
        envp.push(cstring(&[name.as_bytes(), b"=", value.as_bytes()].concat())?);
    }
    let cwd = command.get_current_dir().map(|dir| cstring(dir.as_os_str().as_bytes())).transpose()?;
    let pointers = |strings: &[CString]| -> Vec<*const c_char> {
        strings.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect()
    };
    let (argv_ptrs, envp_ptrs) = (pointers(&argv), pointers(&envp));
    let exec = Exec { program: &program, argv: &argv_ptrs, envp: &envp_ptrs, cwd: cwd.as_ref() };

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
    let child = Child {
        fds: [stdin_read.as_raw_fd(), stdout_write.as_raw_fd(), stderr_write.as_raw_fd()],
        error: error_write.as_raw_fd(),
        setup,
        exec,
    };

    let window = SpawnWindow::open();
    let born_in = placement.born_in.filter(|_| REFUSED.load(Ordering::SeqCst) == 0);
    let mut forked = None;
    if let Some(dir) = born_in {
        let mut pidfd: RawFd = -1;
        let args = CloneArgs {
            flags: CLONE_INTO_CGROUP | CLONE_PIDFD,
            pidfd: &mut pidfd as *mut RawFd as u64,
            exit_signal: libc::SIGCHLD as u64,
            cgroup: dir as u64,
            ..CloneArgs::default()
        };
        // SAFETY: clone3(2) without CLONE_VM is fork(2): the child gets a copy of this
        // process (this thread alone) and returns 0 on the same stack; it then makes only
        // async-signal-safe system calls on data prepared above, and execs or exits.
        let pid = unsafe { libc::syscall(libc::SYS_clone3, &args as *const CloneArgs, size_of::<CloneArgs>()) };
        if pid == 0 {
            // SAFETY: in the child; see above.
            unsafe { child.run(placement.join_if_born) }
        }
        if pid > 0 {
            // SAFETY: CLONE_PIDFD stored a new descriptor, ours alone.
            forked = Some((pid as i32, (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) })));
        } else {
            let err = io::Error::last_os_error();
            let errno = err.raw_os_error().unwrap_or(0);
            if !is_refusal(errno) {
                return Err(cannot("clone3", err));
            }
            REFUSED.store(errno, Ordering::SeqCst);
        }
    }
    let (pid, pidfd) = match forked {
        Some(forked) => forked,
        None => {
            // SAFETY: as for clone3 above: the child runs only async-signal-safe calls.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // SAFETY: in the child; see above.
                unsafe { child.run(placement.join_if_moved) }
            }
            if pid < 0 {
                return Err(cannot("fork", io::Error::last_os_error()));
            }
            (pid, pidfd_open(pid))
        }
    };
    // The child makes itself its group's leader too; whichever runs first, the group exists
    // before it is registered. (Once the child has exec'd this fails, harmlessly.)
    // SAFETY: setpgid(2) on our own child.
    unsafe { libc::setpgid(pid, pid) };
    register_call(pid, placement.handles);
    drop(window);

    drop((stdin_read, stdout_write, stderr_write, error_write));
    if let Some(errno) = read_errno(&error_read) {
        unregister_group(pid);
        let _ = reap(pid);
        return Err(format!("cannot start `{program_name}`: {}", io::Error::from_raw_os_error(errno)));
    }
    Ok(Spawned {
        pid,
        pidfd,
        stdin: stdin_write.map(File::from),
        stdout: File::from(stdout_read),
        stderr: File::from(stderr_read),
    })
}

/// The variables the child gets, sorted by name.
fn environment_of(command: &Command, environment: Environment) -> BTreeMap<OsString, OsString> {
    let mut variables: BTreeMap<OsString, OsString> = match environment {
        Environment::Exact => BTreeMap::new(),
        Environment::Inherited => std::env::vars_os().collect(),
    };
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => variables.insert(name.to_owned(), value.to_owned()),
            None => variables.remove(name),
        };
    }
    variables
}

/// The file `program` names: itself when it holds a `/`, else the first executable file of
/// that name in the child's `PATH` (this process's when the child has none), as `execvp`
/// would find it.
fn resolve(program: &OsStr, child_path: Option<&OsStr>) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    let own = std::env::var_os("PATH");
    let path = child_path.or(own.as_deref()).unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(path).map(|dir| dir.join(program)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    path.metadata().is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// What `execve` gets, made before the clone.
struct Exec<'a> {
    program: &'a CString,
    argv: &'a [*const c_char],
    envp: &'a [*const c_char],
    cwd: Option<&'a CString>,
}

/// The child's side of a spawn, prepared in the parent.
struct Child<'a> {
    /// Its stdin, stdout and stderr.
    fds: [RawFd; 3],
    /// Where it writes its errno when it cannot exec.
    error: RawFd,
    setup: &'a ChildSetup<'a>,
    exec: Exec<'a>,
}

/// The signals `little` stops on ([`crate::signals`]); blocked while a spawn is under way.
pub(crate) const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

impl Child<'_> {
    /// In the child, between clone and exec: its own process group, its pipes on 0, 1, 2,
    /// the parent's death its own, no other descriptor past exec, its cgroups joined
    /// (`join`), the rlimits, default signal handling, the working directory, the caller's
    /// hook; then `execve`. On any failure its errno goes to `error` and it exits 127.
    ///
    /// # Safety
    /// Only in the child of a fork-like clone: it never returns.
    unsafe fn run(&self, join: JoinFds) -> ! {
        let error = self.error;
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
            for (target, &fd) in self.fds.iter().enumerate() {
                // dup2 leaves the copy open across exec (the originals, above 2, close).
                if libc::dup2(fd, target as RawFd) < 0 {
                    fail(last());
                }
            }
            if let Err(err) = prepare_child(self.setup.parent, self.setup.keep_fd) {
                fail(err.raw_os_error().unwrap_or(libc::EIO));
            }
            if let Err(err) = apply_in_child(join, self.setup.rlimits) {
                fail(err.raw_os_error().unwrap_or(libc::EIO));
            }
            // The parent's handlers for the stop signals are not the child's (one would kill
            // the parent's other commands from here): default first, then nothing blocked,
            // and SIGPIPE back to its default as std's spawn does.
            for signal in STOP_SIGNALS {
                libc::signal(signal, libc::SIG_DFL);
            }
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if let Some(cwd) = self.exec.cwd
                && libc::chdir(cwd.as_ptr()) != 0
            {
                fail(last());
            }
            if let Some(before_exec) = self.setup.before_exec
                && let Err(err) = before_exec()
            {
                fail(err.raw_os_error().unwrap_or(libc::EIO));
            }
            libc::execve(self.exec.program.as_ptr(), self.exec.argv.as_ptr(), self.exec.envp.as_ptr());
            fail(last())
        }
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
        ChildSetup { parent: unsafe { libc::getpid() }, keep_fd: None, rlimits: &[], before_exec: None }
    }

    fn born_in(cgroup: &TestCgroup) -> Placement {
        Placement { born_in: Some(cgroup.1.as_raw_fd()), ..Placement::none() }
    }

    /// Runs a spawned child to its end: its exit code, stdout and stderr.
    fn finish(mut child: Spawned, input: &[u8]) -> (Option<i32>, String, String) {
        use std::io::{Read, Write};
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input).unwrap();
        }
        let (mut out, mut err) = (String::new(), String::new());
        child.stdout.read_to_string(&mut out).unwrap();
        child.stderr.read_to_string(&mut err).unwrap();
        unregister_group(child.pid);
        (reap(child.pid).code(), out, err)
    }

    #[test]
    fn a_child_is_born_in_the_cgroup_with_its_output_and_exit_code() {
        let Some(cgroup) = TestCgroup::new("born") else { return eprintln!("note: no writable cgroup v2 here") };
        let mut command = Command::new("/bin/sh");
        command.args(["-c", "cat /proc/self/cgroup; read line; echo \"$line\" >&2; exit 7"]).env_clear();
        let child = spawn(&command, Environment::Exact, true, &setup(), born_in(&cgroup)).unwrap();
        let (code, out, err) = finish(child, b"given\n");
        assert_eq!((code, err.as_str()), (Some(7), "given\n"));
        let name = cgroup.0.file_name().unwrap().to_string_lossy().into_owned();
        match refused() {
            None => assert!(out.lines().any(|line| line.starts_with("0::") && line.ends_with(&name)), "{out}"),
            Some(err) => eprintln!("note: clone3 into a cgroup is refused here: {err}"),
        }
    }

    #[test]
    fn a_program_that_cannot_run_is_an_error_naming_it() {
        let cgroup = TestCgroup::new("missing");
        for program in ["/nonexistent/program", "no-such-program-anywhere"] {
            let placement = cgroup.as_ref().map_or_else(Placement::none, born_in);
            let Err(err) = spawn(&Command::new(program), Environment::Inherited, false, &setup(), placement) else {
                panic!("`{program}` ran");
            };
            assert!(err.contains(&format!("`{program}`")) && err.contains("No such file"), "{err}");
        }
    }

    #[test]
    fn the_child_is_its_groups_leader_registered_before_it_runs() {
        let mut command = Command::new("sh");
        command.args(["-c", "cut -d' ' -f5 /proc/$$/stat"]);
        let child = spawn(&command, Environment::Inherited, false, &setup(), Placement::none()).unwrap();
        let pid = child.pid;
        let registered = crate::supervise::registered_groups().contains(&pid);
        let (code, out, _) = finish(child, b"");
        assert!(registered, "the group of {pid} was not registered when spawn returned");
        assert_eq!((code, out.trim()), (Some(0), pid.to_string().as_str()));
    }

    #[test]
    fn the_environment_is_exact_or_inherited_with_the_changes() {
        let mut command = Command::new("/usr/bin/env");
        command.env("LITTLE_SPAWN_SET", "1").env_remove("HOME");
        let (_, exact, _) =
            finish(spawn(&command, Environment::Exact, false, &setup(), Placement::none()).unwrap(), b"");
        assert_eq!(exact, "LITTLE_SPAWN_SET=1\n");
        let (_, inherited, _) =
            finish(spawn(&command, Environment::Inherited, false, &setup(), Placement::none()).unwrap(), b"");
        assert!(inherited.lines().any(|line| line == "LITTLE_SPAWN_SET=1"), "{inherited}");
        assert!(inherited.lines().any(|line| line.starts_with("PATH=")), "{inherited}");
        assert!(!inherited.lines().any(|line| line.starts_with("HOME=")), "{inherited}");
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
