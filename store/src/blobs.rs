//! Content-addressed blobs in a folder (`.little/blobs/` beside a file log): one file a
//! blob, named by the hex of its `sha256`, written to a temporary name, fsynced and renamed,
//! so a blob that exists is whole.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::blob_id;

/// The blob folder of a file log.
#[derive(Clone, Debug)]
pub struct BlobFolder {
    dir: PathBuf,
}

impl BlobFolder {
    /// The folder beside the log `log`: `.little/blobs` in its folder.
    pub fn beside(log: &Path) -> BlobFolder {
        let folder = log.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        BlobFolder { dir: folder.join(".little").join("blobs") }
    }

    fn path(&self, digest: &str) -> Result<PathBuf, String> {
        let hex = digest.strip_prefix("sha256:").filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        let hex = hex.ok_or_else(|| format!("`{digest}` is not a blob's identity (`sha256:` and 64 hex digits)"))?;
        Ok(self.dir.join(&hex[..2]).join(hex))
    }

    /// Stores `bytes`, returning their identity; a blob already there is kept.
    pub fn put(&self, bytes: &[u8]) -> Result<String, String> {
        let digest = blob_id(bytes);
        let path = self.path(&digest)?;
        if path.exists() {
            return Ok(digest);
        }
        let parent = path.parent().expect("a blob's path has a folder");
        let cannot = |e: std::io::Error| format!("cannot store a blob in `{}`: {e}", self.dir.display());
        std::fs::create_dir_all(parent).map_err(cannot)?;
        let temporary = parent.join(format!(".{}.{}", std::process::id(), &digest[7..]));
        let mut file = std::fs::File::create(&temporary).map_err(cannot)?;
        file.write_all(bytes).and_then(|()| file.sync_all()).map_err(cannot)?;
        std::fs::rename(&temporary, &path).map_err(cannot)?;
        Ok(digest)
    }

    /// The blob stored under `digest`, `None` when there is none.
    pub fn get(&self, digest: &str) -> Result<Option<Vec<u8>>, String> {
        let path = self.path(digest)?;
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read the blob `{}`: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_comes_back_by_its_identity_and_a_bad_identity_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobFolder::beside(&dir.path().join("events.jsonl"));
        let id = blobs.put(b"hello").unwrap();
        assert_eq!(id, blob_id(b"hello"));
        assert_eq!(blobs.put(b"hello").unwrap(), id, "storing twice is storing once");
        assert_eq!(blobs.get(&id).unwrap().as_deref(), Some(&b"hello"[..]));
        assert_eq!(blobs.get(&blob_id(b"other")).unwrap(), None);
        assert!(blobs.get("sha256:../../etc/passwd").unwrap_err().contains("not a blob"));
    }
}
