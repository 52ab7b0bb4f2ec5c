//! The soak of the editor's recovery: `N` random edits (default 1,000) inside one element
//! of each draft of `guarantee_drafts`, in each layout (or the layouts named after `N`),
//! held to `check_guarantee`; prints the cases, the failures and the time a layout, and
//! the first failures. Each layout has its own seed, so a layout run alone or beside the
//! others gets the same cases. Run it with `--release`:
//! `cargo run --release -p little-conformance --example recovery_soak -- 100000 [LAYOUT...]`.

use little_conformance::layouts::{LAYOUTS, lay_out};
use little_conformance::recovery::{Edit, check_guarantee_against, edited_report, element_spans, guarantee_drafts};

const PIECES: &[&str] =
    &["\"", "\"", ",", ",", ":", "{", "}", "[", "]", "\n", " ", "a", "1", "\\", "null", "\"x\"", "inn", "oops", "'"];

/// A small deterministic generator (xorshift64*), so that a soak can be run again.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cases: usize = args.first().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let chosen = &args[args.len().min(1)..];
    if let Some(unknown) = chosen.iter().find(|c| !LAYOUTS.iter().any(|(name, _)| name == c)) {
        eprintln!("no layout `{unknown}`; the layouts: {:?}", LAYOUTS.iter().map(|(n, _)| n).collect::<Vec<_>>());
        std::process::exit(2);
    }
    let drafts = guarantee_drafts();
    let (mut total, mut total_failed, mut broken) = (0, 0, 0);
    let started = std::time::Instant::now();
    for (index, &(name, layout)) in LAYOUTS.iter().enumerate() {
        if !chosen.is_empty() && !chosen.iter().any(|c| c == name) {
            continue;
        }
        let layout_started = std::time::Instant::now();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let texts: Vec<(&str, String, Vec<std::ops::Range<usize>>, little_passes::FileReport)> = drafts
            .iter()
            .map(|(draft_name, draft)| {
                let text = lay_out(draft, layout);
                let spans = element_spans(&text);
                let report = edited_report(&text);
                (*draft_name, text, spans, report)
            })
            .collect();
        let mut failed = 0;
        for _ in 0..cases {
            let (draft_name, text, spans, intact) = &texts[rng.below(texts.len())];
            let span = &spans[rng.below(spans.len())];
            let mut start = span.start + rng.below(span.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + rng.below(12)).min(span.end);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let inserted: String = (0..rng.below(6)).map(|_| PIECES[rng.below(PIECES.len())]).collect();
            let edit = Edit { removed: start..end, inserted };
            if little_frontend::json::parse(&edit.apply(text)).tree.is_none() {
                broken += 1;
            }
            if let Err(message) = check_guarantee_against(text, intact, &edit) {
                if failed < 3 {
                    eprintln!("--- {name}, {draft_name}: {}", message.lines().next().unwrap_or(""));
                    eprintln!("{edit:?}");
                }
                failed += 1;
            }
        }
        println!("{name}: {cases} cases, {failed} failed, {:.1} s", layout_started.elapsed().as_secs_f64());
        total += cases;
        total_failed += failed;
    }
    println!(
        "all: {total} cases ({broken} not JSON after the edit), {total_failed} failed, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
