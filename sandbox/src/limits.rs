//! The bounds of one call: memory of its processes together, processes and threads, CPU
//! time, one file's size, and the size of its writable mounts after it.
//!
//! How each bound holds depends on the machine (see [`enforcement`]):
//!
//! - memory and processes: a cgroup of the call's own, made for each call and removed after
//!   it — cgroup v2 under the nearest ancestor of little's own cgroup that has the `memory`
//!   and `pids` controllers enabled for its children and that little may write, else cgroup
//!   v1's `memory` and `pids` hierarchies where little may write them. On cgroup v2 the
//!   command is born in its cgroup (`clone3` with `CLONE_INTO_CGROUP`, [`crate::spawn`]), or,
//!   where the kernel refuses that, moved in between fork and exec (it writes `0` to
//!   `cgroup.procs`); on v1 it moves its one thread in through `tasks`. So everything it
//!   starts, bubblewrap included, is counted, and whatever is left in it after the call is
//!   killed (also what left the process group with `setsid`). Without a memory cgroup,
//!   `RLIMIT_AS` holds each process alone to the bound, not all of them together; without a
//!   pids cgroup, `RLIMIT_NPROC` counts every process of the calling user (so it is set to
//!   the bound above what the user runs already), and root is exempt from it: the bound
//!   does not hold.
//! - CPU time and file size: `RLIMIT_CPU` and `RLIMIT_FSIZE`, set in the child before
//!   `exec`, per process.
//! - scratch and memory stores: measured after the call; the call's newest writes are rolled
//!   back to the bound ([`crate::quota`]).
//!
//! Which bound a call hit is read from the cgroup's counters (an OOM kill, a refused fork)
//! and, for the rlimits, from how the command ended (killed by `SIGXCPU` / `SIGXFSZ`) or
//! what the shell printed about it (`CPU time limit exceeded`, `File too large`): a command
//! can fake the latter, which only misleads itself.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::supervise::CgroupHandles;

/// Mebibyte.
pub const MIB: u64 = 1 << 20;
/// Gibibyte.
pub const GIB: u64 = 1 << 30;

/// The bounds of a call. `cpu` and `file_size` left `None` follow the time limit and the
/// scratch bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of memory of the call's processes together (default 1 GiB).
    pub memory: u64,
    /// Processes and threads at once (default 256).
    pub processes: u64,
    /// CPU time of each process (default: the call's time limit).
    pub cpu: Option<Duration>,
    /// Bytes of one file written (default: the scratch bound).
    pub file_size: Option<u64>,
    /// Bytes in the scratch (the working directory's mount) after a call (default 256 MiB).
    pub scratch: u64,
    /// Bytes in each other writable mount (a memory store) after a call (default 256 MiB).
    pub memory_store: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { memory: GIB, processes: 256, cpu: None, file_size: None, scratch: 256 * MIB, memory_store: 256 * MIB }
    }
}

impl Limits {
    /// The CPU bound of a call with this time limit.
    pub fn cpu_for(&self, timeout: Duration) -> Duration {
        self.cpu.unwrap_or(timeout)
    }

    /// The file size bound.
    pub fn file_size(&self) -> u64 {
        self.file_size.unwrap_or(self.scratch)
    }
}

/// A bound a call hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Limit {
    Memory,
    Processes,
    Cpu,
    FileSize,
    Scratch,
    MemoryStore,
}

impl Limit {
    /// The name results and events use: `memory`, `processes`, `cpu`, `file_size`,
    /// `scratch`, `memory_store`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Memory => "memory",
            Limit::Processes => "processes",
            Limit::Cpu => "cpu",
            Limit::FileSize => "file_size",
            Limit::Scratch => "scratch",
            Limit::MemoryStore => "memory_store",
        }
    }
}

/// How this machine holds the two bounds that need a cgroup to hold for a call's processes
/// together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enforcement {
    /// Where per-call memory cgroups are made, if anywhere.
    pub memory: Option<CgroupParent>,
    /// Where per-call pids cgroups are made, if anywhere.
    pub processes: Option<CgroupParent>,
    /// Whether little runs as root (exempt from `RLIMIT_NPROC`).
    pub root: bool,
}

/// A cgroup directory under which a call's cgroup is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupParent {
    pub dir: PathBuf,
    /// cgroup v2 (one directory for both controllers) or v1 (one hierarchy each).
    pub v2: bool,
}

/// A bound this machine cannot hold as stated, and what holds instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unenforced {
    /// `memory` or `processes`.
    pub bound: &'static str,
    pub reason: String,
}

/// Names a cgroup v2 directory under which each call also gets a cgroup of its own, which
/// it is born in: for the benchmark and the tests, to measure and test cgroup v2 on a
/// machine whose v2 mount has no controllers (a hybrid one). The memory and process bounds
/// are held there when that directory's `cgroup.subtree_control` enables their
/// controllers, else by cgroup v1's hierarchies, else by rlimits ([`unenforced`] says).
pub const CGROUP_V2_ROOT_VAR: &str = "LITTLE_SANDBOX_CGROUP_V2_ROOT";

/// What the probe found: how the bounds hold, and the cgroup v2 directory under which
/// each call's cgroup v2 is made, if any.
struct Probed {
    how: Enforcement,
    v2: Option<PathBuf>,
}

fn probed() -> &'static Probed {
    static PROBED: OnceLock<Probed> = OnceLock::new();
    PROBED.get_or_init(probe)
}

/// How bounds hold here: probed once (the cgroup mounts and little's own cgroup are read,
/// and a trial cgroup is made and removed), then kept for the life of the process.
pub fn enforcement() -> &'static Enforcement {
    &probed().how
}

/// How a call's command gets into its cgroups here, in words for the user and the
/// benchmark: born in it (cgroup v2 through clone3), moved in (cgroup v2 where clone3 into
/// a cgroup is refused; cgroup v1), or no cgroup at all (the rlimits alone).
pub fn cgroup_entry() -> String {
    let Probed { how, v2 } = probed();
    let v1 = [&how.memory, &how.processes].into_iter().flatten().any(|parent| !parent.v2);
    let v1_note = if v1 { "; cgroup v1: it moves its one thread into its v1 cgroups through `tasks`" } else { "" };
    match (v2, crate::spawn::refused()) {
        (Some(dir), None) => format!(
            "cgroup v2 under {}: each call is born in its cgroup (clone3 with CLONE_INTO_CGROUP){v1_note}",
            dir.display()
        ),
        (Some(dir), Some(err)) => format!(
            "cgroup v2 under {}: each call is moved into its cgroup through cgroup.procs, since clone3 into a \
             cgroup is refused here ({err}), which costs milliseconds a call on a busy machine{v1_note}",
            dir.display()
        ),
        (None, _) if v1 => "cgroup v1: each call moves its one thread into its cgroups through `tasks`".to_string(),
        (None, _) => "no cgroup: the rlimits alone".to_string(),
    }
}

/// The bounds that do not hold as stated here, in a fixed order; empty when all hold.
pub fn unenforced() -> Vec<Unenforced> {
    describe_unenforced(enforcement())
}

fn describe_unenforced(how: &Enforcement) -> Vec<Unenforced> {
    let mut out = Vec::new();
    if how.memory.is_none() {
        out.push(Unenforced {
            bound: "memory",
            reason: "no memory cgroup can be made here (cgroup v2 with the memory controller delegated, or a \
                     writable cgroup v1 memory hierarchy): each process alone is held to it (RLIMIT_AS), not the \
                     call's processes together"
                .to_string(),
        });
    }
    if how.processes.is_none() {
        let reason = if how.root {
            "no pids cgroup can be made here (cgroup v2 with the pids controller delegated, or a writable \
             cgroup v1 pids hierarchy), and root is exempt from RLIMIT_NPROC: the number of processes is not bounded"
        } else {
            "no pids cgroup can be made here (cgroup v2 with the pids controller delegated, or a writable \
             cgroup v1 pids hierarchy): RLIMIT_NPROC holds the calling user's processes to the bound above what \
             the user already runs, counted over the whole machine"
        };
        out.push(Unenforced { bound: "processes", reason: reason.to_string() });
    }
    out
}

fn probe() -> Probed {
    // SAFETY: geteuid(2) is always safe.
    let root = unsafe { libc::geteuid() } == 0;
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut how = Enforcement { memory: None, processes: None, root };
    let given = std::env::var_os(CGROUP_V2_ROOT_VAR).filter(|dir| !dir.is_empty());
    if let Some(dir) = given {
        let parent = CgroupParent { dir: PathBuf::from(dir), v2: true };
        let v2 = trial(&parent).then(|| parent.dir.clone());
        let controllers = fs::read_to_string(parent.dir.join("cgroup.subtree_control")).unwrap_or_default();
        let has = |name: &str| v2.is_some() && controllers.split_whitespace().any(|c| c == name);
        // A process is in one cgroup v2 only: what this one lacks, v1 holds, if anything.
        how.memory =
            if has("memory") { Some(parent.clone()) } else { v1_parent(&mounts, &own, "memory").filter(trial) };
        how.processes = if has("pids") { Some(parent.clone()) } else { v1_parent(&mounts, &own, "pids").filter(trial) };
        return Probed { how, v2 };
    }
    if let Some(parent) = v2_parent(&mounts, &own).filter(trial) {
        how.memory = Some(parent.clone());
        how.processes = Some(parent.clone());
        return Probed { how, v2: Some(parent.dir) };
    }
    how.memory = v1_parent(&mounts, &own, "memory").filter(trial);
    how.processes = v1_parent(&mounts, &own, "pids").filter(trial);
    Probed { how, v2: None }
}

/// Whether a cgroup can be made (and removed) under `parent`. On cgroup v2 a child is also
/// cloned into it and exits at once, to know whether the kernel can
/// ([`crate::spawn::probe`]).
fn trial(parent: &CgroupParent) -> bool {
    remove_stale(&parent.dir);
    let dir = parent.dir.join(format!("little-probe-{}", std::process::id()));
    if fs::create_dir(&dir).is_err() {
        return false;
    }
    if parent.v2
        && let Ok(fd) = open_dir(&dir)
    {
        crate::spawn::probe(fd.as_raw_fd());
    }
    fs::remove_dir(&dir).is_ok()
}

/// A mount of `/proc/self/mountinfo`: its root within the hierarchy, where it is mounted,
/// its file system type and super options.
struct CgroupMount<'a> {
    root: &'a str,
    point: &'a str,
    fstype: &'a str,
    options: &'a str,
}

fn cgroup_mounts(mountinfo: &str) -> impl Iterator<Item = CgroupMount<'_>> {
    mountinfo.lines().filter_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut fields = before.split(' ');
        let root = fields.nth(3)?;
        let point = fields.next()?;
        let mut rest = after.split(' ');
        let fstype = rest.next()?;
        let options = rest.nth(1).unwrap_or("");
        fstype.starts_with("cgroup").then_some(CgroupMount { root, point, fstype, options })
    })
}

/// The directory of a cgroup `path` (as `/proc/self/cgroup` writes it) under a mount.
fn under_mount(mount: &CgroupMount<'_>, path: &str) -> PathBuf {
    let relative = if mount.root != "/" { path.strip_prefix(mount.root).unwrap_or(path) } else { path };
    let mut dir = PathBuf::from(mount.point);
    dir.extend(relative.split('/').filter(|part| !part.is_empty()));
    dir
}

/// cgroup v2: the nearest ancestor of little's own cgroup (or the root) whose children
/// get both the memory and pids controllers, and that can be written. Its own cgroup
/// itself cannot serve unless it is the root: a cgroup with controllers for its children
/// may hold no process.
fn v2_parent(mountinfo: &str, own: &str) -> Option<CgroupParent> {
    let mount = cgroup_mounts(mountinfo).find(|m| m.fstype == "cgroup2")?;
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mut dir = under_mount(&mount, path);
    let top = PathBuf::from(mount.point);
    let mut first = true;
    loop {
        let usable = !first || dir == top;
        first = false;
        if usable {
            let controllers = fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            let has = |name: &str| controllers.split_whitespace().any(|c| c == name);
            if has("memory") && has("pids") && writable(&dir) {
                return Some(CgroupParent { dir, v2: true });
            }
        }
        if dir == top || !dir.pop() || !dir.starts_with(&top) {
            return None;
        }
    }
}

/// cgroup v1: little's own cgroup in the hierarchy of `controller`, else the hierarchy's
/// root, whichever can be written.
fn v1_parent(mountinfo: &str, own: &str, controller: &str) -> Option<CgroupParent> {
    let mount = cgroup_mounts(mountinfo)
        .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|option| option == controller))?;
    let path = own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names.split(',').any(|name| name == controller).then_some(path)
    })?;
    [under_mount(&mount, path), PathBuf::from(mount.point)]
        .into_iter()
        .find(|dir| writable(dir))
        .map(|dir| CgroupParent { dir, v2: false })
}

fn writable(dir: &Path) -> bool {
    let Ok(path) = CString::new(dir.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: access(2) on a NUL-terminated path.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

/// The cgroups of one call (one on cgroup v2; with v1, one per hierarchy), removed on drop
/// after whatever is left in them is killed.
pub(crate) struct CallCgroup {
    memory: Option<PathBuf>,
    pids: Option<PathBuf>,
    /// The call's cgroup v2 (which may hold no controller: [`CGROUP_V2_ROOT_VAR`]), its
    /// directory open for `CLONE_INTO_CGROUP`, and its `cgroup.procs` open for a child that
    /// cannot be born there.
    v2: Option<(PathBuf, OwnedFd, OwnedFd)>,
    /// The `tasks` file of each v1 cgroup, open: the child writes `0` into each before `exec`.
    tasks: Vec<OwnedFd>,
}

/// The descriptors a child writes `0` into before `exec`, to join its cgroups; -1 for none.
pub(crate) type JoinFds = [RawFd; 3];

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl CallCgroup {
    /// Makes the call's cgroup(s) with the bounds written; `Ok(None)` when this machine
    /// has none to give.
    pub(crate) fn new(limits: &Limits) -> Result<Option<CallCgroup>, String> {
        let Probed { how, v2, .. } = probed();
        if how.memory.is_none() && how.processes.is_none() && v2.is_none() {
            return Ok(None);
        }
        let name = format!("little-{}-{}", std::process::id(), SEQUENCE.fetch_add(1, Ordering::Relaxed));
        let mut call = CallCgroup { memory: None, pids: None, v2: None, tasks: Vec::new() };
        let make = |parent: &Path| -> Result<PathBuf, String> {
            let dir = parent.join(&name);
            fs::create_dir(&dir).map_err(|e| cannot(&dir, "create", &e))?;
            Ok(dir)
        };
        if let Some(parent) = v2 {
            let dir = make(parent)?;
            let opened = open_dir(&dir)
                .map_err(|e| cannot(&dir, "open", &e))
                .and_then(|open| Ok((open, open_write(&dir.join("cgroup.procs"))?)));
            match opened {
                Ok((open, procs)) => call.v2 = Some((dir, open, procs)),
                Err(err) => {
                    let _ = fs::remove_dir(&dir);
                    return Err(err);
                }
            }
        }
        // From here on, a failure drops `call`, which removes what was made.
        let v2_dir = call.v2.as_ref().map(|(dir, _, _)| dir.clone());
        call.memory = match &how.memory {
            Some(parent) if parent.v2 => v2_dir.clone(),
            Some(parent) => Some(make(&parent.dir)?),
            None => None,
        };
        call.pids = match &how.processes {
            Some(parent) if parent.v2 => v2_dir.clone(),
            // Both controllers in one v1 hierarchy: one cgroup holds both.
            Some(parent) if how.memory.as_ref().is_some_and(|m| m.dir == parent.dir) => call.memory.clone(),
            Some(parent) => Some(make(&parent.dir)?),
            None => None,
        };
        if let Some(dir) = &call.memory {
            if call.memory == v2_dir {
                write_value(dir, "memory.max", limits.memory)?;
                // Swap would let the call hold more than the bound; not every kernel has it.
                let _ = fs::write(dir.join("memory.swap.max"), "0");
            } else {
                write_value(dir, "memory.limit_in_bytes", limits.memory)?;
                let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), limits.memory.to_string());
            }
        }
        if let Some(dir) = &call.pids {
            write_value(dir, "pids.max", limits.processes)?;
        }
        // How the child joins its v1 cgroups: cgroup v1 lets a thread move itself by writing
        // `0` to `tasks`, which the kernel does without taking `cgroup_threadgroup_rwsem` for
        // writing, and so without waiting for an RCU grace period (milliseconds on a busy
        // machine, ~0.1 ms this way); the child is one thread, so its thread is its process.
        // cgroup v2 has no such door outside threaded subtrees: the child is born in its
        // cgroup instead ([`CallCgroup::clone_into`]), or else writes `cgroup.procs`.
        let mut tasks = Vec::new();
        for dir in call.dirs() {
            if Some(dir) != v2_dir.as_ref() {
                tasks.push(open_write(&dir.join("tasks"))?);
            }
        }
        call.tasks = tasks;
        Ok(Some(call))
    }

    /// The call's cgroup v2 directory, open, for a child to be born in (`CLONE_INTO_CGROUP`).
    pub(crate) fn clone_into(&self) -> Option<RawFd> {
        self.v2.as_ref().map(|(_, dir, _)| dir.as_raw_fd())
    }

    /// What the registry of running commands keeps to kill all of the call's processes from
    /// a signal handler: the v2 `cgroup.kill` where the kernel has it (5.14), else a
    /// `cgroup.procs` to read (v2's, else v1's `pids` or `memory` cgroup's).
    pub(crate) fn handles(&self) -> CgroupHandles {
        let open = |path: PathBuf, flags: libc::c_int| -> Option<OwnedFd> {
            let path = CString::new(path.into_os_string().into_encoded_bytes()).ok()?;
            // SAFETY: open(2) of a NUL-terminated path.
            let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
            // SAFETY: a new descriptor, ours alone.
            (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
        };
        if let Some((dir, _, _)) = &self.v2
            && let Some(kill) = open(dir.join("cgroup.kill"), libc::O_WRONLY)
        {
            return CgroupHandles { kill: Some(kill), procs: None };
        }
        let dir = self.v2.as_ref().map(|(dir, _, _)| dir).or(self.pids.as_ref()).or(self.memory.as_ref());
        CgroupHandles { kill: None, procs: dir.and_then(|dir| open(dir.join("cgroup.procs"), libc::O_RDONLY)) }
    }

    /// The descriptors the child writes `0` into before `exec`, to join the cgroups: the v1
    /// `tasks` files, and the v2 `cgroup.procs` unless it was born in its v2 cgroup.
    pub(crate) fn join_fds(&self, born_in_v2: bool) -> JoinFds {
        let v2 = self.v2.as_ref().filter(|_| !born_in_v2).map(|(_, _, procs)| procs);
        let mut fds = [-1; 3];
        for (slot, fd) in fds.iter_mut().zip(self.tasks.iter().chain(v2)) {
            *slot = fd.as_raw_fd();
        }
        fds
    }

    /// The call's directories, each once, in a fixed order.
    fn dirs(&self) -> Vec<&PathBuf> {
        let mut dirs: Vec<&PathBuf> =
            self.memory.iter().chain(self.pids.iter()).chain(self.v2.iter().map(|(dir, _, _)| dir)).collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    pub(crate) fn holds_memory(&self) -> bool {
        self.memory.is_some()
    }

    pub(crate) fn holds_processes(&self) -> bool {
        self.pids.is_some()
    }

    /// Which bound the cgroup's counters say was hit: the memory bound (a process was
    /// OOM-killed) before the process bound (a fork was refused).
    pub(crate) fn hit(&self) -> Option<Limit> {
        let counter = |dir: &Option<PathBuf>, file: &str, key: &str| -> u64 {
            let Some(dir) = dir else { return 0 };
            let text = fs::read_to_string(dir.join(file)).unwrap_or_default();
            text.lines()
                .filter_map(|line| line.split_once(' '))
                .filter(|(name, _)| *name == key)
                .filter_map(|(_, value)| value.trim().parse::<u64>().ok())
                .sum()
        };
        let memory_file = if self.memory.is_some() && self.memory.as_ref() == self.v2.as_ref().map(|(dir, _, _)| dir) {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        if counter(&self.memory, memory_file, "oom_kill") > 0 {
            return Some(Limit::Memory);
        }
        if counter(&self.pids, "pids.events", "max") > 0 {
            return Some(Limit::Processes);
        }
        None
    }

    /// Kills everything still in the cgroup(s), without waiting.
    pub(crate) fn kill_all(&self) {
        for dir in self.dirs() {
            if fs::write(dir.join("cgroup.kill"), "1").is_ok() {
                continue;
            }
            kill_members(dir);
        }
    }
}

impl Drop for CallCgroup {
    fn drop(&mut self) {
        self.tasks.clear();
        let mut dirs: Vec<PathBuf> = self.dirs().into_iter().cloned().collect();
        self.v2 = None;
        dirs.retain(|dir| !remove_cgroup(dir));
        // Killed processes stay in the cgroup until they are reaped, which for those the
        // command left in the background is their new parent's business: usually a
        // millisecond or two. Wait that long here, so that a `little` about to exit leaves
        // nothing behind.
        let quick = Instant::now() + Duration::from_millis(50);
        while !dirs.is_empty() && Instant::now() < quick {
            std::thread::sleep(Duration::from_millis(1));
            dirs.retain(|dir| !remove_cgroup(dir));
        }
        if dirs.is_empty() {
            return;
        }
        // Still busy: kill again and retry for up to two seconds on a thread of its own, so
        // that the call returns now. What a process that exits first leaves behind is
        // removed by the next `little` ([`remove_stale`]).
        std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(2);
            while !dirs.is_empty() && Instant::now() < until {
                for dir in &dirs {
                    kill_members(dir);
                }
                std::thread::sleep(Duration::from_millis(5));
                dirs.retain(|dir| !remove_cgroup(dir));
            }
        });
    }
}

/// Removes a call's cgroup; true when it is gone.
fn remove_cgroup(dir: &Path) -> bool {
    match fs::remove_dir(dir) {
        Ok(()) => true,
        Err(e) => e.kind() == io::ErrorKind::NotFound,
    }
}

fn kill_members(dir: &Path) {
    for pid in members(dir) {
        // SAFETY: kill(2) of a process in the call's own cgroup.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Removes the call cgroups (`little-PID-N`) under `parent` that a `little` no longer
/// running left behind.
fn remove_stale(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("little-")).and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<i32>() else { continue };
        if pid != std::process::id() as i32 && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

fn members(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .filter(|&pid: &i32| pid > 1)
        .collect()
}

fn cannot(path: &Path, what: &str, err: &io::Error) -> String {
    format!("the sandbox cannot start: cannot {what} the call's cgroup `{}`: {err}", path.display())
}

fn write_value(dir: &Path, file: &str, value: u64) -> Result<(), String> {
    let path = dir.join(file);
    fs::write(&path, value.to_string()).map_err(|e| cannot(&path, "write", &e))
}

/// A cgroup's directory, open for `CLONE_INTO_CGROUP` (which takes no `O_PATH` descriptor).
fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let c =
        CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: open(2) on a NUL-terminated path; the descriptor is ours.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is new and ours.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_write(path: &Path) -> Result<OwnedFd, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| format!("bad path {}", path.display()))?;
    // SAFETY: open(2) on a NUL-terminated path; the descriptor is ours.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(cannot(path, "open", &io::Error::last_os_error()));
    }
    // SAFETY: `fd` is new and ours.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The resource limits set in the child before `exec`: (resource, soft, hard).
pub(crate) type Rlimits = [Option<Rlimit>; 4];

/// One resource limit: (resource, soft, hard).
pub(crate) type Rlimit = (libc::__rlimit_resource_t, u64, u64);

/// The rlimits of a call: CPU and file size always, address space without a memory cgroup,
/// process count without a pids cgroup (above what the user runs already; root is exempt).
pub(crate) fn rlimits(limits: &Limits, timeout: Duration, cgroup: Option<&CallCgroup>) -> Rlimits {
    let cpu = limits.cpu_for(timeout).as_secs_f64().ceil().max(1.0) as u64;
    let mut out = [None; 4];
    // At the soft bound SIGXCPU, a second later SIGKILL.
    out[0] = Some((libc::RLIMIT_CPU, cpu, cpu.saturating_add(1)));
    out[1] = Some((libc::RLIMIT_FSIZE, limits.file_size(), limits.file_size()));
    if !cgroup.is_some_and(CallCgroup::holds_memory) {
        out[2] = Some((libc::RLIMIT_AS, limits.memory, limits.memory));
    }
    if !cgroup.is_some_and(CallCgroup::holds_processes) && !enforcement().root {
        let running = user_processes();
        let bound = limits.processes.saturating_add(running);
        out[3] = Some((libc::RLIMIT_NPROC, bound, bound));
    }
    out
}

/// Processes and threads of the calling user now (what `RLIMIT_NPROC` counts).
fn user_processes() -> u64 {
    // SAFETY: getuid(2) is always safe.
    let uid = unsafe { libc::getuid() }.to_string();
    let Ok(entries) = fs::read_dir("/proc") else { return 0 };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter(|status| {
            status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|ids| ids.split_whitespace().next())
                == Some(uid.as_str())
        })
        .map(|status| {
            status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok()).unwrap_or(1)
        })
        .sum()
}

/// In the child between fork and exec: joins the call's cgroups and sets the rlimits.
/// Async-signal-safe: `write(2)` and `setrlimit(2)` only.
pub(crate) fn apply_in_child(procs: JoinFds, rlimits: &[Option<Rlimit>]) -> io::Result<()> {
    for fd in procs {
        if fd >= 0 {
            // SAFETY: write(2) of a static byte to a descriptor the parent opened for this.
            if unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    for &(resource, soft, hard) in rlimits.iter().flatten() {
        let limit = libc::rlimit { rlim_cur: soft, rlim_max: hard };
        // SAFETY: setrlimit(2) with a valid struct.
        if unsafe { libc::setrlimit(resource, &limit) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Which rlimit bound a finished command hit, from how it ended and what it printed; the
/// memory and process bounds only when no cgroup holds them (else the cgroup says).
pub(crate) fn hit_by_exit(exit_code: i32, stderr: &str, memory_rlimit: bool, nproc_rlimit: bool) -> Option<Limit> {
    if exit_code == 128 + libc::SIGXCPU || stderr.contains("CPU time limit exceeded") {
        return Some(Limit::Cpu);
    }
    if exit_code == 128 + libc::SIGXFSZ
        || stderr.contains("File size limit exceeded")
        || stderr.contains("File too large")
    {
        return Some(Limit::FileSize);
    }
    if memory_rlimit
        && ["Cannot allocate memory", "MemoryError", "memory exhausted", "out of memory"]
            .iter()
            .any(|text| stderr.contains(text))
    {
        return Some(Limit::Memory);
    }
    if nproc_rlimit && stderr.contains("fork") && stderr.contains("Resource temporarily unavailable") {
        return Some(Limit::Processes);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
35 25 0:30 / /sys/fs/cgroup/memory rw,relatime shared:13 - cgroup cgroup rw,memory
40 25 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 25 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn cgroup_mounts_are_read_from_mountinfo() {
        let mounts: Vec<(String, String, String)> = cgroup_mounts(MOUNTINFO)
            .map(|m| (m.point.to_string(), m.fstype.to_string(), m.options.to_string()))
            .collect();
        assert_eq!(mounts[0], ("/sys/fs/cgroup/memory".into(), "cgroup".into(), "rw,memory".into()));
        assert_eq!(mounts[2].1, "cgroup2");
        let mount = CgroupMount { root: "/docker/x", point: "/sys/fs/cgroup/memory", fstype: "cgroup", options: "" };
        assert_eq!(under_mount(&mount, "/docker/x/a"), Path::new("/sys/fs/cgroup/memory/a"));
    }

    #[test]
    fn v2_takes_the_nearest_ancestor_whose_children_get_both_controllers() {
        let top = std::env::temp_dir().join(format!("little-cgroup-v2-{}", std::process::id()));
        let _ = fs::remove_dir_all(&top);
        fs::create_dir_all(top.join("a/b/c")).unwrap();
        let mountinfo = format!("41 25 0:36 / {} rw - cgroup2 cgroup2 rw\n", top.display());
        let own = "0::/a/b/c\n";
        // Nothing delegated: no parent.
        assert_eq!(v2_parent(&mountinfo, own), None);
        fs::write(top.join("cgroup.subtree_control"), "cpu memory pids").unwrap();
        fs::write(top.join("a/cgroup.subtree_control"), "memory").unwrap();
        // Its own cgroup holds a process, so it cannot serve even with the controllers.
        fs::write(top.join("a/b/c/cgroup.subtree_control"), "memory pids").unwrap();
        assert_eq!(v2_parent(&mountinfo, own), Some(CgroupParent { dir: top.clone(), v2: true }));
        fs::write(top.join("a/b/cgroup.subtree_control"), "pids memory").unwrap();
        assert_eq!(v2_parent(&mountinfo, own), Some(CgroupParent { dir: top.join("a/b"), v2: true }));
        // At the root of the hierarchy, its own cgroup may serve.
        assert_eq!(v2_parent(&mountinfo, "0::/\n"), Some(CgroupParent { dir: top.clone(), v2: true }));
        fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn v1_takes_its_own_cgroup_of_the_controllers_hierarchy() {
        let top = std::env::temp_dir().join(format!("little-cgroup-v1-{}", std::process::id()));
        let _ = fs::remove_dir_all(&top);
        fs::create_dir_all(top.join("pids/x")).unwrap();
        let mountinfo = format!("40 25 0:35 / {}/pids rw - cgroup cgroup rw,pids\n", top.display());
        let own = "8:pids:/x\n4:memory:/y\n0::/\n";
        assert_eq!(v1_parent(&mountinfo, own, "pids"), Some(CgroupParent { dir: top.join("pids/x"), v2: false }));
        assert_eq!(v1_parent(&mountinfo, own, "memory"), None);
        fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn rlimit_bounds_are_read_from_how_the_command_ended() {
        assert_eq!(hit_by_exit(152, "", false, false), Some(Limit::Cpu));
        assert_eq!(hit_by_exit(1, "bash: line 1: 7 CPU time limit exceeded", false, false), Some(Limit::Cpu));
        assert_eq!(hit_by_exit(153, "", false, false), Some(Limit::FileSize));
        assert_eq!(hit_by_exit(1, "head: error writing 'f': File too large", false, false), Some(Limit::FileSize));
        assert_eq!(hit_by_exit(1, "MemoryError", false, false), None);
        assert_eq!(hit_by_exit(1, "MemoryError", true, false), Some(Limit::Memory));
        let fork = "bash: fork: Resource temporarily unavailable";
        assert_eq!(hit_by_exit(254, fork, false, true), Some(Limit::Processes));
        assert_eq!(hit_by_exit(254, fork, false, false), None);
        assert_eq!(hit_by_exit(0, "", true, true), None);
    }

    #[test]
    fn unenforced_bounds_say_what_holds_instead() {
        let none = Enforcement { memory: None, processes: None, root: true };
        let said = describe_unenforced(&none);
        assert_eq!(said.iter().map(|u| u.bound).collect::<Vec<_>>(), ["memory", "processes"]);
        assert!(said[1].reason.contains("root is exempt"), "{said:?}");
        let user = Enforcement { root: false, ..none.clone() };
        assert!(describe_unenforced(&user)[1].reason.contains("above what the user already runs"));
        let parent = CgroupParent { dir: "/x".into(), v2: true };
        let all = Enforcement { memory: Some(parent.clone()), processes: Some(parent), root: true };
        assert!(describe_unenforced(&all).is_empty());
    }
}
