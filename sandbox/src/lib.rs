//! Runs one shell command in a sandbox (bubblewrap namespaces, or a plain process group)
//! with a time limit and bounded output; it knows nothing about workflows.
//!
//! [`Sandbox::run`] runs `bash -c COMMAND` and returns an [`Output`]: exit code, the first
//! `max_output` bytes of stdout and stderr, whether it timed out. Two modes:
//!
//! - [`Mode::Bwrap`]: under bubblewrap, in new user, network, PID, IPC, UTS and mount
//!   namespaces with every capability dropped, as user 1000 of its user namespace (the one
//!   id mapped, to the caller outside, so what it writes is the caller's). The command sees the system directories read-only
//!   (`/usr`, `/bin`, `/sbin`, `/lib`, `/lib32`, `/lib64`, `/etc`, `/opt`, as they exist on
//!   the host), a fresh `/proc`, a minimal `/dev`, an empty `/tmp`, and the [`Mount`]s at
//!   their guest paths; nothing else of the host (no home, no `/root`, no network; in `/etc`
//!   the shadow files and `/etc/ssh`, `/etc/ssl/private` are hidden). When the
//!   command ends, or at the deadline, everything it started dies with its PID namespace.
//! - [`Mode::None`]: no isolation at all; the command runs at the host paths of the mounts,
//!   in a process group of its own that is killed when the command ends or at the deadline.
//!   A process that calls `setsid` leaves that group and survives (see [`supervise`]).
//!
//! In both modes the environment is built from nothing ([`Sandbox::env`]): no variable of
//! the calling process (API keys) reaches the command, nor any file descriptor but 0, 1, 2.
//!
//! In both modes every call is bounded ([`Limits`], [`limits`]): the memory of its processes
//! together, their number, CPU time, one file's size, and after the call the size of each
//! writable mount, whose newest writes are rolled back to the bound ([`quota`]). The bound a
//! call hit is [`Output::limit`]; [`unenforced`] says which bounds this machine cannot hold.
//!
//! Requirements and limits: Linux only. bubblewrap 0.4 or newer (`--json-status-fd`, which
//! tells a sandbox that could not be set up, an `Err`, from a command that failed). Where
//! bubblewrap cannot make a user namespace, the command runs as the caller (root stays root,
//! without capabilities), and [`unenforced`] says so. Run by root, the command's user is
//! still root outside its namespace, so files root owns on the mounts are its own: the
//! system directories are read-only, `/etc`'s secrets hidden, and `/proc/sys` and
//! `/proc/sysrq-trigger` covered read-only for that reason. On kernels older than 5.3 (no pidfd) the sandbox's PID
//! namespace is torn down just after a timed-out `run` returns rather than before; older
//! than 5.11 (no `close_range`), inherited descriptors are not closed. `run` blocks the
//! calling thread, which must live until it returns (`PR_SET_PDEATHSIG` is per thread).

pub mod abort;
pub mod limits;
pub mod quota;
pub mod signals;
mod spawn;
pub mod supervise;

pub use abort::Abort;
pub use limits::{Limit, Limits, Unenforced};
pub use quota::Rollback;
pub use supervise::kill_registered_groups;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// How a command is isolated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Under bubblewrap (`bwrap`), in its own namespaces.
    Bwrap,
    /// Directly on the host, in a process group of its own: no isolation.
    None,
}

/// A host directory made visible to the command.
#[derive(Clone, Debug)]
pub struct Mount {
    pub host: PathBuf,
    pub guest: PathBuf,
    pub writable: bool,
}

/// How to run commands; see the crate documentation.
#[derive(Clone, Debug)]
pub struct Sandbox {
    pub mode: Mode,
    /// Host directories made visible; with Bwrap at `guest`, with None they are used at their host path.
    pub mounts: Vec<Mount>,
    /// The working directory, a `guest` path of one of the mounts (translated to its host path with Mode::None).
    pub workdir: PathBuf,
    pub timeout: Duration,
    /// Bytes kept of each stream (default 64 KiB).
    pub max_output: usize,
    /// The bounds of each call ([`limits`]). The working directory's mount is the scratch;
    /// every other writable mount is a memory store.
    pub limits: Limits,
    /// Runs without any bound (no cgroup, no rlimit, no size check after the call): for
    /// measuring what the bounds cost, never for a model's commands. Default false.
    pub unbounded: bool,
    /// Ends the call in flight from another thread ([`Abort`]): only this sandbox's calls
    /// are killed. Default none.
    pub abort: Option<Abort>,
}

/// What a command did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// The command's exit code; 124 on timeout; 128 + the signal when a signal killed it.
    pub exit_code: i32,
    /// The first `max_output` bytes of stdout, lossy UTF-8, cut at a character boundary.
    pub stdout: String,
    /// The first `max_output` bytes of stderr, likewise.
    pub stderr: String,
    /// Whether either stream was cut.
    pub truncated: bool,
    pub timed_out: bool,
    pub duration: Duration,
    /// The bound the call hit, if any: one hit while it ran before a mount found over its
    /// size after it.
    pub limit: Option<Limit>,
    /// When a writable mount held more than its bound after the call: what was rolled back
    /// (the first such mount).
    pub rollback: Option<Rollback>,
    /// Whether the call was ended by [`Sandbox::abort`] (exit code 137, as killed by
    /// `SIGKILL`), or not started because the abort came first.
    pub aborted: bool,
}

impl Output {
    /// A call its [`Abort`] stopped before it started.
    fn not_started() -> Output {
        Output {
            exit_code: 128 + libc::SIGKILL,
            stdout: String::new(),
            stderr: String::new(),
            truncated: false,
            timed_out: false,
            duration: Duration::ZERO,
            limit: None,
            rollback: None,
            aborted: true,
        }
    }
}

/// The default time limit of a command.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The default number of bytes kept of each stream.
pub const DEFAULT_MAX_OUTPUT: usize = 64 * 1024;
/// `PATH` as the command sees it.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Host directories shown read-only under bubblewrap (a symlink is recreated as a symlink).
const SYSTEM_DIRS: [&str; 8] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt"];
/// Files of `/etc` that hold secrets a root command could read (it owns them): shown as
/// `/dev/null`, which a bind mount makes unopenable.
const MASKED_FILES: [&str; 4] = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"];
/// Directories of `/etc` that hold private keys: shown empty.
const MASKED_DIRS: [&str; 2] = ["/etc/ssh", "/etc/ssl/private"];
/// The bubblewrap program, looked up in the calling process's `PATH`.
const BWRAP: &str = "bwrap";
/// How long [`check_available`]'s trial run may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// bubblewrap exits with 1 when it cannot set the sandbox up.
const BWRAP_SETUP_FAILED: i32 = 1;

impl Sandbox {
    /// A sandbox with the default time limit (60 s) and output bound (64 KiB per stream).
    pub fn new(mode: Mode, mounts: Vec<Mount>, workdir: impl Into<PathBuf>) -> Sandbox {
        Sandbox {
            mode,
            mounts,
            workdir: workdir.into(),
            timeout: DEFAULT_TIMEOUT,
            max_output: DEFAULT_MAX_OUTPUT,
            limits: Limits::default(),
            unbounded: false,
            abort: None,
        }
    }

    /// The path a command sees for a mount: its guest path under Bwrap, its host path under None.
    pub fn visible(&self, mount: &Mount) -> PathBuf {
        match self.mode {
            Mode::Bwrap => mount.guest.clone(),
            Mode::None => mount.host.clone(),
        }
    }

    /// Environment given to the command: exactly `PATH=/usr/local/bin:/usr/bin:/bin`,
    /// `LANG=C.UTF-8`, `HOME=<visible workdir>`. Nothing else of the caller's environment.
    pub fn env(&self) -> Vec<(String, String)> {
        let home = self.visible_workdir().unwrap_or_else(|| self.workdir.clone());
        vec![
            ("PATH".to_string(), PATH.to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
            ("HOME".to_string(), home.to_string_lossy().into_owned()),
        ]
    }

    /// Runs `bash -c command` (`sh -c` when there is no bash). `Err` only when the command
    /// cannot be started at all: bwrap missing or unable to set the sandbox up, a mount's
    /// host path missing, the working directory outside every mount. A command that fails
    /// is `Ok` with its exit code.
    pub fn run(&self, command: &str) -> Result<Output, String> {
        self.run_with(OsStr::new(BWRAP), command)
    }

    /// [`Sandbox::run`] with the bubblewrap program given (for tests).
    pub(crate) fn run_with(&self, bwrap: &OsStr, command: &str) -> Result<Output, String> {
        for mount in &self.mounts {
            if let Err(err) = fs::metadata(&mount.host) {
                return Err(format!(
                    "the sandbox cannot start: mount `{}` does not exist ({err})",
                    mount.host.display()
                ));
            }
            if self.mode == Mode::Bwrap && !mount.guest.is_absolute() {
                return Err(format!(
                    "the sandbox cannot start: the guest path `{}` of mount `{}` is not absolute",
                    mount.guest.display(),
                    mount.host.display()
                ));
            }
        }
        let Some(workdir) = self.visible_workdir() else {
            let guests: Vec<String> = self.mounts.iter().map(|m| format!("`{}`", m.guest.display())).collect();
            return Err(format!(
                "the sandbox cannot start: the working directory `{}` is inside no mount (guest paths: {})",
                self.workdir.display(),
                if guests.is_empty() { "none".to_string() } else { guests.join(", ") }
            ));
        };
        let shell = find_shell()?;
        let argv = [shell.into_os_string(), "-c".into(), command.into()];
        if self.mode == Mode::None && !workdir.is_dir() {
            return Err(format!(
                "the sandbox cannot start: the working directory `{}` is not a directory on the host",
                workdir.display()
            ));
        }
        let program = match self.mode {
            Mode::None => None,
            Mode::Bwrap => Some(resolve_program(bwrap).ok_or_else(|| not_installed(bwrap))?),
        };
        if self.abort.as_ref().is_some_and(Abort::is_aborted) {
            return Ok(Output::not_started());
        }
        // What the writable mounts held before the call, so that its writes can be told apart.
        let quotas: Vec<(&Mount, Limit, u64, quota::Snapshot)> = self
            .mounts
            .iter()
            .filter(|m| m.writable && !self.unbounded)
            .map(|m| {
                let (limit, bytes) = if self.workdir_mount().is_some_and(|w| std::ptr::eq(w, m)) {
                    (Limit::Scratch, self.limits.scratch)
                } else {
                    (Limit::MemoryStore, self.limits.memory_store)
                };
                (m, limit, bytes, quota::Snapshot::take(&m.host))
            })
            .collect();
        let cgroup = if self.unbounded { None } else { limits::CallCgroup::new(&self.limits)? };
        let rlimits = (!self.unbounded).then(|| limits::rlimits(&self.limits, self.timeout, cgroup.as_ref()));
        let bounds = Bounds { cgroup: cgroup.as_ref(), rlimits };
        let mut output = match program {
            None => {
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..]).env_clear().envs(self.env()).current_dir(&workdir);
                let extra = supervise::Extra {
                    cgroup: bounds.cgroup,
                    rlimits,
                    abort: self.abort.as_ref(),
                    ..Default::default()
                };
                supervise::supervise(cmd, None, self.timeout, self.max_output, extra)?
            }
            Some(program) => {
                let mounts: Vec<Mount> = self
                    .mounts
                    .iter()
                    .map(|m| Mount {
                        host: std::path::absolute(&m.host).unwrap_or_else(|_| m.host.clone()),
                        ..m.clone()
                    })
                    .collect();
                let how = How { userns: userns_available(), bounds: Some(bounds), abort: self.abort.as_ref() };
                run_bwrap(&program, &mounts, &workdir, &self.env(), &argv, self.timeout, self.max_output, how)?
            }
        };
        if !self.unbounded && !output.aborted {
            let memory_rlimit = !cgroup.as_ref().is_some_and(limits::CallCgroup::holds_memory);
            let nproc_rlimit = !cgroup.as_ref().is_some_and(limits::CallCgroup::holds_processes);
            output.limit = cgroup
                .as_ref()
                .and_then(limits::CallCgroup::hit)
                .or_else(|| limits::hit_by_exit(output.exit_code, &output.stderr, memory_rlimit, nproc_rlimit));
        }
        // Removes the cgroup, killing whatever is left in it.
        drop(cgroup);
        for (mount, limit, bytes, before) in &quotas {
            if let Some(rollback) = quota::enforce(&mount.host, *bytes, before) {
                output.limit.get_or_insert(*limit);
                output.rollback.get_or_insert(rollback);
            }
        }
        Ok(output)
    }

    /// The mount that holds the working directory (the innermost one), if any.
    fn workdir_mount(&self) -> Option<&Mount> {
        self.mounts.iter().filter(|m| self.workdir.starts_with(&m.guest)).max_by_key(|m| m.guest.components().count())
    }

    /// The working directory as the command sees it: the guest path under Bwrap, the host
    /// path it maps to under None; `None` when it is inside no mount.
    fn visible_workdir(&self) -> Option<PathBuf> {
        let mount = self.workdir_mount()?;
        match self.mode {
            Mode::Bwrap => Some(self.workdir.clone()),
            Mode::None => {
                let rest = self.workdir.strip_prefix(&mount.guest).ok()?;
                Some(if rest.as_os_str().is_empty() { mount.host.clone() } else { mount.host.join(rest) })
            }
        }
    }
}

/// Whether `mode` can be used here. `Mode::None` always can. For `Mode::Bwrap`, `bwrap` must
/// be installed and able to create its namespaces: a trivial sandbox is run once (the
/// answer is kept for the life of the process). `Err` is a message for the user.
pub fn check_available(mode: Mode) -> Result<(), String> {
    match mode {
        Mode::None => Ok(()),
        Mode::Bwrap => {
            static ANSWER: OnceLock<Result<(), String>> = OnceLock::new();
            ANSWER
                .get_or_init(|| {
                    let userns = check_bwrap(OsStr::new(BWRAP))?;
                    let _ = USERNS.set(userns);
                    Ok(())
                })
                .clone()
        }
    }
}

/// Whether bubblewrap can make a user namespace here (set by [`check_available`]).
static USERNS: OnceLock<bool> = OnceLock::new();

fn userns_available() -> bool {
    USERNS.get().copied().unwrap_or(true)
}

/// The bounds this machine cannot hold as stated for commands run in `mode`, in a fixed
/// order (`memory`, `processes`, then, under bubblewrap without user namespaces, `user`);
/// each with what holds instead. Probed once per process.
pub fn unenforced(mode: Mode) -> Vec<Unenforced> {
    let mut out = limits::unenforced();
    if mode == Mode::Bwrap && check_available(Mode::Bwrap).is_ok() && !userns_available() {
        out.push(Unenforced {
            bound: "user",
            reason: "bubblewrap cannot make a user namespace here: bash runs as the calling user (without \
                     capabilities), not as an unprivileged user of its own"
                .to_string(),
        });
    }
    out
}

/// [`check_available`] for `Mode::Bwrap` with the program given, not cached: whether a
/// sandbox with a user namespace of its own can be made (true), or only one without (false).
pub(crate) fn check_bwrap(bwrap: &OsStr) -> Result<bool, String> {
    let program = resolve_program(bwrap).ok_or_else(|| not_installed(bwrap))?;
    let env = [
        ("PATH".to_string(), PATH.to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("HOME".to_string(), "/tmp".to_string()),
    ];
    let argv = [find_shell()?.into_os_string(), "-c".into(), "true".into()];
    let trial = |userns: bool| {
        let how = How { userns, bounds: None, abort: None };
        run_bwrap(&program, &[], Path::new("/tmp"), &env, &argv, PROBE_TIMEOUT, 16 * 1024, how)
    };
    if trial(true).is_ok_and(|out| out.exit_code == 0) {
        return Ok(true);
    }
    let failure = match trial(false) {
        Ok(out) if out.exit_code == 0 => return Ok(false),
        Ok(out) if out.timed_out => format!("a trial run took more than {} s", PROBE_TIMEOUT.as_secs()),
        Ok(out) => {
            let stderr = out.stderr.trim();
            if stderr.is_empty() {
                format!("a trial run exited with code {}", out.exit_code)
            } else {
                stderr.to_string()
            }
        }
        Err(err) => err,
    };
    Err(format!(
        "bubblewrap (`{}`) is installed but cannot create a sandbox here: {failure}. It needs to create \
         namespaces: as a user, unprivileged user namespaces must be enabled (`sysctl kernel.unprivileged_userns_clone`, \
         and on Ubuntu 24.04 and later `sysctl kernel.apparmor_restrict_unprivileged_userns`); in a container, \
         the container must allow it. Or run with `--sandbox none` to run bash without isolation",
        program.display()
    ))
}

fn not_installed(program: &OsStr) -> String {
    let name = program.to_string_lossy();
    let shown = if name == BWRAP { String::new() } else { format!(" (looked for `{name}`)") };
    format!(
        "bubblewrap (`bwrap`) is not installed{shown}: install it (Debian/Ubuntu: `apt-get install bubblewrap`, \
         Fedora: `dnf install bubblewrap`) or run with `--sandbox none` to run bash without isolation"
    )
}

/// The executable `program` names: itself when it has a `/`, else the first match in the
/// calling process's `PATH`.
fn resolve_program(program: &OsStr) -> Option<PathBuf> {
    let is_executable =
        |path: &Path| fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0);
    if program.as_encoded_bytes().contains(&b'/') {
        let path = PathBuf::from(program);
        return is_executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from(PATH));
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|candidate| is_executable(candidate))
}

/// bash, else sh, in the command's `PATH` (which bubblewrap shows read-only from the host).
fn find_shell() -> Result<PathBuf, String> {
    for shell in ["bash", "sh"] {
        for dir in PATH.split(':') {
            let path = Path::new(dir).join(shell);
            if fs::metadata(&path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0) {
                return Ok(path);
            }
        }
    }
    Err(format!("the sandbox cannot start: neither bash nor sh is installed in {PATH}"))
}

/// The user (and group) id bash has inside a user namespace of its own.
pub const GUEST_UID: u32 = 1000;

/// The arguments of bubblewrap up to the command (without the status descriptor).
fn bwrap_args(mounts: &[Mount], workdir: &Path, env: &[(String, String)], userns: bool) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    macro_rules! push {
        ($($item:expr),+) => { $( args.push(AsRef::<OsStr>::as_ref(&$item).to_os_string()); )+ };
    }
    push!("--die-with-parent", "--new-session");
    if userns {
        // An unprivileged user of its own: root's id is not 0 inside, and what it writes
        // to the mounts is still owned by the caller outside (the one id mapped).
        let id = GUEST_UID.to_string();
        push!("--unshare-user", "--uid", id, "--gid", id);
    }
    push!("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts");
    // Running as root, the command would keep every capability, enough to remount the
    // read-only binds read-write (or anything else): drop them all.
    push!("--cap-drop", "ALL");
    for dir in SYSTEM_DIRS {
        let Ok(meta) = fs::symlink_metadata(dir) else { continue };
        if meta.file_type().is_symlink() {
            if let Ok(target) = fs::read_link(dir) {
                push!("--symlink", target, dir);
            }
        } else if meta.is_dir() {
            push!("--ro-bind", dir, dir);
        }
    }
    // Running as root, the command owns /etc's secrets (shadow, host keys): hide them.
    for file in MASKED_FILES {
        if fs::symlink_metadata(file).is_ok_and(|meta| meta.is_file()) {
            push!("--ro-bind", "/dev/null", file);
        }
    }
    for dir in MASKED_DIRS {
        if fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir()) {
            push!("--tmpfs", dir, "--remount-ro", dir);
        }
    }
    push!("--proc", "/proc");
    // The command's user is the caller outside (root, when little runs as root), which the
    // kernel lets write most of /proc/sys and /proc/sysrq-trigger without any capability:
    // cover them read-only.
    for file in ["/proc/sys", "/proc/sysrq-trigger"] {
        if fs::symlink_metadata(file).is_ok() {
            push!("--ro-bind", file, file);
        }
    }
    push!("--dev", "/dev", "--tmpfs", "/tmp");
    // Outer mounts first, so a mount inside another is not hidden by it.
    let mut ordered: Vec<&Mount> = mounts.iter().collect();
    ordered.sort_by_key(|m| m.guest.components().count());
    for mount in ordered {
        push!(if mount.writable { "--bind" } else { "--ro-bind" }, mount.host, mount.guest);
    }
    push!("--chdir", workdir, "--clearenv");
    for (name, value) in env {
        push!("--setenv", name, value);
    }
    args
}

/// The bounds a call's child takes on before `exec`.
struct Bounds<'a> {
    cgroup: Option<&'a limits::CallCgroup>,
    rlimits: Option<limits::Rlimits>,
}

/// How bubblewrap is run: with a user namespace or not, with bounds or not (the trial run),
/// abortable or not.
struct How<'a> {
    userns: bool,
    bounds: Option<Bounds<'a>>,
    abort: Option<&'a Abort>,
}

/// Runs `argv` under bubblewrap. bubblewrap reports on a status descriptor whether the
/// command ran (`"exit-code"`); when it exits 1 without saying so, the sandbox could not be
/// set up, and that is an `Err` with bubblewrap's message.
#[allow(clippy::too_many_arguments)]
fn run_bwrap(
    program: &Path,
    mounts: &[Mount],
    workdir: &Path,
    env: &[(String, String)],
    argv: &[OsString],
    timeout: Duration,
    max_output: usize,
    how: How<'_>,
) -> Result<Output, String> {
    let (status_read, status_write) = status_pipe()?;
    let status_fd = status_write.as_raw_fd();
    let mut cmd = Command::new(program);
    cmd.args(bwrap_args(mounts, workdir, env, how.userns));
    cmd.arg("--json-status-fd").arg(status_fd.to_string()).arg("--").args(argv);
    // bubblewrap itself gets the same bare environment (its own /proc/PID/environ is readable).
    cmd.env_clear().envs(env.iter().map(|(name, value)| (name, value)));
    let mut on_timeout = |bwrap_pid: i32| kill_namespace_init(&status_read, bwrap_pid);
    let extra = supervise::Extra {
        keep_fd: Some(status_fd),
        on_timeout: Some(&mut on_timeout),
        cgroup: how.bounds.as_ref().and_then(|b| b.cgroup),
        rlimits: how.bounds.as_ref().and_then(|b| b.rlimits),
        abort: how.abort,
        ..Default::default()
    };
    let output = supervise::supervise(cmd, None, timeout, max_output, extra);
    drop(status_write);
    let output = output?;
    if !output.timed_out
        && output.exit_code == BWRAP_SETUP_FAILED
        && !read_available(&status_read).contains("\"exit-code\"")
    {
        let stderr = output.stderr.trim();
        return Err(format!(
            "bubblewrap could not start the command: {}",
            if stderr.is_empty() { "it exited with code 1 and said nothing" } else { stderr }
        ));
    }
    Ok(output)
}

/// At the deadline: kills the sandbox's PID 1 (bubblewrap's child, whose pid bubblewrap
/// reported on the status pipe). The kernel then kills everything in the namespace, and
/// bubblewrap exits only once all of it is gone, so nothing outlives the call. Killing
/// bubblewrap itself instead would leave that teardown running after the call returned.
/// False when it could not be done safely (no pidfd support, the pid not bubblewrap's child).
fn kill_namespace_init(status: &OwnedFd, bwrap_pid: i32) -> bool {
    let text = read_available(status);
    let Some(init) = child_pid(&text) else { return false };
    // Hold the process by a pidfd, then check that it is bubblewrap's child: bubblewrap
    // forks once and has not been reaped, so no other process can pass this check.
    let Some(pidfd) = supervise::pidfd_open(init) else { return false };
    if supervise::ProcStat::of(init).map(|stat| stat.ppid) != Some(bwrap_pid) {
        return false;
    }
    // SAFETY: pidfd_send_signal(2) on a pidfd we own; no siginfo.
    let rc = unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), libc::SIGKILL, std::ptr::null::<u8>(), 0)
    };
    rc == 0
}

/// The `"child-pid"` bubblewrap reported in its JSON status.
fn child_pid(status: &str) -> Option<i32> {
    let rest = &status[status.find("\"child-pid\"")? + "\"child-pid\"".len()..];
    let rest = rest.trim_start_matches([' ', ':', '\t', '\n']);
    let digits = rest.find(|c: char| !c.is_ascii_digit()).map_or(rest, |end| &rest[..end]);
    digits.parse().ok().filter(|&pid| pid > 1)
}

/// A pipe for bubblewrap's `--json-status-fd`: both ends close-on-exec (the write end is
/// let through to bubblewrap alone), the write end above 2.
fn status_pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let (read, write) = spawn::pipe_above_stdio().map_err(|err| format!("the sandbox cannot start: a pipe: {err}"))?;
    supervise::set_nonblocking(read.as_raw_fd());
    Ok((read, write))
}

/// What is buffered in the (non-blocking) status pipe now; never blocks.
fn read_available(read: &OwnedFd) -> String {
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    while text.len() < 64 * 1024 {
        // SAFETY: read(2) into a buffer we own, of its length.
        let n = unsafe { libc::read(read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        text.extend_from_slice(&buf[..n as usize]);
    }
    String::from_utf8_lossy(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(host: &str, guest: &str) -> Mount {
        Mount { host: host.into(), guest: guest.into(), writable: true }
    }

    #[test]
    fn a_missing_bwrap_says_how_to_install_it() {
        let err = check_bwrap(OsStr::new("/nonexistent/bwrap")).unwrap_err();
        assert!(err.starts_with("bubblewrap (`bwrap`) is not installed"), "{err}");
        assert!(err.contains("apt-get install bubblewrap"), "{err}");
        assert!(err.contains("dnf install bubblewrap"), "{err}");
        assert!(err.contains("`--sandbox none`"), "{err}");
        let err = check_bwrap(OsStr::new("no-such-bwrap-program")).unwrap_err();
        assert!(err.starts_with("bubblewrap (`bwrap`) is not installed (looked for `no-such-bwrap-program`)"), "{err}");
    }

    #[test]
    fn run_without_bwrap_is_an_error_with_the_same_message() {
        let sandbox = Sandbox::new(Mode::Bwrap, vec![mount("/tmp", "/work")], "/work");
        let err = sandbox.run_with(OsStr::new("/nonexistent/bwrap"), "true").unwrap_err();
        assert!(err.starts_with("bubblewrap (`bwrap`) is not installed"), "{err}");
    }

    #[test]
    fn a_bwrap_that_cannot_create_namespaces_is_reported_with_its_message() {
        let dir = std::env::temp_dir().join(format!("little-sandbox-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("bwrap");
        fs::write(&fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n").unwrap();
        fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
        let err = check_bwrap(fake.as_os_str()).unwrap_err();
        let _ = fs::remove_dir_all(&dir);
        assert!(
            err.starts_with(&format!(
                "bubblewrap (`{}`) is installed but cannot create a sandbox here",
                fake.display()
            ))
        );
        assert!(err.contains("bwrap: No permissions to create new namespace"), "{err}");
        assert!(err.contains("`--sandbox none`"), "{err}");
    }

    #[test]
    fn the_namespace_init_is_read_from_the_status() {
        let status = "{ \"child-pid\": 8378, \"mnt-namespace\": 4026532178 }\n";
        assert_eq!(child_pid(status), Some(8378));
        assert_eq!(child_pid("{ \"child-pid\":42}"), Some(42));
        assert_eq!(child_pid(""), None);
        assert_eq!(child_pid("{ \"child-pid\": 1 }"), None);
    }

    #[test]
    fn none_is_always_available() {
        assert_eq!(check_available(Mode::None), Ok(()));
    }

    #[test]
    fn visible_paths_and_env_follow_the_mode() {
        let mounts = vec![mount("/host/a", "/work"), mount("/host/b", "/work/inner")];
        let bwrap = Sandbox::new(Mode::Bwrap, mounts.clone(), "/work/inner/x");
        assert_eq!(bwrap.visible(&mounts[0]), Path::new("/work"));
        assert_eq!(bwrap.visible_workdir().unwrap(), Path::new("/work/inner/x"));
        let none = Sandbox::new(Mode::None, mounts.clone(), "/work/inner/x");
        assert_eq!(none.visible(&mounts[0]), Path::new("/host/a"));
        assert_eq!(none.visible_workdir().unwrap(), Path::new("/host/b/x"));
        let at_root = Sandbox::new(Mode::None, mounts.clone(), "/work");
        assert_eq!(at_root.visible_workdir().unwrap(), Path::new("/host/a"));
        // `/workshop` is not inside `/work`.
        assert_eq!(Sandbox::new(Mode::None, mounts, "/workshop").visible_workdir(), None);
        let names = |s: &Sandbox| s.env().into_iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>();
        assert_eq!(names(&bwrap), ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/work/inner/x"]);
        assert_eq!(names(&none), ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/host/b/x"]);
    }

    #[test]
    fn bwrap_args_bind_system_dirs_read_only_and_mounts_outer_first() {
        let mounts = vec![
            Mount { host: "/h/inner".into(), guest: "/w/inner".into(), writable: false },
            Mount { host: "/h/outer".into(), guest: "/w".into(), writable: true },
        ];
        let args: Vec<String> = bwrap_args(&mounts, Path::new("/w"), &[("HOME".into(), "/w".into())], true)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let text = args.join(" ");
        assert!(text.contains("--cap-drop ALL"), "{text}");
        assert!(text.contains("--unshare-user --uid 1000 --gid 1000"), "{text}");
        assert!(text.contains("--proc /proc --ro-bind /proc/sys /proc/sys"), "{text}");
        for flag in
            ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
        {
            assert!(args.iter().any(|a| a == flag), "{flag} missing: {text}");
        }
        assert!(text.contains("--ro-bind /usr /usr"), "{text}");
        for dir in SYSTEM_DIRS {
            match fs::symlink_metadata(dir) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    assert!(text.contains(&format!(" {dir} ")), "{dir}: {text}")
                }
                Ok(_) => assert!(text.contains(&format!("--ro-bind {dir} {dir}")), "{dir}: {text}"),
                Err(_) => assert!(!text.contains(&format!(" {dir} ")), "{dir}: {text}"),
            }
        }
        let outer = text.find("--bind /h/outer /w").unwrap();
        let inner = text.find("--ro-bind /h/inner /w/inner").unwrap();
        assert!(outer < inner, "{text}");
        assert!(text.ends_with("--chdir /w --clearenv --setenv HOME /w"), "{text}");
        assert!(!text.contains("/root") && !text.contains("/home"), "{text}");
    }
}
