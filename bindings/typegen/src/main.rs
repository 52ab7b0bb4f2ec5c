//! `cargo run -p little-typegen`: writes the packages' type declarations from the schemas
//! of what little writes. With `--check`, writes nothing and fails (exit 1) when a
//! committed file differs from what it would write.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("little-typegen: unknown argument `{other}` (usage: {} [--check])", little_typegen::COMMAND);
            return ExitCode::from(2);
        }
    };
    let result = if check {
        little_typegen::stale(&root).map(|stale| {
            for path in &stale {
                eprintln!("little-typegen: {path} is stale; run `{}`", little_typegen::COMMAND);
            }
            stale.is_empty()
        })
    } else {
        little_typegen::generate().and_then(|files| {
            for file in files {
                let path = root.join(file.path);
                let unchanged = std::fs::read_to_string(&path).is_ok_and(|text| text == file.text);
                if !unchanged {
                    std::fs::write(&path, &file.text)
                        .map_err(|e| little_typegen::Error(format!("cannot write {}: {e}", file.path)))?;
                }
                eprintln!("little-typegen: {} {}", if unchanged { "unchanged" } else { "wrote" }, file.path);
            }
            Ok(true)
        })
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("little-typegen: {error}");
            ExitCode::from(2)
        }
    }
}
