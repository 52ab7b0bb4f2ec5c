//! The size bound of a directory after a call: measure it, and when it holds more than its
//! bound, roll the call's newest writes back until it does not.
//!
//! A directory's size is what its entries take on disk, each inode once: for a regular file
//! the larger of its length and its allocated blocks (so a sparse file counts at its length),
//! for anything else its blocks. Nothing is followed out of the directory: not a symlink,
//! not another file system mounted inside.
//!
//! The call's writes are told from what was there by a [`Snapshot`] taken before it (each
//! regular file's length, by path). Rolling back cuts the files that grew, newest first
//! (by modification time), back towards their length before the call — a file new in the
//! call from zero — and then, if that is not enough, removes entries new in the call,
//! newest first. What was there before the call is never cut below its old length nor
//! removed, so a directory already over its bound before the call stays over it (the
//! result says so).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What a directory held before a call: each entry's path (relative), and each regular
/// file's length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    entries: BTreeMap<PathBuf, Option<u64>>,
}

impl Snapshot {
    /// Walks `dir` (a missing or unreadable directory is empty).
    pub fn take(dir: &Path) -> Snapshot {
        let mut entries = BTreeMap::new();
        walk(dir, &mut |relative, meta| {
            entries.insert(relative.to_path_buf(), meta.is_file().then_some(meta.len()));
        });
        Snapshot { entries }
    }
}

/// What [`enforce`] found and did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rollback {
    pub limit: u64,
    /// Bytes the directory held after the call.
    pub found: u64,
    /// Bytes it holds after the rollback (over `limit` only when what was there before the
    /// call is already over it).
    pub kept: u64,
}

/// Bytes `dir` takes, as the module documentation counts them.
pub fn usage(dir: &Path) -> u64 {
    let mut seen = BTreeSet::new();
    let mut total = 0u64;
    walk(dir, &mut |_, meta| {
        if seen.insert((meta.dev(), meta.ino())) {
            total = total.saturating_add(charge(meta));
        }
    });
    total
}

/// Holds `dir` to `limit` after a call whose writes began after `before` was taken:
/// `None` when it is within the bound, else what was rolled back.
pub fn enforce(dir: &Path, limit: u64, before: &Snapshot) -> Option<Rollback> {
    let found = usage(dir);
    if found <= limit {
        return None;
    }
    // Every entry now, newest first (ties by path, so the order does not depend on the walk).
    let mut now: Vec<(PathBuf, Metadata)> = Vec::new();
    walk(dir, &mut |relative, meta| now.push((relative.to_path_buf(), meta.clone())));
    let mtime = |meta: &Metadata| (meta.mtime(), meta.mtime_nsec());
    now.sort_by(|(a_path, a), (b_path, b)| mtime(b).cmp(&mtime(a)).then_with(|| a_path.cmp(b_path)));

    // Cut what grew back towards its length before the call; blocks make the count
    // approximate, so measure again and cut again (a few rounds at most).
    let mut excess = found - limit;
    for _ in 0..4 {
        for (relative, _) in &now {
            if excess == 0 {
                break;
            }
            let path = dir.join(relative);
            let Ok(meta) = fs::symlink_metadata(&path) else { continue };
            if !meta.is_file() {
                continue;
            }
            let floor = before.entries.get(relative).copied().flatten().unwrap_or(0);
            let charged = charge(&meta);
            if charged <= floor {
                continue;
            }
            let cut = (charged - floor).min(excess);
            // Cut from the length, in whole blocks, since a partial one is charged in full
            // (and a large file's blocks also hold its extent tree).
            let block = meta.blksize().max(512);
            let length = (meta.len().saturating_sub(cut) / block * block).max(floor).min(meta.len());
            if truncate(&path, length) {
                excess = excess.saturating_sub(charged.saturating_sub(length));
            }
        }
        excess = usage(dir).saturating_sub(limit);
        if excess == 0 {
            break;
        }
    }
    // Then remove what is new, files before the directories that held them.
    if excess > 0 {
        let mut new: Vec<&(PathBuf, Metadata)> =
            now.iter().filter(|(path, _)| !before.entries.contains_key(path)).collect();
        new.sort_by_key(|(path, meta)| meta.is_dir().then(|| usize::MAX - path.components().count()));
        for (relative, meta) in new {
            if usage(dir) <= limit {
                break;
            }
            let path = dir.join(relative);
            let _ = if meta.is_dir() { fs::remove_dir(&path) } else { fs::remove_file(&path) };
        }
    }
    Some(Rollback { limit, found, kept: usage(dir) })
}

/// Bytes an entry takes: a regular file its length or its blocks, whichever is more.
fn charge(meta: &Metadata) -> u64 {
    let blocks = meta.blocks().saturating_mul(512);
    if meta.is_file() { blocks.max(meta.len()) } else { blocks }
}

/// Cuts a regular file (never following a symlink) to `length` bytes.
fn truncate(path: &Path, length: u64) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(|file| if file.metadata()?.is_file() { file.set_len(length) } else { Ok(()) })
        .is_ok()
}

/// Visits every entry under `dir` (not `dir` itself) without following symlinks or
/// crossing into another file system, with its path relative to `dir`. The directory
/// itself is visited first, as the empty path, so that its own blocks are counted.
fn walk(dir: &Path, visit: &mut dyn FnMut(&Path, &Metadata)) {
    let Ok(top) = fs::symlink_metadata(dir) else { return };
    if !top.is_dir() {
        return;
    }
    visit(Path::new(""), &top);
    let device = top.dev();
    let mut stack = vec![PathBuf::new()];
    while let Some(relative) = stack.pop() {
        let Ok(entries) = fs::read_dir(dir.join(&relative)) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let path = relative.join(entry.file_name());
            visit(&path, &meta);
            if meta.is_dir() && meta.dev() == device {
                stack.push(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("little-quota-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(path: &Path, bytes: usize) {
        fs::write(path, vec![b'x'; bytes]).unwrap();
    }

    #[test]
    fn within_the_bound_nothing_is_touched() {
        let dir = scratch("within");
        write(&dir.join("a"), 10_000);
        let before = Snapshot::take(&dir);
        write(&dir.join("b"), 10_000);
        assert_eq!(enforce(&dir, 1 << 20, &before), None);
        assert_eq!(fs::metadata(dir.join("b")).unwrap().len(), 10_000);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_calls_writes_are_cut_and_what_was_there_stays() {
        let dir = scratch("over");
        write(&dir.join("old"), 100_000);
        write(&dir.join("grown"), 50_000);
        let before = Snapshot::take(&dir);
        let base = usage(&dir);
        // The call: appends to `grown`, writes two new files and a new directory with one.
        write(&dir.join("grown"), 300_000);
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(&dir.join("new1"), 400_000);
        fs::create_dir(dir.join("sub")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(&dir.join("sub").join("new2"), 400_000);
        let limit = base + 500_000;
        let rollback = enforce(&dir, limit, &before).unwrap();
        assert!(rollback.found > limit && rollback.kept <= limit, "{rollback:?}");
        assert_eq!(usage(&dir), rollback.kept);
        assert_eq!(fs::metadata(dir.join("old")).unwrap().len(), 100_000);
        assert!(fs::metadata(dir.join("grown")).unwrap().len() >= 50_000);
        // The newest write went first.
        let newest = fs::metadata(dir.join("sub").join("new2")).map_or(0, |m| m.len());
        assert!(newest < 400_000, "{newest}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_already_over_keeps_what_it_had() {
        let dir = scratch("before");
        write(&dir.join("old"), 200_000);
        let before = Snapshot::take(&dir);
        write(&dir.join("new"), 10_000);
        let rollback = enforce(&dir, 50_000, &before).unwrap();
        assert!(rollback.kept > 50_000, "{rollback:?}");
        assert_eq!(fs::metadata(dir.join("old")).unwrap().len(), 200_000);
        assert!(!dir.join("new").exists() || fs::metadata(dir.join("new")).unwrap().len() == 0);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn symlinks_are_not_followed() {
        let dir = scratch("links");
        let outside = scratch("links-outside");
        write(&outside.join("big"), 300_000);
        let before = Snapshot::take(&dir);
        std::os::unix::fs::symlink(outside.join("big"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("dirlink")).unwrap();
        assert!(usage(&dir) < 100_000);
        assert_eq!(enforce(&dir, 100_000, &before), None);
        assert_eq!(fs::metadata(outside.join("big")).unwrap().len(), 300_000);
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }
}
