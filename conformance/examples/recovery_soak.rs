//! The soak of the editor's recovery: `N` random edits (default 1,000) inside one element
//! of each draft of `guarantee_drafts`, in each layout, held to `check_guarantee`; prints
//! the cases and the failures a layout, and the first failures. Run it with `--release`:
//! `cargo run --release -p little-conformance --example recovery_soak -- 100000`.

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
    let cases: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let drafts = guarantee_drafts();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut total, mut total_failed, mut broken) = (0, 0, 0);
    for &(name, layout) in LAYOUTS {
        let texts: Vec<(String, Vec<std::ops::Range<usize>>, little_passes::FileReport)> = drafts
            .iter()
            .map(|(_, draft)| {
                let text = lay_out(draft, layout);
                let spans = element_spans(&text);
                let report = edited_report(&text);
                (text, spans, report)
            })
            .collect();
        let mut failed = 0;
        for _ in 0..cases {
            let (text, spans, intact) = &texts[rng.below(texts.len())];
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
                    eprintln!("--- {name}: {}", message.lines().next().unwrap_or(""));
                    eprintln!("{edit:?}");
                }
                failed += 1;
            }
        }
        println!("{name}: {cases} cases, {failed} failed");
        total += cases;
        total_failed += failed;
    }
    println!("all layouts: {total} cases ({broken} not JSON after the edit), {total_failed} failed");
}
