//! What the binary's integration tests share: running `little`, and the fixtures.

#![allow(dead_code)] // each test file uses its own part

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run of the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `little` with colour off, and fails the test on a panic or a signal.
pub fn little<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let output = Command::new(env!("CARGO_BIN_EXE_little"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the little binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let code = output.status.code().unwrap_or_else(|| panic!("little was killed by a signal; stderr:\n{stderr}"));
    assert!(!stderr.contains("panicked"), "little panicked:\n{stderr}");
    assert_ne!(code, 101, "little panicked:\n{stderr}");
    Run { code, stdout: String::from_utf8_lossy(&output.stdout).into_owned(), stderr }
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}
