//! What the bounds add to one bash call: `bash -c true` with and without them, with
//! `Mode::None` and under bubblewrap, in one run so that the figures compare.
//!
//! `cargo bench -p little-sandbox --bench bounds`; the ratio of each pair is printed at the
//! end (docs/benchmarks.md).

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use little_sandbox::{Mode, Mount, Sandbox};

fn sandbox(mode: Mode, dir: &std::path::Path, unbounded: bool) -> Sandbox {
    let mut sandbox =
        Sandbox::new(mode, vec![Mount { host: dir.into(), guest: "/job".into(), writable: true }], "/job");
    sandbox.unbounded = unbounded;
    sandbox
}

/// Calls of each kind in the interleaved comparison.
const PAIRS: usize = 300;

fn name(mode: Mode) -> &'static str {
    if mode == Mode::Bwrap { "bwrap" } else { "none" }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn bounds(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("little-bench-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A scratch with a few files in it, as a session's has (skills, the model's work).
    for i in 0..20 {
        std::fs::write(dir.join(format!("file{i}")), vec![b'x'; 4096]).unwrap();
    }
    let mut modes = vec![Mode::None];
    match little_sandbox::check_available(Mode::Bwrap) {
        Ok(()) => modes.push(Mode::Bwrap),
        Err(err) => eprintln!("note: no Bwrap figures: {err}"),
    }
    eprintln!("bounds not held here: {:?}", little_sandbox::unenforced(Mode::None));
    eprintln!("how a call gets into its cgroups: {}", little_sandbox::limits::cgroup_entry());
    let mut group = c.benchmark_group("bash_true");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for &mode in &modes {
        for (variant, unbounded) in [("unbounded", true), ("bounded", false)] {
            let sandbox = sandbox(mode, &dir, unbounded);
            assert_eq!(sandbox.run("true").unwrap().exit_code, 0);
            group.bench_function(format!("{}/{variant}", name(mode)), |b| {
                b.iter(|| assert_eq!(sandbox.run("true").unwrap().exit_code, 0))
            });
        }
    }
    group.finish();
    // The machine is shared, so the pair is also measured interleaved, call by call, and
    // compared by medians: a burst of load elsewhere then slows both alike.
    for &mode in &modes {
        let (without, with) = (sandbox(mode, &dir, true), sandbox(mode, &dir, false));
        let (mut free, mut bounded) = (Vec::new(), Vec::new());
        for _ in 0..PAIRS {
            for (sandbox, times) in [(&without, &mut free), (&with, &mut bounded)] {
                let began = Instant::now();
                assert_eq!(sandbox.run("true").unwrap().exit_code, 0);
                times.push(began.elapsed());
            }
        }
        let (free, bounded) = (median(free), median(bounded));
        eprintln!(
            "{}: median of {PAIRS} interleaved calls without the bounds {:.3} ms, with them {:.3} ms: {:+.3} ms, ratio {:.3}",
            name(mode),
            free.as_secs_f64() * 1e3,
            bounded.as_secs_f64() * 1e3,
            (bounded.as_secs_f64() - free.as_secs_f64()) * 1e3,
            bounded.as_secs_f64() / free.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bounds);
criterion_main!(benches);
