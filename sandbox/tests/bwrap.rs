//! Mode::Bwrap: the command sees only the system directories and its mounts, has no
//! network, cannot write outside its writable mounts, and leaves nothing running.

mod common;

use std::fs;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use little_sandbox::{Mode, Sandbox};

/// bubblewrap exits only once its PID namespace is empty (at the deadline too: the
/// namespace's init is killed first), so nothing may be left the moment `run` returns.
const GRACE: Duration = Duration::ZERO;

#[test]
fn no_network_while_the_same_command_connects_without_the_sandbox() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    // Mode::None connects: the probe can tell a reachable port.
    let open = sandbox(Mode::None, &scratch.dir("w")).run(&command).unwrap();
    assert_eq!((open.exit_code, open.stdout.as_str()), (0, "connected\n"), "{open:?}");
    let closed = sandbox(Mode::Bwrap, &scratch.dir("w")).run(&command).unwrap();
    assert_ne!(closed.exit_code, 0, "{closed:?}");
    assert!(!closed.stdout.contains("connected"), "{closed:?}");
    // Only a loopback, and it is down.
    let links = sandbox(Mode::Bwrap, &scratch.dir("w")).run("cat /proc/net/dev").unwrap();
    assert!(!links.stdout.contains("eth"), "{links:?}");
}

#[test]
fn host_files_beside_the_mounts_are_invisible() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let work = scratch.dir("work");
    let home = scratch.dir("home");
    let sibling = scratch.dir("sibling");
    fs::write(home.join("secret.txt"), "home secret").unwrap();
    fs::write(sibling.join("secret.txt"), "sibling secret").unwrap();
    fs::write(work.join("visible.txt"), "visible").unwrap();
    // The mount at its own host path, so the sibling's host path is meaningful inside too.
    let sandbox = Sandbox::new(Mode::Bwrap, vec![mount(&work, &work, true)], &work);
    let out = sandbox.run("cat visible.txt").unwrap();
    assert_eq!(out.stdout, "visible", "{out:?}");
    for path in [home.join("secret.txt"), sibling.join("secret.txt")] {
        let out = sandbox.run(&format!("cat '{}'", path.display())).unwrap();
        assert_ne!(out.exit_code, 0, "{path:?} readable: {out:?}");
        assert!(!out.stdout.contains("secret"), "{out:?}");
    }
    let test_home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_string());
    let cwd = std::env::current_dir().unwrap();
    for dir in ["/root".to_string(), test_home, cwd.display().to_string(), "/home".to_string(), "/var".to_string()] {
        let out = sandbox.run(&format!("ls -A '{dir}'")).unwrap();
        assert_ne!(out.exit_code, 0, "{dir} listable: {out:?}");
    }
    // Root owns /etc's secrets, but they are hidden.
    let out = sandbox.run("cat /etc/shadow /etc/gshadow; ls -A /etc/ssh /etc/ssl/private").unwrap();
    for secret in ["/etc/shadow", "/etc/gshadow"] {
        if let Ok(text) = fs::read_to_string(secret)
            && let Some(line) = text.lines().next()
        {
            assert!(!out.stdout.contains(line), "{secret} readable: {out:?}");
        }
    }
    for dir in ["/etc/ssh", "/etc/ssl/private"] {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().into_string().unwrap();
            assert!(!out.stdout.lines().any(|line| line == name), "{dir}/{name} visible: {out:?}");
        }
    }
    // The root holds only what the sandbox made.
    let out = sandbox.run("ls -A /").unwrap();
    let mut expected: Vec<&str> = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "etc", "opt"]
        .into_iter()
        .filter(|dir| fs::symlink_metadata(format!("/{dir}")).is_ok())
        .chain(["proc", "dev", "tmp"])
        .collect();
    expected.push(work.iter().nth(1).unwrap().to_str().unwrap()); // `tmp` again, the mount's top
    expected.sort();
    expected.dedup();
    let mut seen: Vec<&str> = out.stdout.lines().collect();
    seen.sort();
    assert_eq!(seen, expected, "{out:?}");
}

#[test]
fn writes_land_only_in_writable_mounts() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let rw = scratch.dir("rw");
    let ro = scratch.dir("ro");
    let parent = &scratch.root;
    let name = format!("little-sandbox-probe-{}", marker());
    let sandbox = Sandbox::new(Mode::Bwrap, vec![mount(&rw, &rw, true), mount(&ro, &ro, false)], &rw);

    let out = sandbox.run(&format!("echo written > '{}/{name}'", rw.display())).unwrap();
    assert_eq!(out.exit_code, 0, "{out:?}");
    assert_eq!(fs::read_to_string(rw.join(&name)).unwrap(), "written\n");

    for dir in [ro.as_path(), "/usr".as_ref(), "/etc".as_ref(), "/usr/local".as_ref(), "/opt".as_ref()] {
        if !dir.exists() {
            continue;
        }
        let out = sandbox.run(&format!("echo x > '{}/{name}'", dir.display())).unwrap();
        assert_ne!(out.exit_code, 0, "{dir:?} writable: {out:?}");
        assert!(!escaped(&dir.join(&name)), "{dir:?}/{name} appeared on the host");
    }
    // The parent of the mounts and /tmp are the sandbox's own tmpfs: writing there may work,
    // but nothing reaches the host.
    for dir in [parent.as_path(), "/tmp".as_ref(), "/".as_ref()] {
        let _ = sandbox.run(&format!("echo x > '{}/{name}'", dir.display())).unwrap();
        assert!(!escaped(&dir.join(&name)), "{dir:?}/{name} appeared on the host");
    }
    // Even as root the command holds no capability, so it cannot make a bind writable.
    let out = sandbox
        .run(&format!("mount -o remount,rw,bind /usr 2>&1; touch /usr/{name}; grep CapEff /proc/self/status"))
        .unwrap();
    assert!(!escaped(&Path::new("/usr").join(&name)), "/usr/{name} appeared on the host");
    assert!(out.stdout.contains("CapEff:\t0000000000000000"), "{out:?}");
}

/// Whether a probe reached the host; removes it if it did, so a failing run leaves no litter.
fn escaped(path: &Path) -> bool {
    let there = fs::symlink_metadata(path).is_ok();
    if there {
        let _ = fs::remove_file(path);
    }
    there
}

#[test]
fn the_environment_is_only_path_lang_and_home() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let out = sandbox(Mode::Bwrap, &scratch.dir("w")).run("env").unwrap();
    let mut expected: Vec<String> = ["HOME", "LANG", "PATH"].iter().chain(&BASH_OWN).map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(env_names(&out.stdout), expected, "{out:?}");
    assert!(out.stdout.contains("PATH=/usr/local/bin:/usr/bin:/bin\n"), "{out:?}");
    assert!(out.stdout.contains("LANG=C.UTF-8\n"), "{out:?}");
    assert!(out.stdout.contains("HOME=/job\n"), "{out:?}");
}

#[test]
fn workdir_is_the_guest_path() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let host = scratch.dir("w");
    fs::create_dir(host.join("sub")).unwrap();
    let mut sandbox = sandbox(Mode::Bwrap, &host);
    sandbox.workdir = "/job/sub".into();
    let out = sandbox.run("pwd; echo $HOME").unwrap();
    assert_eq!(out.stdout, "/job/sub\n/job/sub\n", "{out:?}");
}

#[test]
fn background_processes_die_with_the_command() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let sandbox = sandbox(Mode::Bwrap, &scratch.dir("w"));
    let (plain, subshell) = (marker(), marker());
    let out = sandbox.run(&format!("sleep {plain} & (sleep {subshell}; ) & echo started")).unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str(), out.timed_out), (0, "started\n", false), "{out:?}");
    assert!(out.duration < Duration::from_secs(2), "{out:?}");
    assert!(gone_within(&format!("sleep {plain}"), GRACE), "`sleep {plain} &` survived");
    assert!(gone_within(&format!("sleep {subshell}"), GRACE), "the subshell's sleep survived");
}

#[test]
fn a_timeout_kills_everything_and_returns_promptly() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let mut sandbox = sandbox(Mode::Bwrap, &scratch.dir("w"));
    sandbox.timeout = Duration::from_millis(500);
    let (background, foreground) = (marker(), marker());
    let start = Instant::now();
    let out = sandbox.run(&format!("echo before; sleep {background} & sleep {foreground}")).unwrap();
    let elapsed = start.elapsed();
    assert_eq!((out.exit_code, out.timed_out), (124, true), "{out:?}");
    assert_eq!(out.stdout, "before\n", "{out:?}");
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert!(gone_within(&format!("sleep {background}"), GRACE), "the background sleep survived");
    assert!(gone_within(&format!("sleep {foreground}"), GRACE), "the foreground sleep survived");
}

#[test]
fn setsid_does_not_escape_the_pid_namespace() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let mut sandbox = sandbox(Mode::Bwrap, &scratch.dir("w"));
    sandbox.timeout = Duration::from_millis(500);
    let (escaped, held) = (marker(), marker());
    let start = Instant::now();
    // The escapee keeps stdout open: the call must still return at the deadline.
    let out = sandbox.run(&format!("setsid sleep {escaped} & sleep {held}")).unwrap();
    assert_eq!((out.exit_code, out.timed_out), (124, true), "{out:?}");
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
    assert!(gone_within(&format!("sleep {escaped}"), GRACE), "the setsid sleep survived");
    assert!(gone_within(&format!("sleep {held}"), GRACE));
    // Without a timeout too: the command exits, the namespace goes.
    sandbox.timeout = Duration::from_secs(10);
    let escaped = marker();
    let start = Instant::now();
    let out = sandbox.run(&format!("setsid sleep {escaped} & echo done")).unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str(), out.timed_out), (0, "done\n", false), "{out:?}");
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
    assert!(gone_within(&format!("sleep {escaped}"), GRACE), "the setsid sleep survived");
}

#[test]
fn ten_megabytes_of_output_are_cut_to_the_bound() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let out =
        sandbox(Mode::Bwrap, &scratch.dir("w")).run("yes | head -c 10000000; yes e | head -c 10000000 >&2").unwrap();
    assert_eq!(out.exit_code, 0);
    assert!(out.truncated && !out.timed_out);
    assert_eq!(out.stdout.len(), 64 * 1024);
    assert_eq!(out.stderr.len(), 64 * 1024);
    assert!(out.stdout.starts_with("y\ny\n") && out.stderr.starts_with("e\ne\n"));
}

#[test]
fn exit_codes_and_both_streams_come_back() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let sandbox = sandbox(Mode::Bwrap, &scratch.dir("w"));
    let out = sandbox.run("echo out; echo err >&2; exit 3").unwrap();
    assert_eq!((out.exit_code, out.stdout.as_str(), out.stderr.as_str()), (3, "out\n", "err\n"), "{out:?}");
    assert!(!out.truncated && !out.timed_out);
    let out = sandbox.run("kill -9 $$").unwrap();
    assert_eq!(out.exit_code, 128 + 9, "{out:?}");
    let out = sandbox.run("no-such-command-here").unwrap();
    assert_eq!(out.exit_code, 127, "{out:?}");
    assert!(out.stderr.contains("no-such-command-here"), "{out:?}");
    // stdin is empty, not the test's.
    let out = sandbox.run("cat; echo end").unwrap();
    assert_eq!(out.stdout, "end\n", "{out:?}");
}

#[test]
fn only_the_standard_streams_are_inherited() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let out = sandbox(Mode::Bwrap, &scratch.dir("w")).run("ls /proc/self/fd | sort -n | tr '\\n' ' '").unwrap();
    // 3 is the directory `ls` itself reads.
    assert_eq!(out.stdout, "0 1 2 3 ", "{out:?}");
}

#[test]
fn a_missing_mount_is_an_error() {
    let scratch = Scratch::new();
    let missing = scratch.root.join("not-there");
    let sandbox = Sandbox::new(Mode::Bwrap, vec![mount(&missing, "/job", true)], "/job");
    let err = sandbox.run("true").unwrap_err();
    assert!(err.contains(&format!("mount `{}` does not exist", missing.display())), "{err}");
}

#[test]
fn a_sandbox_bubblewrap_cannot_set_up_is_an_error_with_its_message() {
    if !bwrap_usable() {
        return;
    }
    let scratch = Scratch::new();
    let mut sandbox = sandbox(Mode::Bwrap, &scratch.dir("w"));
    sandbox.workdir = "/job/missing".into();
    let err = sandbox.run("true").unwrap_err();
    assert!(err.starts_with("bubblewrap could not start the command: bwrap: Can't chdir to /job/missing"), "{err}");
    // A command of its own that exits 1 is not mistaken for that.
    sandbox.workdir = "/job".into();
    let out = sandbox.run("echo 'bwrap: fake' >&2; exit 1").unwrap();
    assert_eq!((out.exit_code, out.stderr.as_str()), (1, "bwrap: fake\n"));
}

#[test]
fn a_workdir_outside_the_mounts_is_an_error() {
    let scratch = Scratch::new();
    let sandbox = Sandbox::new(Mode::Bwrap, vec![mount(&scratch.dir("w"), "/job", true)], "/elsewhere");
    let err = sandbox.run("true").unwrap_err();
    assert!(err.contains("the working directory `/elsewhere` is inside no mount (guest paths: `/job`)"), "{err}");
}
