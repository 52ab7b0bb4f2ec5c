//! Shell completions and the manual page: the bash script, loaded in a real bash, completes
//! a subcommand and a flag; every other shell gets a script; `little man` is a roff page
//! that names every command.

mod common;

use std::process::Command;

use common::little;

/// What bash's completion function offers for `words` (the last one being completed).
fn complete_in_bash(script: &str, words: &[&str]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("little-completions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("little-{}.bash", words.len()));
    std::fs::write(&path, script).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _little little '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let output = Command::new("bash").args(["--norc", "-c", &program]).output().expect("bash runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn the_bash_completion_completes_a_subcommand_and_a_flag_in_a_real_bash() {
    let run = little(["completions", "bash"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(complete_in_bash(&run.stdout, &["little", "che"]), ["check"]);
    let plans = complete_in_bash(&run.stdout, &["little", "plan", "--lea"]);
    assert_eq!(plans, ["--lease"], "{plans:?}");
    let flags = complete_in_bash(&run.stdout, &["little", "check", "--deny"]);
    assert_eq!(flags, ["--deny-warnings"], "{flags:?}");
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_refused() {
    for (shell, marker) in
        [("zsh", "#compdef little"), ("fish", "complete -c little"), ("powershell", "Register-ArgumentCompleter")]
    {
        let run = little(["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell}: {}", &run.stdout[..run.stdout.len().min(300)]);
    }
    let run = little(["completions", "tcsh"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("bash") && run.stderr.contains("zsh"), "the shells it takes are named: {}", run.stderr);
}

#[test]
fn the_manual_page_is_roff_and_names_every_command() {
    let run = little(["man"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(".TH little 1"), "{}", &run.stdout[..200]);
    for command in ["check", "compile", "explain", "plan", "fix", "verify", "events", "lsp", "completions", "man"] {
        let section = format!(".SH \"LITTLE {}\"", command.to_uppercase());
        assert!(run.stdout.contains(&section), "no section {section}");
    }
    assert!(run.stdout.contains("\\-\\-lease"), "a command's options are on the page");
    if Command::new("man").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let dir = std::env::temp_dir().join(format!("little-man-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("little.1"), &run.stdout).unwrap();
        let shown = Command::new("man").arg("-l").arg(dir.join("little.1")).env("MANPAGER", "cat").output().unwrap();
        assert!(shown.status.success(), "man reads the page: {}", String::from_utf8_lossy(&shown.stderr));
    }
}
