//! The floor of a whole check, for `scripts/bench-batch.sh`: a process that reads a file
//! and lets serde_json skip through it (`IgnoredAny`), checking that it is JSON and
//! nothing more. No check can cost less than this.

use serde::de::IgnoredAny;

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: little-bench-floor FILE");
        std::process::exit(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("cannot read `{}`: {e}", path.to_string_lossy());
            std::process::exit(2);
        }
    };
    if let Err(e) = serde_json::from_slice::<IgnoredAny>(&bytes) {
        eprintln!("`{}` is not JSON: {e}", path.to_string_lossy());
        std::process::exit(1);
    }
}
