//! No variable of the calling process reaches the command, in either mode. A test binary of
//! its own, with a single test, because it sets a variable in its own process.

mod common;

use common::*;
use little_sandbox::Mode;

const NAME: &str = "LITTLE_SANDBOX_TEST_SECRET";
const VALUE: &str = "sk-test-5f3a9c1e";

#[test]
fn the_callers_secrets_do_not_reach_the_command() {
    // SAFETY: the only test of this binary, and it starts no thread before this.
    unsafe { std::env::set_var(NAME, VALUE) };
    assert_eq!(std::env::var(NAME).as_deref(), Ok(VALUE));
    let scratch = Scratch::new();
    // /proc/1/environ is bubblewrap's own (the sandbox's PID 1) under Bwrap.
    let command = "env; echo; tr '\\0' '\\n' < /proc/self/environ; tr '\\0' '\\n' < /proc/1/environ 2>/dev/null; true";
    let mut modes = vec![Mode::None];
    if bwrap_usable() {
        modes.push(Mode::Bwrap);
    }
    for mode in modes {
        let out = sandbox(mode, &scratch.dir("w")).run(command).unwrap();
        assert_eq!(out.exit_code, 0, "{mode:?}: {out:?}");
        assert!(out.stdout.contains("LANG=C.UTF-8"), "{mode:?}: {out:?}");
        assert!(!out.stdout.contains(NAME) && !out.stdout.contains(VALUE), "{mode:?} leaked the secret: {out:?}");
    }
}
