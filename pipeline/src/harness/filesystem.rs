//! The session's filesystem (docs/reference/harness.md#the-built-in-harness-workflowharness100): the run's scratch (`/mnt/scratch/own/`, kept on
//! disk beside the log), the memory stores (`/mnt/memory/workflow/`, `/mnt/memory/org/`,
//! `/mnt/memory/attached/<id>/`, as the definition's memory config grants them, from the
//! memory root where they persist between runs), the skills inside the scratch, and the
//! sandbox through which bash sees exactly these.

use std::path::{Path, PathBuf};

use little_frontend::definition::{Access, Definition, Skill};
use little_sandbox::{Mount, Sandbox};

use super::HarnessOptions;

pub const SCRATCH: &str = "/mnt/scratch/own";
pub const WORKFLOW_MEMORY: &str = "/mnt/memory/workflow";
pub const ORG_MEMORY: &str = "/mnt/memory/org";
pub const ATTACHED_MEMORY: &str = "/mnt/memory/attached";

/// One memory store as the prompt names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryStore {
    /// `workflow`, `org` or `attached:<id>`.
    pub id: String,
    /// Where it lives under the memory root (`workflow/<workflowId>`, `org`,
    /// `attached/<id>`): its name in a database store too.
    pub key: String,
    /// The path bash uses for it.
    pub path: PathBuf,
    /// Its folder on this machine.
    pub host: PathBuf,
    pub writable: bool,
}

/// A memory store the definition grants: its id, its key under the memory root, where bash
/// sees it, and the access granted.
pub struct Grant {
    pub id: String,
    pub key: String,
    pub guest: PathBuf,
    pub access: Access,
}

/// The memory stores a definition grants (`none` left out), in the order the prompt lists them.
pub fn granted_stores(definition: &Definition) -> Result<Vec<Grant>, String> {
    check_component("workflow id", &definition.id)?;
    let mut grants = vec![
        Grant {
            id: "workflow".to_string(),
            key: format!("workflow/{}", definition.id),
            guest: PathBuf::from(WORKFLOW_MEMORY),
            access: definition.memory.workflow,
        },
        Grant {
            id: "org".to_string(),
            key: "org".to_string(),
            guest: PathBuf::from(ORG_MEMORY),
            access: definition.memory.org,
        },
    ];
    for attached in &definition.memory.attached {
        check_component("memory store id", &attached.id)?;
        grants.push(Grant {
            id: format!("attached:{}", attached.id),
            key: format!("attached/{}", attached.id),
            guest: Path::new(ATTACHED_MEMORY).join(&attached.id),
            access: attached.access,
        });
    }
    grants.retain(|grant| grant.access != Access::None);
    Ok(grants)
}

/// A session's directories and the sandbox bash runs in.
#[derive(Clone, Debug)]
pub struct SessionFiles {
    /// The scratch directory on disk.
    pub scratch: PathBuf,
    /// The scratch as bash sees it (its working directory).
    pub workdir: PathBuf,
    pub memory: Vec<MemoryStore>,
    pub sandbox: Sandbox,
    /// The bounds this machine cannot hold as stated, and what holds instead.
    pub unenforced: Vec<little_sandbox::Unenforced>,
}

impl SessionFiles {
    /// The names of the bounds that do not hold, as `harness.session.started` records them
    /// (`unenforcedBounds`).
    pub fn unenforced_bounds(&self) -> Vec<&'static str> {
        self.unenforced.iter().map(|u| u.bound).collect()
    }

    /// Tells the user, once per process, which bounds do not hold here.
    pub fn note_unenforced(&self, observer: &mut dyn super::Observer) {
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if self.unenforced.is_empty() || SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        for bound in &self.unenforced {
            observer
                .note(&format!("warning: the sandbox cannot hold the `{}` bound here: {}", bound.bound, bound.reason));
        }
    }
}

/// A name used as one path component: a run id, a workflow id, a skill or store name.
pub fn check_component(what: &str, name: &str) -> Result<(), String> {
    let fine = !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= 200
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@'));
    if fine {
        Ok(())
    } else {
        Err(format!("the {what} `{name}` cannot name a directory: use letters, digits and `. _ - : @` (at most 200)"))
    }
}

/// `cycle-<N>/scratch` in a run's folder (`RunLog::run_dir`: `.little/runs/<runId>` beside
/// a file log).
pub fn scratch_dir(run_dir: &Path, cycle: u64) -> PathBuf {
    run_dir.join(format!("cycle-{cycle}")).join("scratch")
}

/// Creates (or reopens) the session's directories, writes the skills into the scratch,
/// and builds the sandbox. The memory stores are folders under `memory_root` (`--memory-root`,
/// or where a database store's memory was copied for this session).
pub fn prepare(
    scratch: PathBuf,
    memory_root: &Path,
    options: &HarnessOptions<'_>,
    definition: &Definition,
    skills: &[Skill],
) -> Result<SessionFiles, String> {
    let create = |dir: &Path| {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the directory `{}`: {e}", dir.display()))
    };
    create(&scratch)?;
    let scratch = scratch.canonicalize().map_err(|e| format!("cannot resolve `{}`: {e}", scratch.display()))?;
    let limits = options.limits()?;
    // A call interrupted by a crash may have left the scratch over its bound, and the call
    // run again on resume would count those writes as the scratch's own: hold it to the
    // bound now, newest writes first, before the skills are written.
    little_sandbox::quota::enforce(&scratch, limits.scratch, &little_sandbox::quota::Snapshot::default());
    for skill in skills {
        check_component("skill name", &skill.name)?;
        let dir = scratch.join(".agents").join("skills").join(&skill.name);
        create(&dir)?;
        let path = dir.join("SKILL.md");
        std::fs::write(&path, skill_file(skill)).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    }

    let mut mounts = vec![Mount { host: scratch.clone(), guest: PathBuf::from(SCRATCH), writable: true }];
    let mut stores = Vec::new();
    for grant in granted_stores(definition)? {
        let host = memory_root.join(&grant.key);
        create(&host)?;
        let host = host.canonicalize().map_err(|e| format!("cannot resolve `{}`: {e}", host.display()))?;
        let mount = Mount { host, guest: grant.guest, writable: grant.access == Access::ReadWrite };
        stores.push((grant.id, grant.key, mount.clone()));
        mounts.push(mount);
    }
    let mut sandbox = Sandbox::new(options.sandbox, mounts, SCRATCH);
    sandbox.timeout = options.tool_timeout;
    sandbox.limits = limits;
    let memory = stores
        .into_iter()
        .map(|(id, key, mount)| MemoryStore {
            id,
            key,
            path: sandbox.visible(&mount),
            host: mount.host,
            writable: mount.writable,
        })
        .collect();
    let workdir = sandbox.visible(&sandbox.mounts[0]);
    let unenforced = little_sandbox::unenforced(options.sandbox);
    Ok(SessionFiles { scratch, workdir, memory, sandbox, unenforced })
}

/// A skill as a file: frontmatter (name, description), then its body.
fn skill_file(skill: &Skill) -> String {
    let quoted = |text: &str| serde_json::to_string(text).expect("strings serialize");
    format!("---\nname: {}\ndescription: {}\n---\n{}", quoted(&skill.name), quoted(&skill.description), skill.content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_their_folder_are_refused() {
        for bad in ["", ".", "..", "a/b", "../x", "a b", "x\0"] {
            assert!(check_component("run id", bad).is_err(), "{bad:?}");
        }
        for good in ["run_7f3", "support.summarize-ticket", "r-1@2:3"] {
            assert!(check_component("run id", good).is_ok(), "{good}");
        }
    }

    #[test]
    fn bounds_not_held_are_said_once_and_named_for_the_log() {
        struct Notes(Vec<String>);
        impl crate::harness::Observer for Notes {
            fn note(&mut self, message: &str) {
                self.0.push(message.to_string());
            }
        }
        let unenforced = vec![little_sandbox::Unenforced { bound: "processes", reason: "root is exempt".into() }];
        let sandbox = Sandbox::new(little_sandbox::Mode::None, Vec::new(), SCRATCH);
        let files = SessionFiles { scratch: "s".into(), workdir: "s".into(), memory: Vec::new(), sandbox, unenforced };
        assert_eq!(files.unenforced_bounds(), ["processes"]);
        let mut notes = Notes(Vec::new());
        files.note_unenforced(&mut notes);
        files.note_unenforced(&mut notes);
        assert_eq!(notes.0, ["warning: the sandbox cannot hold the `processes` bound here: root is exempt"]);
    }

    #[test]
    fn the_scratch_lies_beside_the_log() {
        let run_dir = little_store::file::run_dir(Path::new("logs/events.jsonl"), "r");
        assert_eq!(scratch_dir(&run_dir, 2), Path::new("logs/.little/runs/r/cycle-2/scratch"));
        let run_dir = little_store::file::run_dir(Path::new("events.jsonl"), "r");
        assert_eq!(scratch_dir(&run_dir, 1), Path::new("./.little/runs/r/cycle-1/scratch"));
    }
}
