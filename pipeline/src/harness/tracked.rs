//! The session's files as part of its history: after each tool call that ran, what it
//! changed in the scratch and in the read-write memory stores is recorded on the call's
//! end event (`files`: per root, each written file's `sha256` and mode, each removed path),
//! the contents stored as blobs first. So a run resumes on any machine: before its first
//! real call, a resumed session makes its scratch what the history says it was (files the
//! record lacks removed, files that differ written from their blobs). With a database
//! store, memory stores live in the database: copied into the run's folder when the session
//! starts, and each call's changes committed back (per file, the last writer wins).
//!
//! What is tracked: regular files (contents and permission bits) and symbolic links (their
//! target); empty folders, sockets and names that are not UTF-8 are not. Nothing here
//! recurses on the depth of a folder.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use little_frontend::definition::Definition;
use little_store::{FileChange, FileEntry};
use serde_json::{Map, Value, json};

use super::HarnessOptions;
use super::filesystem::{SessionFiles, granted_stores};
use crate::events::EventLog;

/// The root name of the scratch in a `files` record; memory stores are `memory:<key>`.
pub const SCRATCH_ROOT: &str = "scratch";

/// The mode bit a recorded symbolic link carries (its blob is the link's target).
const SYMLINK: u32 = 0o120000;

/// One file as last recorded, with what tells cheaply that it did not change since.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Known {
    sha256: String,
    mode: u32,
    /// Size, modification time and inode when last hashed on this machine; `None` for a
    /// file known only from the history, which is hashed again when next seen.
    stamp: Option<(u64, i64, i64, u64)>,
}

/// One tracked folder.
struct Root {
    name: String,
    dir: PathBuf,
    /// The key a database store commits a memory store's changes under.
    memory_key: Option<String>,
    files: BTreeMap<String, Known>,
}

/// The tracked folders of a session and their last recorded contents.
pub struct Tracked {
    roots: Vec<Root>,
    /// Whether the scratch must be made what the history says before the next real call.
    restore_pending: bool,
}

/// Where the session's memory stores are: for a file log, `--memory-root`; for a database
/// store, `memory/` in the run's folder, filled with the stores' current contents.
pub fn memory_root(
    log: &mut EventLog,
    options: &HarnessOptions<'_>,
    definition: &Definition,
) -> Result<PathBuf, String> {
    let root = log.run_dir().join("memory");
    let grants = granted_stores(definition)?;
    let mut wanted = Vec::new();
    {
        let Some(shared) = log.shared_memory() else { return Ok(options.memory_root()) };
        for grant in &grants {
            wanted.push((grant.key.clone(), shared.files(&grant.key)?));
        }
    }
    for (key, files) in wanted {
        let dir = root.join(&key);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        let wanted: BTreeMap<String, Known> =
            files.into_iter().map(|f| (f.path, Known { sha256: f.sha256, mode: f.mode, stamp: None })).collect();
        let here = walk(&dir, &BTreeMap::new())?;
        make_equal(log, &dir, &here, &wanted)?;
    }
    Ok(root)
}

impl Tracked {
    /// The scratch and the writable memory stores of a session, their last recorded state
    /// read from the session's recorded `files` (in order). Memory stores start from what
    /// they hold now: only what this session's calls change in them is theirs to record.
    pub fn new(files: &SessionFiles, recorded: &[Value]) -> Result<Tracked, String> {
        let mut scratch = Root {
            name: SCRATCH_ROOT.to_string(),
            dir: files.scratch.clone(),
            memory_key: None,
            files: BTreeMap::new(),
        };
        for record in recorded {
            if let Some(changes) = record.get(SCRATCH_ROOT) {
                apply(&mut scratch.files, changes);
            }
        }
        let restore_pending = !recorded.is_empty();
        let mut roots = vec![scratch];
        for store in files.memory.iter().filter(|store| store.writable) {
            let now = walk(&store.host, &BTreeMap::new())?;
            roots.push(Root {
                name: format!("memory:{}", store.key),
                dir: store.host.clone(),
                memory_key: Some(store.key.clone()),
                files: now,
            });
        }
        Ok(Tracked { roots, restore_pending })
    }

    /// Before a real call of a resumed session: the scratch made what the history recorded
    /// (this machine may never have seen it, or a call in flight may have left it half
    /// changed). Once per session.
    pub fn restore(&mut self, log: &mut EventLog) -> Result<(), String> {
        if !std::mem::take(&mut self.restore_pending) {
            return Ok(());
        }
        let scratch = &mut self.roots[0];
        let here = walk(&scratch.dir, &BTreeMap::new())?;
        make_equal(log, &scratch.dir, &here, &scratch.files)?;
        scratch.files = walk(&scratch.dir, &BTreeMap::new())?;
        Ok(())
    }

    /// After a call that ran: what it changed, its contents stored as blobs and a database's
    /// memory stores updated; `None` when it changed nothing.
    pub fn record(&mut self, log: &mut EventLog) -> Result<Option<Value>, String> {
        let mut record = Map::new();
        for root in &mut self.roots {
            let now = walk(&root.dir, &root.files)?;
            let mut put = Map::new();
            let mut changes = Vec::new();
            for (path, known) in &now {
                if root.files.get(path).is_some_and(|before| before.sha256 == known.sha256 && before.mode == known.mode)
                {
                    continue;
                }
                let bytes = contents(&root.dir.join(path), known.mode)?;
                let stored = log.put_blob(&bytes)?;
                if stored != known.sha256 {
                    // Changed between hashing and reading: recorded as it was read.
                    return Err(format!(
                        "`{path}` changed while it was being recorded; the call's files are not recorded"
                    ));
                }
                put.insert(path.clone(), json!({ "sha256": known.sha256, "mode": known.mode }));
                changes.push(FileChange::Put(FileEntry {
                    path: path.clone(),
                    sha256: known.sha256.clone(),
                    mode: known.mode,
                }));
            }
            let removed: Vec<String> = root.files.keys().filter(|path| !now.contains_key(*path)).cloned().collect();
            changes.extend(removed.iter().cloned().map(FileChange::Removed));
            root.files = now;
            if changes.is_empty() {
                continue;
            }
            if let Some(key) = &root.memory_key
                && let Some(shared) = log.shared_memory()
            {
                shared.commit(key, &changes)?;
            }
            let mut entry = Map::new();
            if !put.is_empty() {
                entry.insert("put".to_string(), Value::Object(put));
            }
            if !removed.is_empty() {
                entry.insert("removed".to_string(), json!(removed));
            }
            record.insert(root.name.clone(), Value::Object(entry));
        }
        Ok((!record.is_empty()).then_some(Value::Object(record)))
    }
}

/// Applies one recorded change set (`{ put, removed }`) to a root's known files.
fn apply(files: &mut BTreeMap<String, Known>, changes: &Value) {
    if let Some(Value::Object(put)) = changes.get("put") {
        for (path, entry) in put {
            let sha256 = entry.get("sha256").and_then(Value::as_str).unwrap_or_default().to_string();
            let mode = entry.get("mode").and_then(Value::as_u64).map_or(0o644, |m| m as u32);
            files.insert(path.clone(), Known { sha256, mode, stamp: None });
        }
    }
    if let Some(Value::Array(removed)) = changes.get("removed") {
        for path in removed.iter().filter_map(Value::as_str) {
            files.remove(path);
        }
    }
}

/// Makes the folder `dir` (holding `here`) hold exactly `wanted`: what it lacks or holds
/// otherwise written from the store's blobs, what it holds besides removed.
fn make_equal(
    log: &mut EventLog,
    dir: &Path,
    here: &BTreeMap<String, Known>,
    wanted: &BTreeMap<String, Known>,
) -> Result<(), String> {
    for path in here.keys().filter(|path| !wanted.contains_key(*path)) {
        let file = dir.join(path);
        std::fs::remove_file(&file).map_err(|e| format!("cannot remove `{}`: {e}", file.display()))?;
    }
    for (path, known) in wanted {
        if here.get(path).is_some_and(|h| h.sha256 == known.sha256 && h.mode == known.mode) {
            continue;
        }
        let bytes = log.get_blob(&known.sha256)?.ok_or_else(|| {
            format!(
                "the store `{}` records `{path}` as {} but holds no such blob: the run's files cannot be restored",
                log.display(),
                known.sha256
            )
        })?;
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        }
        let cannot = |e: std::io::Error| format!("cannot write `{}`: {e}", file.display());
        match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&file).map_err(cannot)?,
            Ok(_) => std::fs::remove_file(&file).map_err(cannot)?,
            Err(_) => {}
        }
        if known.mode & 0o170000 == SYMLINK {
            let target = String::from_utf8_lossy(&bytes).into_owned();
            std::os::unix::fs::symlink(target, &file).map_err(cannot)?;
        } else {
            std::fs::write(&file, &bytes).map_err(cannot)?;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(known.mode & 0o7777)).map_err(cannot)?;
        }
    }
    Ok(())
}

/// A file's recorded contents: its bytes, or a symbolic link's target.
fn contents(path: &Path, mode: u32) -> Result<Vec<u8>, String> {
    let cannot = |e: std::io::Error| format!("cannot read `{}`: {e}", path.display());
    if mode & 0o170000 == SYMLINK {
        use std::os::unix::ffi::OsStrExt;
        return Ok(std::fs::read_link(path).map_err(cannot)?.as_os_str().as_bytes().to_vec());
    }
    std::fs::read(path).map_err(cannot)
}

/// The files under `dir` (a missing folder holds none), hashing only those whose size,
/// modification time or inode differ from `known`'s stamp.
fn walk(dir: &Path, known: &BTreeMap<String, Known>) -> Result<BTreeMap<String, Known>, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = stack.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && prefix.is_empty() => return Ok(files),
            Err(e) => return Err(format!("cannot read the folder `{}`: {e}", folder.display())),
        };
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read the folder `{}`: {e}", folder.display()))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
            let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            let path = entry.path();
            let meta =
                std::fs::symlink_metadata(&path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
            let kind = meta.file_type();
            if kind.is_dir() {
                stack.push((path, relative));
                continue;
            }
            if !kind.is_file() && !kind.is_symlink() {
                continue;
            }
            let mode = if kind.is_symlink() { SYMLINK | 0o777 } else { meta.mode() & 0o7777 };
            let stamp = Some((meta.len(), meta.mtime(), meta.mtime_nsec(), meta.ino()));
            let sha256 = match known.get(&relative) {
                Some(before) if before.stamp == stamp && before.mode == mode => before.sha256.clone(),
                _ => little_store::blob_id(&contents(&path, mode)?),
            };
            files.insert(relative, Known { sha256, mode, stamp });
        }
    }
    Ok(files)
}
