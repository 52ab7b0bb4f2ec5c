//! A draft's outline on several threads: its elements parsed and read side by side.
//!
//! The whole parse ([`DraftOutline::parse`]) tokenizes every byte on one thread, and a
//! big draft is nearly all elements of `nodes` and `edges`. Here the text is parsed with
//! those elements skipped ([`json::parse_skeleton`]: each runs to the bracket that closes
//! its first, nothing in it checked), then the elements are split into runs of about equal
//! bytes and each run is parsed element by element ([`ElementParser::reparse`]) and read by
//! the outline's own visitor ([`DraftElements::visit`]) on one of `jobs` threads; the runs
//! are joined in order.
//!
//! Why it is the outline the whole parse gives: an element that parses on its own as one
//! value spanning exactly the bytes skipped is the value the whole parse reads there (a
//! value parsed from a position depends only on the text up to its end, and a container
//! ends at its bracket), so the skeleton left each element where the whole parse does, and
//! the rest of the text is parsed by the same parser. Each element's findings carry the
//! document's spans and its JSONPath; with the skeleton's, put in source order, they are
//! the whole parse's. Each element is read with its index in its array, and the runs'
//! reads joined in order are the reads of one pass. Whatever cannot be vouched for so (a
//! fault anywhere, an element that is not an array or an object, a document that is not a
//! draft) gives the fast path up, and the text is parsed whole: every fault is reported as
//! the whole parse reports it.

use std::ops::Range;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use little_diagnostics::Diagnostic;

use crate::draft::DraftElements;
use crate::json::{self, ElementParser, ElementSeen, NodeIdx, SkippedElement};
use crate::reparse::{DraftOutline, ELEMENT_ARRAYS};
use crate::{DocumentKind, document_kind};

/// How many runs of elements each thread takes on average: enough that a thread slowed by
/// others on the machine leaves its share to the rest, and that the runs read but not yet
/// joined (see [`Joined`]) are a small part of the draft.
const RUNS_A_THREAD: usize = 16;

/// What one run of elements gives: its elements read, each element's plain id (see
/// [`crate::json::JsonTree::elided_id`]) in order, and their findings.
#[derive(Default)]
struct RunRead {
    elements: DraftElements,
    ids: Vec<(u32, u32)>,
    diagnostics: Vec<Diagnostic>,
}

/// The runs read so far, joined in order as soon as each run's turn comes, so that the
/// elements are held about once, not once in their run and once joined.
struct Joined {
    /// The runs read whose turn has not come, by their index.
    waiting: Vec<Option<RunRead>>,
    /// How many runs are joined.
    count: usize,
    read: DraftElements,
    ids: Vec<(u32, u32)>,
    diagnostics: Vec<Diagnostic>,
    /// A run did not continue the runs before it.
    failed: bool,
}

impl Joined {
    /// Takes run `at` in, and joins every run whose turn has come.
    fn take(&mut self, at: usize, run: RunRead) {
        self.waiting[at] = Some(run);
        while let Some(run) = self.waiting.get_mut(self.count).and_then(Option::take) {
            self.count += 1;
            self.failed |= !self.read.append(run.elements);
            self.ids.extend(run.ids);
            self.diagnostics.extend(run.diagnostics);
        }
    }
}

impl DraftOutline {
    /// [`DraftOutline::parse`] on `jobs` threads when `jobs > 1` (see the module's
    /// comment); the same outline on any number.
    pub fn parse_on(text: Arc<str>, jobs: usize) -> DraftOutline {
        if jobs > 1
            && let Some(outline) = DraftOutline::parse_split(&text, jobs)
        {
            return outline;
        }
        DraftOutline::parse(text)
    }

    /// The outline of a draft with its elements parsed and read on `jobs` threads (this one
    /// among them); `None` when the fast path gives up (any fault, an element that is not
    /// an array or an object, a document that is not a draft), where
    /// [`DraftOutline::parse`] is the outline.
    pub fn parse_split(text: &Arc<str>, jobs: usize) -> Option<DraftOutline> {
        let skeleton = json::parse_skeleton(text, ELEMENT_ARRAYS)?;
        let mut tree = skeleton.tree;
        if !matches!(document_kind(&tree), Ok(DocumentKind::Draft)) {
            return None;
        }
        let elements = skeleton.elements;
        let read_from = arrays_read(&elements);
        let runs = runs_of(&elements, jobs);
        let joined = read_runs(text, &elements, &runs, read_from, jobs)?;
        if joined.ids.len() != elements.len() {
            return None;
        }
        for (element, &id) in elements.iter().zip(&joined.ids) {
            tree.set_elided_id(element.node, id);
        }
        let mut diagnostics = skeleton.diagnostics;
        diagnostics.extend(joined.diagnostics);
        json::in_source_order(&mut diagnostics);
        Some(DraftOutline {
            text: text.clone(),
            tree: Some(tree),
            diagnostics,
            elements: Some(Arc::new(joined.read)),
            damaged: Vec::new(),
        })
    }
}

/// For each of [`ELEMENT_ARRAYS`], the array whose elements are read: as the whole parse's
/// visitor does, the first array under that root key that has an element (the elements of
/// a later array under the same key are parsed, for their findings and ids, but not read).
fn arrays_read(elements: &[SkippedElement]) -> [Option<NodeIdx>; 2] {
    let mut read = [None; 2];
    for element in elements {
        if let Some(slot) = read.get_mut(element.array) {
            slot.get_or_insert(element.array_node);
        }
    }
    read
}

/// The elements split into runs of consecutive elements, about equal in bytes, a few for
/// each of `jobs` threads; none empty.
fn runs_of(elements: &[SkippedElement], jobs: usize) -> Vec<Range<usize>> {
    let count = (jobs.max(1) * RUNS_A_THREAD).min(elements.len()) as u64;
    let total: u64 = elements.iter().map(|e| u64::from(e.span.end - e.span.start)).sum();
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (at, element) in elements.iter().enumerate() {
        bytes += u64::from(element.span.end - element.span.start);
        // A run ends once the runs so far hold their share of all the bytes.
        if bytes * count >= total * (runs.len() as u64 + 1) {
            runs.push(start..at + 1);
            start = at + 1;
        }
    }
    if start < elements.len() {
        runs.push(start..elements.len());
    }
    runs
}

/// Each run read on one of `jobs` threads (this one among them), each thread taking the
/// next run not yet taken with an [`ElementParser`] of its own; the reads joined in run
/// order. `None` as soon as one element is not one value where it was skipped.
fn read_runs(
    text: &Arc<str>,
    elements: &[SkippedElement],
    runs: &[Range<usize>],
    read_from: [Option<NodeIdx>; 2],
    jobs: usize,
) -> Option<Joined> {
    // The arrays read, their room made once.
    let count = |array: NodeIdx| elements.iter().filter(|e| e.array_node == array).count();
    let [nodes, edges] = read_from.map(|array| array.map(|array| (array, count(array))));
    let joined = Mutex::new(Joined {
        waiting: runs.iter().map(|_| None).collect(),
        count: 0,
        read: DraftElements::reserved(nodes, edges),
        ids: Vec::with_capacity(elements.len()),
        diagnostics: Vec::new(),
        failed: false,
    });
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let work = || {
        let mut parser = ElementParser::new(text);
        while !failed.load(Ordering::Relaxed) {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(run) = runs.get(at) else { break };
            match read_run(&mut parser, &elements[run.clone()], read_from) {
                Some(read) => joined.lock().expect("the runs joined").take(at, read),
                None => failed.store(true, Ordering::Relaxed),
            }
        }
    };
    let threads = jobs.clamp(1, runs.len().max(1));
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        work();
        for helper in helpers {
            helper.join().expect("a run of elements panicked");
        }
    });
    let joined = joined.into_inner().expect("the runs joined");
    (!failed.into_inner() && !joined.failed && joined.count == runs.len()).then_some(joined)
}

/// One run of elements, each parsed on its own and, if its array is the one read (see
/// [`arrays_read`]), read. `None` when an element is not one value spanning its bytes.
fn read_run(
    parser: &mut ElementParser<'_>,
    elements: &[SkippedElement],
    read_from: [Option<NodeIdx>; 2],
) -> Option<RunRead> {
    let mut run = RunRead::default();
    run.ids.reserve_exact(elements.len());
    let mut path = String::new();
    for element in elements {
        let key = ELEMENT_ARRAYS[element.array];
        path.clear();
        path.push('$');
        json::path_push_key(&mut path, key);
        json::path_push_index(&mut path, element.index);
        // The element sits in the root object and its array.
        let (tree, diagnostics) = parser.reparse(element.span.clone(), 2, &path)?;
        run.ids.push(tree.plain_id(tree.root()));
        run.diagnostics.extend(diagnostics);
        if read_from[element.array] == Some(element.array_node) {
            let seen = ElementSeen {
                array: key,
                array_node: element.array_node,
                index: element.index,
                tree,
                node: tree.root(),
            };
            run.elements.visit(seen);
        }
    }
    Some(run)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::draft::lower_draft_from;
    use crate::json::{JsonTree, JsonValue};

    /// Every node of the arena, in index order: its span and value, an object's keys (by
    /// their text: the key table of a whole parse lists the keys of elided elements too,
    /// which nothing reads) with their spans and values' nodes, an array's items, and an
    /// elided element's id.
    fn describe(tree: &JsonTree) -> String {
        let mut out = format!("outline {}, {} nodes\n", tree.is_outline(), tree.len());
        for i in 0..tree.len() as NodeIdx {
            let value = match tree.value(i) {
                JsonValue::Object(members) => {
                    let members: Vec<_> = members.iter().map(|m| (m.key, m.key_span, m.value)).collect();
                    format!("object {members:?}")
                }
                JsonValue::Elided => format!("element, id {:?}", tree.elided_id(i)),
                other => format!("{other:?}"),
            };
            let _ = writeln!(out, "{i} {:?} {value}", tree.span(i));
        }
        out
    }

    /// Whether `outline` is `serial`: the same tree, findings and elements read, and the
    /// same draft lowered from them.
    fn assert_same(serial: &DraftOutline, outline: &DraftOutline, what: &str) {
        assert_eq!(outline.text, serial.text, "{what}: text");
        assert_eq!(outline.tree.as_ref().map(describe), serial.tree.as_ref().map(describe), "{what}: tree");
        assert_eq!(outline.diagnostics, serial.diagnostics, "{what}: diagnostics");
        assert_eq!(outline.damaged, serial.damaged, "{what}: damage");
        assert_eq!(
            outline.elements.as_ref().map(|e| e.described()),
            serial.elements.as_ref().map(|e| e.described()),
            "{what}: elements read"
        );
        if let (Some(tree), Some(elements)) = (&serial.tree, &serial.elements) {
            let lowered = |outline: &DraftOutline| {
                let tree = outline.tree.as_ref().expect("a tree");
                let elements = outline.elements.as_deref().expect("elements").clone();
                lower_draft_from(tree, elements)
            };
            let expected = lower_draft_from(tree, (**elements).clone());
            assert_eq!(lowered(outline), expected, "{what}: lowered draft and its findings");
        }
    }

    /// The outline of `text` on 1, 2, 3 and 8 threads is the whole parse's; `fast` says
    /// whether the fast path is to take it or to give it up.
    fn check(text: &str, fast: bool) {
        let text: Arc<str> = Arc::from(text);
        let serial = DraftOutline::parse(text.clone());
        for jobs in [1, 2, 3, 8] {
            let what = format!("{jobs} threads on {text:?}");
            let split = DraftOutline::parse_split(&text, jobs);
            assert_eq!(split.is_some(), fast, "{what}: the fast path taken");
            if let Some(split) = &split {
                assert_same(&serial, split, &what);
            }
            assert_same(&serial, &DraftOutline::parse_on(text.clone(), jobs), &what);
        }
    }

    /// A draft of `count` nodes (and as many edges) of every kind the lowering reads, with
    /// escapes, nested configs, duplicate keys, unsafe integers and numbers out of range.
    fn generated(count: usize) -> String {
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        for i in 0..count {
            nodes.push(match i % 7 {
                0 => format!(r#"{{"id":"n{i}","family":"agent.llm","config":{{"prompt":"say \"hi\" {{[","k":[1,[2,{{"b":"]}}"}}]]}}}}"#),
                1 => format!(r#"{{"id":"n\u0031{i}","family":"action.http","title":"\\"}}"#),
                2 => format!(r#"{{"id":"n{i}","id":"dup{i}","config":{{"n":12345678901234567890,"x":1e400}}}}"#),
                3 => format!(r#"{{ "id" : "n{i}" ,	"family" : "notify.email" ,"position":{{"x":1.5,"y":-2}} }}"#),
                4 => format!(r#"{{"\u0069d":"n{i}","flags":{{"a":true,"a":false}},"suppress":["x"]}}"#),
                5 => format!(r#"{{"id":"é{i}","title":"ü ✓","config":{{}},"unknown":[[],{{}}]}}"#),
                _ => r#"{"family":"agent.llm","config":{"deep":{"a":{"b":[{"c":"\\\\"}]}}}}"#.to_owned(),
            });
            edges.push(match i % 3 {
                0 => format!(r#"{{"id":"e{i}","from":{{"node":"n{i}","port":"out"}},"to":{{"node":"n{}","port":"in"}}}}"#, i + 1),
                1 => format!(r#"{{"id":"e{i}","kind":"retry","retry":{{"maxAttempts":3,"backoffMs":99999999999999999999}},"from":{{"node":"n{i}"}},"to":{{"node":"n0"}}}}"#),
                _ => format!(r#"{{"id":"e\"{i}","kind":"branch","branch":{{"label":"yes"}},"from":{{"node":"x"}},"to":{{"node":"y","node":"z"}}}}"#),
            });
        }
        format!(
            "{{\"format\":\"workflow-draft/v1\",\"tenantId\":\"t\",\"workflowId\":\"w\",\"draftId\":\"d\",\"revision\":1,\
             \"catalogVersion\":\"c\",\"nodes\":[\n{}\n],\r\n\"edges\":[{}],\"title\":\"after\"}}",
            nodes.join(",\n  "),
            edges.join(",")
        )
    }

    #[test]
    fn the_bundled_examples_are_outlined_as_by_the_whole_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut drafts = 0;
        for entry in std::fs::read_dir(&dir).expect("the examples") {
            let path = entry.expect("an entry").path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            let draft = matches!(json::parse(&text).tree.as_ref().map(document_kind), Some(Ok(DocumentKind::Draft)));
            drafts += usize::from(draft);
            check(&text, draft);
        }
        assert!(drafts >= 5, "only {drafts} bundled drafts");
    }

    #[test]
    fn generated_drafts_are_outlined_as_by_the_whole_parse() {
        for count in [1, 2, 7, 40, 301] {
            check(&generated(count), true);
        }
        let with_bom = format!("\u{FEFF}{}", generated(9));
        check(&with_bom, true);
        let spaced = generated(9).replace(':', " :\t").replace(',', "\r\n ,  ");
        check(&spaced, true);
    }

    #[test]
    fn drafts_of_every_shape_are_outlined_as_by_the_whole_parse() {
        let head = r#""format":"workflow-draft/v1","workflowId":"w""#;
        let drafts = [
            format!(r#"{{{head},"nodes":[],"edges":[]}}"#),
            format!(r#"{{{head}}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a"}}],"nodes":[{{"id":"b"}},{{"id":"c","id":"d"}}],"edges":[]}}"#),
            format!(r#"{{{head},"nodes":[],"nodes":[{{"id":"b"}}],"edges":[{{"id":"e"}}],"edges":[{{"id":"f"}}]}}"#),
            format!(r#"{{{head},"nodes":5,"nodes":[{{"id":"b"}}]}}"#),
            format!(r#"{{{head},"nodes":[[1,2],[],{{"id":"a"}},[{{"id":"b"}}]],"edges":[[]]}}"#),
            format!(
                r#"{{{head},"revision":12345678901234567890,"nodes":[{{"id":"a"}}],"workflowId":"x","big":1e400}}"#
            ),
            format!(r#"{{{head},"nodes":[{{"id":"a","t":"\\","u":"\\\"]}}","\u005d":"\ud83d\ude00"}}]}}"#),
            format!(r#"{{{head},"x":{{"nodes":[{{"id":"a"}}]}},"nodes":[ {{}} , {{"id":""}} ]}}"#),
            format!("\u{FEFF} \n{{\t{head} ,\r\n\"nodes\" :\n[\n{{ \"id\" : \"a\" }}\n,\t{{\"id\":\"b\"}} ] }} \n"),
            format!(r#"{{{head},"nodes":[{{"id":"a","config":{{"k":1,"k":2,"k":3,"m":{{"z":0,"z":1}}}}}}]}}"#),
        ];
        for draft in &drafts {
            check(draft, true);
        }
    }

    #[test]
    fn what_the_fast_path_cannot_vouch_for_is_parsed_whole() {
        let head = r#""format":"workflow-draft/v1""#;
        let faulty = [
            // Elements that are not arrays or objects.
            format!(r#"{{{head},"nodes":[{{"id":"a"}},7]}}"#),
            format!(r#"{{{head},"edges":["e",null]}}"#),
            // A fault inside an element, found by its own parse.
            format!(r#"{{{head},"nodes":[{{"id":"a","x":tru}},{{"id":"b"}}]}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a",}}]}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a"]]}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a"}}}}],"edges":[]}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a\ud800"}}]}}"#),
            format!("{{{head},\"nodes\":[{{\"id\":\"a\u{1}\"}}]}}"),
            format!(r#"{{{head},"nodes":[{{"id":"a" /* c */}}]}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a","n":01}}]}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a","c":{}1{}}}]}}"#, "[".repeat(520), "]".repeat(520)),
            // An unterminated string inside an element.
            format!(r#"{{{head},"nodes":[{{"id":"a}},{{"id":"b"}}],"edges":[]}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a"#),
            // Faults after the arrays.
            format!(r#"{{{head},"nodes":[{{"id":"a"}}],"edges":[]}} x"#),
            format!(r#"{{{head},"nodes":[{{"id":"a"}}],"title":}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a"}}],}}"#),
            format!(r#"{{{head},"nodes":[{{"id":"a"}}]"#),
            // Documents that are not drafts.
            r#"{"format":"workflow-catalog/v1","nodes":[{"id":"a"}]}"#.to_owned(),
            r#"[{"nodes":[{"id":"a"}]}]"#.to_owned(),
            String::new(),
        ];
        for text in &faulty {
            check(text, false);
        }
    }

    /// A wrong skip only ever gives the fast path up: every prefix of a draft, and the draft
    /// with any one byte made a quote, a backslash or a bracket, is outlined as by the
    /// whole parse, and never panics.
    #[test]
    fn a_broken_draft_is_outlined_as_by_the_whole_parse_wherever_it_breaks() {
        let draft = generated(7);
        let compare = |text: &str| {
            let text: Arc<str> = Arc::from(text);
            let serial = DraftOutline::parse(text.clone());
            assert_same(&serial, &DraftOutline::parse_on(text.clone(), 2), &format!("{text:?}"));
        };
        for end in (0..draft.len()).filter(|&end| draft.is_char_boundary(end)) {
            compare(&draft[..end]);
        }
        for at in (0..draft.len()).filter(|&at| draft.is_char_boundary(at) && draft.is_char_boundary(at + 1)) {
            for piece in ["\"", "\\", "{", "}", "[", "]"] {
                compare(&format!("{}{piece}{}", &draft[..at], &draft[at + 1..]));
            }
        }
    }
}
