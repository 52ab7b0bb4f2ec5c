//! Which files `little check PATH…` checks: files named on the command line always;
//! below a folder, every `*.json` file, in a deterministic (sorted) order. Whether a
//! discovered file is a draft or LWIR is decided after parsing it (by its `format` or
//! `apiVersion`); other JSON is skipped.

use std::path::PathBuf;

/// One file to check, and whether it was found by walking a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
    pub discovered: bool,
}

/// Expands folders into their JSON files. Walks with an explicit stack (no recursion on
/// folder depth), skips hidden entries (`.git`, `.cache`…) and `target` folders, and never
/// follows symbolic links to folders, so a link loop cannot trap it.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<Candidate>, String> {
    let mut out = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        if !metadata.is_dir() {
            out.push(Candidate { path: path.clone(), discovered: false });
            continue;
        }
        let mut found = Vec::new();
        let mut stack = vec![path.clone()];
        while let Some(dir) = stack.pop() {
            let entries =
                std::fs::read_dir(&dir).map_err(|e| format!("cannot read folder `{}`: {e}", dir.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("cannot read folder `{}`: {e}", dir.display()))?;
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') || name == "target" {
                    continue;
                }
                let kind = entry.file_type().map_err(|e| format!("cannot read `{}`: {e}", entry.path().display()))?;
                if kind.is_dir() {
                    stack.push(entry.path());
                } else if name.ends_with(".json") && (kind.is_file() || kind.is_symlink() && entry.path().is_file()) {
                    found.push(entry.path());
                }
            }
        }
        found.sort();
        out.extend(found.into_iter().map(|path| Candidate { path, discovered: true }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_expand_to_sorted_json_files_skipping_hidden_and_target() {
        let root = std::env::temp_dir().join(format!("little-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["a/b", ".git", "target", "c"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in ["a/b/z.json", "a/y.json", "c/x.json", "c/notes.txt", ".git/h.json", "target/t.json", "top.json"] {
            std::fs::write(root.join(file), "{}").unwrap();
        }
        let found = expand(std::slice::from_ref(&root)).unwrap();
        let names: Vec<String> =
            found.iter().map(|c| c.path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/")).collect();
        assert_eq!(names, ["a/b/z.json", "a/y.json", "c/x.json", "top.json"]);
        assert!(found.iter().all(|c| c.discovered));
        let explicit = expand(&[root.join("c/notes.txt")]).unwrap();
        assert!(!explicit[0].discovered);
        assert!(expand(&[root.join("missing")]).unwrap_err().contains("cannot read"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
