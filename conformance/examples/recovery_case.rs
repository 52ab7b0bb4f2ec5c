//! Shows one case of the recovery soak: the edit, the repaired text around it, the diagnostics.
use little_conformance::layouts::{LAYOUTS, lay_out};
use little_conformance::recovery::{Edit, edited_report, guarantee_drafts};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (layout, draft, start, end) =
        (&args[1], &args[2], args[3].parse::<usize>().unwrap(), args[4].parse::<usize>().unwrap());
    let inserted = args.get(5).cloned().unwrap_or_default();
    let layout = LAYOUTS.iter().find(|(n, _)| n == layout).unwrap().1;
    let drafts = guarantee_drafts();
    let text = lay_out(&drafts.iter().find(|(n, _)| n == draft).unwrap().1, layout);
    let edit = Edit { removed: start..end, inserted };
    let edited = edit.apply(&text);
    println!("removed {:?}", &text[start..end]);
    let lo = start.saturating_sub(300);
    println!("{}", &edited[lo..(end + 200).min(edited.len())]);
    if let Some(r) = little_frontend::recover::recover(&edited) {
        eprintln!("damaged {:?}", r.damaged);
        println!("=== repaired, damaged {:?}", r.damaged);
        println!("{}", &r.repaired[lo..(end + 200).min(edited.len())]);
    }
    for d in edited_report(&edited).diagnostics {
        println!("{} {:?} {}", d.code.as_str(), d.span, d.message);
    }
}
