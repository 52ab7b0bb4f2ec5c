//! The bounds of bash calls through `little plan` (built-in harness, scripted model, bash
//! under bubblewrap): a call past a bound ends with a result naming it, the session goes
//! on, the log replays, `little events` shows it; the bounds come from the flags, else
//! `[sandbox]` of little.toml; a bad `[sandbox]` is a clear error before anything is written.

mod common;

use common::model::{Case, RUN, bash, good_lwir, of_type, scripted, submit, tool_result};

/// What the scratch takes on disk, counted as the sandbox counts it.
fn scratch_usage(case: &Case) -> u64 {
    little_sandbox::quota::usage(&case.scratch())
}

#[test]
fn a_gibibyte_written_into_scratch_is_rolled_back_and_the_run_goes_on_and_replays() {
    let case = Case::new("bounds-scratch");
    let server = scripted(vec![
        bash("s1", "for i in $(seq 11); do head -c 100M /dev/zero > f$i; done; echo wrote"),
        bash("s2", "rm -f f*; echo room > n; cat n"),
        submit("s3", good_lwir()),
    ]);
    case.provider(&server.base_url(), "");
    let run = case.plan(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = case.lines();
    let first = tool_result(&lines, "1.1");
    assert_eq!(first["limit"], "scratch", "{first}");
    assert_eq!(first["stdout"], "wrote\n", "{first}");
    let stderr = first["stderr"].as_str().unwrap();
    assert!(stderr.contains("over its bound of 256 MiB: the command's newest writes were cut or removed"), "{stderr}");
    let second = tool_result(&lines, "2.1");
    assert_eq!((second["stdout"].as_str(), second.get("limit")), (Some("room\n"), None), "{second}");
    assert!(scratch_usage(&case) <= 256 << 20);
    let started = &of_type(&lines, "harness.session.started")[0]["payload"];
    assert!(started["unenforcedBounds"].is_array(), "{started}");

    // The log replays: nothing is called again, and the run ends as it did.
    let replayed = case.plan(&[]);
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert!(replayed.stdout.contains("nothing called"), "{}", replayed.stdout);

    let shown = case.little(&["events".into(), case.log().display().to_string()]);
    assert!(
        shown.stdout.contains(
            "1.1 bash $ for i in $(seq 11); do head -c 100M /dev/zero > f$i; done; echo wrote: exit 0, limit scratch, "
        ),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.starts_with(&format!("run {RUN}\n")));
}

#[test]
fn the_file_size_bound_comes_from_the_flag_else_from_little_toml() {
    for (name, toml, flags, expected) in [
        ("bounds-toml", "[sandbox]\nfile_size = \"1MiB\"\n", vec![], 1u64 << 20),
        ("bounds-flag", "[sandbox]\nfile_size = \"1MiB\"\n", vec!["--max-file-size", "2MiB"], 2 << 20),
    ] {
        let case = Case::new(name);
        let server = scripted(vec![bash("f1", "head -c 5M /dev/zero > big; echo on"), submit("f2", good_lwir())]);
        case.write(
            "little.toml",
            &format!("[providers.openai]\nbase_url = \"{}\"\nstream = true\n{toml}", server.base_url()),
        );
        let run = case.plan(&flags);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let result = tool_result(&case.lines(), "1.1");
        assert_eq!(
            (result["limit"].as_str(), result["stdout"].as_str()),
            (Some("file_size"), Some("on\n")),
            "{result}"
        );
        assert_eq!(std::fs::metadata(case.scratch().join("big")).unwrap().len(), expected, "{name}");
    }
}

#[test]
fn a_bad_sandbox_table_or_flag_is_a_clear_error_and_writes_nothing() {
    let case = Case::new("bounds-bad");
    let server = scripted(vec![submit("b1", good_lwir())]);
    case.write(
        "little.toml",
        &format!("[providers.openai]\nbase_url = \"{}\"\n[sandbox]\nmemroy = \"1G\"\n", server.base_url()),
    );
    let run = case.plan(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("little.toml:4:1: unknown key `memroy` in [sandbox]; did you mean `memory`?"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(case.lines().is_empty(), "the log was written to: {:?}", case.lines());

    let run = case.plan(&["--max-memory", "lots"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`lots` is not a size"), "{}", run.stderr);
}
