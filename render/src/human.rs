//! The human form: one ariadne report per diagnostic, and `little check`'s report of
//! many files (each file's reports, what it issued, a summary line).
//!
//! A report is drawn from the file itself when every line it touches is short, and from a
//! small excerpt otherwise: each touched line is cut down to windows of about
//! `max_line_chars` characters around its labels, joined by `…`, so a minified draft of
//! several megabytes on one line never prints more than a few hundred bytes of it. The
//! excerpt keeps the file's line numbers (untouched lines become empty), and the real
//! line and column are printed in a note, since ariadne's own column would count within
//! the window.
//!
//! ariadne 0.6 writes its header as `[code] Error: message`; the header line is replaced
//! by `error[code]: message`, the form the plain fallback for a diagnostic without a span
//! also uses.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::ops::Range;

use ariadne::{CharSet, Color, Config, Fmt, IndexType, Label, Report, ReportKind, Source};

use little_diagnostics::{Diagnostic, LineIndex, Related, Severity, Witness};

use crate::CheckedFile;

/// How [`diagnostics`] draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HumanOptions {
    /// ANSI colours and Unicode box drawing; without colour the output is plain ASCII
    /// (apart from the source text itself).
    pub color: bool,
    /// A touched line longer than this many characters is shown as windows around its
    /// labels instead of in full.
    pub max_line_chars: usize,
}

impl Default for HumanOptions {
    fn default() -> Self {
        HumanOptions { color: false, max_line_chars: 160 }
    }
}

/// Windows narrower than this would hide the label's surroundings entirely.
const MIN_LINE_CHARS: usize = 16;
/// Marks text left out of a long line.
const ELLIPSIS: &str = "…";
/// The most text one report hands ariadne, in bytes, before it draws from the whole file.
const WINDOW_LIMIT: usize = 64 << 10;

/// Renders every diagnostic of one file, in the given order, as ariadne reports.
pub fn diagnostics(file: &CheckedFile<'_>, options: &HumanOptions) -> String {
    let mut renderer = Renderer::new(file.path, file.text, options);
    let mut out = String::new();
    for diagnostic in file.diagnostics {
        renderer.render(diagnostic, &mut out);
    }
    out
}

/// [`diagnostics`] without colour and with the default width, for messages that quote
/// diagnostics (a reader document that cannot be used).
pub fn plain(path: &str, text: &str, diagnostics: &[Diagnostic]) -> String {
    self::diagnostics(&CheckedFile::of_diagnostics(path, text, diagnostics), &HumanOptions::default())
}

/// `little check`'s report: each file's diagnostics, then what it issued (or that a
/// diagnostic blocks), and a last line counting files, errors and warnings.
pub fn report(files: &[CheckedFile<'_>], options: &HumanOptions) -> String {
    let mut out = String::new();
    for file in files {
        out.push_str(&diagnostics(file, options));
        match file.candidate {
            Some(little_passes::Issued::Draft(candidate)) => {
                let _ = writeln!(
                    out,
                    "{}: candidate {} issued (topology {})",
                    file.path,
                    candidate.id,
                    little_hashing::short_id(&candidate.topology_hash)
                );
            }
            Some(little_passes::Issued::Lwir(version)) => {
                let _ = writeln!(out, "{}: workflow version {} ({})", file.path, version.id, version.hash);
            }
            None if file.document.is_some() && file.blocking() => {
                let _ = writeln!(out, "{}: no candidate: a diagnostic blocks", file.path);
            }
            None => {}
        }
    }
    let count =
        |severity: Severity| files.iter().flat_map(|f| f.diagnostics).filter(|d| d.severity() == severity).count();
    let _ = writeln!(
        out,
        "{}: {}, {}",
        plural(files.len(), "file"),
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning")
    );
    out
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// One label of a report, in byte offsets of the text it is drawn from.
struct Mark {
    range: Range<usize>,
    message: String,
    primary: bool,
}

struct Renderer<'a> {
    path: &'a str,
    source: &'a str,
    color: bool,
    max_chars: usize,
    index: LineIndex,
    /// The whole file as ariadne sees it, built on first use.
    full: Option<Source<String>>,
    /// The last column counted: line start, offset and column.
    column_memo: Cell<(usize, usize, u32)>,
}

impl<'a> Renderer<'a> {
    fn new(path: &'a str, source: &'a str, options: &HumanOptions) -> Self {
        Renderer {
            path,
            source,
            color: options.color,
            max_chars: options.max_line_chars.max(MIN_LINE_CHARS),
            index: LineIndex::new(source),
            full: None,
            column_memo: Cell::new((0, 0, 1)),
        }
    }

    /// The labels of a report: the primary span, then every related span.
    fn marks(&self, diagnostic: &Diagnostic, span: &Range<u32>) -> Vec<Mark> {
        let mut marks = vec![Mark { range: self.clamp(span), message: primary_message(diagnostic), primary: true }];
        marks.extend(diagnostic.related.iter().filter_map(|related| {
            Some(Mark { range: self.clamp(related.span.as_ref()?), message: related.message.clone(), primary: false })
        }));
        marks
    }

    /// The lines on which the labels start and end.
    fn touched_lines(&self, marks: &[Mark]) -> BTreeSet<usize> {
        marks.iter().flat_map(|mark| <[usize; 2]>::from(self.mark_lines(&mark.range))).collect()
    }

    fn render(&mut self, diagnostic: &Diagnostic, out: &mut String) {
        let Some(span) = &diagnostic.span else {
            self.render_plain(diagnostic, out);
            return;
        };
        let marks = self.marks(diagnostic, span);
        let touched = self.touched_lines(&marks);
        let primary_start = marks[0].range.start;
        let primary_line = self.line_of(primary_start);
        let primary_windowed = self.is_long(primary_line);

        let mut notes = Vec::new();
        notes.extend(diagnostic.witness.as_ref().and_then(witness_note));
        notes.extend(diagnostic.path.as_ref().map(|path| format!("at {path}")));
        let (line, column) = self.line_col(primary_start);
        if primary_windowed {
            notes.push(format!("at line {line}, column {column}"));
        }
        notes.extend(diagnostic.related.iter().filter(|r| r.span.is_none()).map(|r| related_note(r, None)));

        let body = if touched.iter().any(|&l| self.is_long(l)) {
            let excerpt = self.excerpt(&marks, &touched);
            let mapped: Vec<Mark> = marks
                .iter()
                .map(|mark| Mark {
                    range: excerpt.map(self, &mark.range),
                    message: mark.message.clone(),
                    primary: mark.primary,
                })
                .collect();
            // ariadne counts the column within the window; the file's column is put back.
            let at = excerpt.map_start(self, primary_start);
            let line_start = excerpt.lines[&primary_line].start;
            let shown = excerpt.text[line_start..at].chars().count() + 1;
            let body = self.draw(&Source::from(excerpt.text), diagnostic, mapped, &notes);
            fix_location(&body, &format!("{}:{line}:{shown}", self.path), &format!("{}:{line}:{column}", self.path))
        } else {
            self.draw_short_lines(diagnostic, marks, &touched, &notes)
        };

        out.push_str(&self.header(diagnostic));
        out.push('\n');
        out.push_str(&body);
    }

    /// A diagnostic without a span: the header and its notes, without source.
    fn render_plain(&self, diagnostic: &Diagnostic, out: &mut String) {
        let mut notes = Vec::new();
        notes.extend(diagnostic.witness.as_ref().and_then(witness_note));
        notes.extend(diagnostic.path.as_ref().map(|path| format!("at {path}")));
        for related in &diagnostic.related {
            let location = related.span.as_ref().map(|span| self.line_col(self.clamp(span).start));
            notes.push(related_note(related, location));
        }

        out.push_str(&self.header(diagnostic));
        out.push('\n');
        if !self.path.is_empty() {
            let _ = writeln!(out, "  {} {}", "-->".fg(self.paint(margin_color())), self.path);
        }
        let equals = "=".fg(self.paint(margin_color()));
        for note in &notes {
            let _ = writeln!(out, "  {equals} {}", indent(note, 4));
        }
        if let Some(help) = &diagnostic.help {
            let _ = writeln!(out, "  {equals} {}: {}", "help".fg(self.paint(note_color())), indent(help, 10));
        }
    }

    /// `error[graph.cycle]: message`.
    fn header(&self, diagnostic: &Diagnostic) -> String {
        let (_, name, color) = kind(diagnostic.severity());
        let id = format!("{name}[{}]:", diagnostic.code.as_str());
        format!("{} {}", id.fg(self.paint(color)), diagnostic.message)
    }

    /// The ariadne report without its header line.
    fn draw(&self, source: &Source<String>, diagnostic: &Diagnostic, mut marks: Vec<Mark>, notes: &[String]) -> String {
        let (kind, _, kind_color) = kind(diagnostic.severity());
        let config = Config::default()
            .with_color(self.color)
            .with_char_set(if self.color { CharSet::Unicode } else { CharSet::Ascii })
            .with_index_type(IndexType::Byte);
        let id = self.path;
        // The config must come before the labels: ariadne filters label colours by it.
        let mut builder =
            Report::build(kind, (id, marks[0].range.clone())).with_config(config).with_code(diagnostic.code.as_str());
        // ariadne keeps labels in one source group only while the lines they end on do not
        // decrease; a report split into groups would repeat the file header.
        marks.sort_by_key(|mark| {
            let last = if mark.range.is_empty() { mark.range.start } else { mark.range.end - 1 };
            (last, mark.range.start, !mark.primary)
        });
        for mark in marks {
            let color = if mark.primary { kind_color } else { Color::Blue };
            builder.add_label(Label::new((id, mark.range)).with_message(mark.message).with_color(color));
        }
        if let Some(help) = &diagnostic.help {
            builder.add_help(help);
        }
        for note in notes {
            builder.add_note(note);
        }
        let mut buffer = Vec::new();
        builder.finish().write((id, source), &mut buffer).expect("writing a report to memory does not fail");
        let rendered = String::from_utf8_lossy(&buffer);
        // The header carries no message, so it is exactly the first line.
        let body = rendered.find('\n').map_or("", |end| &rendered[end + 1..]);
        body.to_owned()
    }

    /// A report whose lines are all short. ariadne indexes every line of the text it is
    /// given: handed a 35 MB draft for one report, it built a 75 MB line table, and the
    /// copy and the table were a third of `little check`'s peak memory. So it is given only
    /// the lines from the first label to the last, and the line numbers in its margin are
    /// put back (ariadne shifts only the header's). Labels far apart, and coloured output
    /// (whose margin is wrapped in escapes), draw from the whole file, built once.
    fn draw_short_lines(
        &mut self,
        diagnostic: &Diagnostic,
        marks: Vec<Mark>,
        touched: &BTreeSet<usize>,
        notes: &[String],
    ) -> String {
        let (first, last) = (*touched.first().expect("a label"), *touched.last().expect("a label"));
        let window = self.index.line_start(first)..self.next_line_start(last).unwrap_or(self.source.len());
        if self.color || window.len() > WINDOW_LIMIT {
            return self.draw_from_whole_file(diagnostic, marks, notes);
        }
        let source = Source::from(self.text_of(window.clone())).with_display_line_offset(first);
        let marks = marks
            .into_iter()
            .map(|mark| Mark { range: mark.range.start - window.start..mark.range.end - window.start, ..mark })
            .collect();
        let body = self.draw(&source, diagnostic, marks, notes);
        renumber_margin(&body, first, last)
    }

    fn draw_from_whole_file(&mut self, diagnostic: &Diagnostic, marks: Vec<Mark>, notes: &[String]) -> String {
        let source = match self.full.take() {
            Some(source) => source,
            None => Source::from(self.text_of(0..self.source.len())),
        };
        let body = self.draw(&source, diagnostic, marks, notes);
        self.full = Some(source);
        body
    }

    /// Whole lines of the file (`lines` starts at a line start and ends at one or at the
    /// end), with the same byte offsets and the same lines as [`LineIndex`].
    fn text_of(&self, lines: Range<usize>) -> String {
        let mut text = String::with_capacity(lines.len() + 1);
        push_sanitized(&mut text, &self.source[lines.clone()]);
        if lines.end == self.source.len() && text.ends_with('\n') {
            // ariadne drops an empty last line; an offset at the very end lies on it.
            text.push(' ');
        }
        text
    }

    /// The excerpt of one report: every touched line (windowed when long), each ending with
    /// a line break, after as many empty lines as the file has before it.
    fn excerpt(&self, marks: &[Mark], touched: &BTreeSet<usize>) -> Excerpt {
        let mut text = String::new();
        let mut lines = std::collections::HashMap::new();
        let mut next = 0;
        for &line in touched {
            text.extend(std::iter::repeat_n('\n', line - next));
            let content = self.index.line_range(self.source, line);
            let (windows, shown_end) = if self.is_long(line) {
                (self.windows(line, &content, marks), content.end)
            } else {
                // A short line is copied whole, a `\r` before its break included (as
                // the whole-file rendering shows it).
                let end = self.raw_end(line);
                (std::iter::once(content.start..end).collect(), end)
            };
            let start = text.len();
            let mut segments = Vec::with_capacity(windows.len());
            let mut previous = content.start;
            for window in windows {
                if window.start > previous {
                    text.push_str(ELLIPSIS);
                }
                segments.push(Segment { at: text.len() - start, original: window.clone() });
                push_sanitized(&mut text, &self.source[window.clone()]);
                previous = window.end;
            }
            let tail = previous < shown_end;
            if tail {
                text.push_str(ELLIPSIS);
            }
            lines.insert(line, ExcerptLine { start, len: text.len() - start, segments, tail, shown_end });
            text.push('\n');
            next = line + 1;
        }
        Excerpt { text, lines }
    }

    /// The parts of long line `line` to show: a window around every label end on it.
    fn windows(&self, line: usize, content: &Range<usize>, marks: &[Mark]) -> Vec<Range<usize>> {
        let half = self.max_chars / 2;
        let mut interest = Vec::new();
        for mark in marks {
            let (first, last) = self.mark_lines(&mark.range);
            let start = mark.range.start.min(content.end);
            let end = mark.range.end.min(content.end).max(content.start);
            match (first == line, last == line) {
                (true, true) if self.source[start..end].chars().nth(half).is_none() => interest.push(start..end),
                (true, true) => {
                    interest.push(start..start);
                    interest.push(end..end);
                }
                (true, false) => interest.push(start..start),
                (false, true) => interest.push(end..end),
                (false, false) => {}
            }
        }
        let mut windows: Vec<Range<usize>> = interest.iter().map(|range| self.window(range, content)).collect();
        windows.sort_by_key(|window| (window.start, window.end));
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(windows.len());
        for window in windows {
            match merged.last_mut() {
                Some(last) if window.start <= last.end => last.end = last.end.max(window.end),
                _ => merged.push(window),
            }
        }
        merged
    }

    /// About `max_chars` characters around `range`, within `content`, at char boundaries.
    fn window(&self, range: &Range<usize>, content: &Range<usize>) -> Range<usize> {
        let text = self.source;
        let budget = self.max_chars.saturating_sub(text[range.clone()].chars().count());
        let left = budget / 2;
        let (start, went_left) = walk_back(text, range.start, left, content.start);
        let right = budget - went_left;
        let (end, went_right) = walk_forward(text, range.end, right, content.end);
        let (start, _) = walk_back(text, start, right - went_right, content.start);
        start..end
    }

    /// Clamps a span to the text and widens it to char boundaries.
    fn clamp(&self, span: &Range<u32>) -> Range<usize> {
        let text = self.source;
        let mut start = (span.start as usize).min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (span.end as usize).min(text.len()).max(start);
        while !text.is_char_boundary(end) {
            end += 1;
        }
        start..end
    }

    fn line_of(&self, offset: usize) -> usize {
        self.index.line_of(offset)
    }

    /// The lines of a range's first and last byte.
    fn mark_lines(&self, range: &Range<usize>) -> (usize, usize) {
        let first = self.line_of(range.start);
        let last = if range.end > range.start { self.line_of(range.end - 1) } else { first };
        (first, last)
    }

    /// The offset of the `\n` ending `line`, or the end of the text.
    fn raw_end(&self, line: usize) -> usize {
        self.next_line_start(line).map_or(self.source.len(), |next| next - 1)
    }

    /// Where the line after `line` starts (past `line`'s `\n`); `None` for the last line.
    fn next_line_start(&self, line: usize) -> Option<usize> {
        (line + 1 < self.index.line_count()).then(|| self.index.line_start(line + 1))
    }

    fn is_long(&self, line: usize) -> bool {
        let content = self.index.line_range(self.source, line);
        content.len() > self.max_chars && self.source[content].chars().nth(self.max_chars).is_some()
    }

    /// 1-based line and character column of a char-boundary offset, as [`LineIndex::line_col`]
    /// counts them. Diagnostics mostly come sorted, so counting resumes where the last count
    /// on the same line stopped: a thousand reports on one 5 MB line scan it about once.
    fn line_col(&self, offset: usize) -> (u32, u32) {
        let line = self.line_of(offset);
        let line_start = self.index.line_start(line);
        let (memo_start, memo_offset, memo_column) = self.column_memo.get();
        let (from, column) = if memo_start == line_start && memo_offset <= offset {
            (memo_offset, memo_column)
        } else {
            (line_start, 1)
        };
        let column =
            column + self.source.as_bytes()[from..offset].iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u32;
        self.column_memo.set((line_start, offset, column));
        (line as u32 + 1, column)
    }

    fn paint(&self, color: Color) -> Option<Color> {
        Some(color).filter(|_| self.color)
    }
}

/// A report's source text when its lines are too long to show whole.
struct Excerpt {
    text: String,
    lines: std::collections::HashMap<usize, ExcerptLine>,
}

struct ExcerptLine {
    /// Byte offset of the line in the excerpt.
    start: usize,
    /// Byte length of the line, without its line break.
    len: usize,
    segments: Vec<Segment>,
    /// Whether the line ends with a `…` standing for the rest of the file line, up to
    /// `shown_end`.
    tail: bool,
    shown_end: usize,
}

/// A part of a file line copied into the excerpt.
struct Segment {
    original: Range<usize>,
    /// Byte offset of the copy within its excerpt line.
    at: usize,
}

impl Excerpt {
    /// Maps a clamped file range into the excerpt.
    fn map(&self, renderer: &Renderer, range: &Range<usize>) -> Range<usize> {
        let start = self.map_start(renderer, range.start);
        if range.end == range.start {
            return start..start;
        }
        let line = renderer.line_of(range.end - 1);
        let end = if range.end > renderer.raw_end(line) {
            // The range takes in the line break: so does its copy.
            let excerpt_line = &self.lines[&line];
            excerpt_line.start + excerpt_line.len + 1
        } else {
            self.map_point(line, range.end)
        };
        start..end.max(start)
    }

    fn map_start(&self, renderer: &Renderer, offset: usize) -> usize {
        self.map_point(renderer.line_of(offset), offset)
    }

    /// Maps an offset on `line` (before its `\n`). Offsets left out of the excerpt map to
    /// the `…` that stands for them.
    fn map_point(&self, line: usize, offset: usize) -> usize {
        let excerpt_line = &self.lines[&line];
        for segment in &excerpt_line.segments {
            if offset < segment.original.start {
                return excerpt_line.start + segment.at - ELLIPSIS.len();
            }
            if offset <= segment.original.end {
                return excerpt_line.start + segment.at + (offset - segment.original.start);
            }
        }
        let end = excerpt_line.start + excerpt_line.len;
        if excerpt_line.tail && offset <= excerpt_line.shown_end { end - ELLIPSIS.len() } else { end }
    }
}

/// Walks back at most `chars` characters from `from`, not past `floor`.
fn walk_back(text: &str, from: usize, chars: usize, floor: usize) -> (usize, usize) {
    let mut at = from;
    let mut walked = 0;
    for c in text[floor..from].chars().rev().take(chars) {
        at -= c.len_utf8();
        walked += 1;
    }
    (at, walked)
}

/// Walks forward at most `chars` characters from `from`, not past `limit`.
fn walk_forward(text: &str, from: usize, chars: usize, limit: usize) -> (usize, usize) {
    let mut at = from;
    let mut walked = 0;
    for c in text[from..limit].chars().take(chars) {
        at += c.len_utf8();
        walked += 1;
    }
    (at, walked)
}

/// Copies `text`, replacing every character that ariadne would take for a line break (or
/// that would steer the terminal) by one of the same UTF-8 length, so offsets carry over
/// and lines break only at `\n`.
fn push_sanitized(out: &mut String, text: &str) {
    // Most text needs nothing replaced: copy it in runs, up to the next byte that may start
    // a character to replace (a control, or the lead byte of U+0080–U+009F or U+2028–U+2069).
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let clean = bytes[start..]
            .iter()
            .position(|&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7F || b == 0xC2 || b == 0xE2)
            .map_or(bytes.len(), |i| start + i);
        out.push_str(&text[start..clean]);
        if clean == bytes.len() {
            break;
        }
        let c = text[clean..].chars().next().expect("a character starts at a lead byte");
        out.push(sanitized(c));
        start = clean + c.len_utf8();
    }
}

/// What one character is shown as: controls and characters that move or reorder the text
/// are replaced by one of the same UTF-8 length, so byte offsets are kept.
fn sanitized(c: char) -> char {
    let replacement = match c {
        '\n' | '\t' => c,
        '\r' | '\u{0B}' | '\u{0C}' => ' ',
        c if c.is_ascii_control() => '?',
        '\u{80}'..='\u{9F}' => '\u{A0}',
        '\u{2028}' | '\u{2029}' => '\u{2002}',
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => '\u{FFFD}',
        c => c,
    };
    debug_assert_eq!(c.len_utf8(), replacement.len_utf8());
    replacement
}

/// Puts the file's line numbers into the margin of a report drawn from the lines
/// `first..=last` only (uncoloured, ASCII). Every line of ariadne's body starts with a
/// margin as wide as the largest line number plus two: spaces (the header, unnumbered
/// rows), a right-aligned number between spaces, or the closing rule of `-`.
fn renumber_margin(body: &str, first: usize, last: usize) -> String {
    let digits = |n: usize| n.to_string().len();
    let (drawn, real) = (digits(last - first + 1) + 2, digits(last + 1) + 2);
    if first == 0 {
        return body.to_owned();
    }
    let mut out = String::with_capacity(body.len() + body.len() / 8);
    for line in body.split_inclusive('\n') {
        let split = line.char_indices().nth(drawn).map_or(line.len(), |(i, _)| i);
        let (margin, rest) = line.split_at(split);
        let trimmed = margin.trim();
        if trimmed.is_empty() {
            out.extend(std::iter::repeat_n(' ', real));
        } else if trimmed.bytes().all(|b| b == b'-') && margin.len() == drawn {
            out.extend(std::iter::repeat_n('-', real));
        } else if let Ok(number) = trimmed.parse::<usize>() {
            let _ = write!(out, " {:>width$} ", number + first, width = real - 2);
        } else {
            out.push_str(margin);
        }
        out.push_str(rest);
    }
    out
}

/// Replaces ariadne's `path:line:column` in the first line of `body`.
fn fix_location(body: &str, shown: &str, real: &str) -> String {
    let first_end = body.find('\n').unwrap_or(body.len());
    let (first, rest) = body.split_at(first_end);
    format!("{}{rest}", first.replacen(shown, real, 1))
}

/// What the primary label says: the edge, node or LWIR step concerned, else the code's summary.
fn primary_message(diagnostic: &Diagnostic) -> String {
    if let Some(edge) = &diagnostic.edge_id {
        format!("edge `{edge}`")
    } else if let Some(node) = &diagnostic.node_id {
        // An LWIR's nodes are its steps (docs/reference/formats.md#lwir), and its authors call them so.
        let noun = if diagnostic.path.as_deref().is_some_and(|p| p.starts_with("$.steps[")) { "step" } else { "node" };
        format!("{noun} `{node}`")
    } else {
        diagnostic.code.summary().to_owned()
    }
}

/// `cycle: a -> b -> c -> a (edges e4, e9, e2)`.
fn witness_note(witness: &Witness) -> Option<String> {
    let first = witness.nodes.first()?;
    let mut note = String::from("cycle: ");
    for node in &witness.nodes {
        note.push_str(node);
        note.push_str(" -> ");
    }
    note.push_str(first);
    if !witness.edges.is_empty() {
        let _ = write!(note, " (edges {})", witness.edges.join(", "));
    }
    Some(note)
}

/// A related location shown as text: `first occurrence at $.a (line 3, column 5)`.
fn related_note(related: &Related, location: Option<(u32, u32)>) -> String {
    let mut note = related.message.clone();
    if !related.path.is_empty() {
        let _ = write!(note, " at {}", related.path);
    }
    if let Some((line, column)) = location {
        let _ = write!(note, " (line {line}, column {column})");
    }
    note
}

/// Indents every line after the first by `width` spaces.
fn indent(text: &str, width: usize) -> String {
    text.replace('\n', &format!("\n{:width$}", ""))
}

fn kind(severity: Severity) -> (ReportKind<'static>, &'static str, Color) {
    match severity {
        Severity::Error => (ReportKind::Error, "error", Color::Red),
        Severity::Warning => (ReportKind::Warning, "warning", Color::Yellow),
        Severity::Info => (ReportKind::Advice, "info", Color::Fixed(147)),
    }
}

/// ariadne's colours for its margin and notes.
fn margin_color() -> Color {
    Color::Fixed(246)
}

fn note_color() -> Color {
    Color::Fixed(115)
}

#[cfg(test)]
mod tests {
    use super::*;
    use little_diagnostics::{Code, Related};

    fn plain(max_line_chars: usize) -> HumanOptions {
        HumanOptions { color: false, max_line_chars }
    }

    /// With lines short enough, the excerpt draws exactly what the whole file draws.
    #[test]
    fn excerpt_matches_full_source_for_short_lines() {
        let source = "{\r\n  \"nodes\": [\r\n    {\"id\": \"a\u{e9}\"},\r\n\r\n    {\"id\": \"b\"}\r\n  ]\r\n}\n";
        let a = source.find("\"a").unwrap() as u32;
        let b = source.find("\"b\"").unwrap() as u32;
        let diagnostics = [
            Diagnostic::new(Code::GraphDuplicateNodeId, "two").with_span(Some(b..b + 3)).with_related(Related {
                message: "first".into(),
                path: "$.nodes[0].id".into(),
                span: Some(a..a + 4),
            }),
            Diagnostic::new(Code::DraftInvalidShape, "multi").with_span(Some(a - 1..b + 4)),
            Diagnostic::new(Code::DraftInvalidShape, "eof").with_span(Some(source.len() as u32..source.len() as u32)),
            Diagnostic::new(Code::DraftInvalidShape, "crlf").with_span(Some(1..3)),
        ];
        for diagnostic in &diagnostics {
            let options = plain(160);
            let full = super::diagnostics(
                &CheckedFile::of_diagnostics("f.json", source, std::slice::from_ref(diagnostic)),
                &options,
            );
            // Force the excerpt path by rendering through it directly.
            let renderer = Renderer::new("f.json", source, &options);
            let marks = renderer.marks(diagnostic, diagnostic.span.as_ref().unwrap());
            let touched = renderer.touched_lines(&marks);
            let excerpt = renderer.excerpt(&marks, &touched);
            let mapped = marks
                .iter()
                .map(|m| Mark {
                    range: excerpt.map(&renderer, &m.range),
                    message: m.message.clone(),
                    primary: m.primary,
                })
                .collect();
            let body = renderer.draw(&Source::from(excerpt.text.clone()), diagnostic, mapped, &[]);
            let expected = full.split_once('\n').unwrap().1;
            assert_eq!(body, expected, "{}", diagnostic.message);
        }
    }

    /// A report drawn from its lines only, renumbered, is the report drawn from the whole
    /// file: labels on one line and on many, across a change in the width of line numbers,
    /// with help, notes and related labels.
    #[test]
    fn window_draws_what_the_whole_file_draws() {
        let source: String = (1..=1200).map(|i| format!("line {i} \"value\": [1, 2, 3],\r\n")).collect();
        let line = |n: usize| source.match_indices("line ").nth(n - 1).unwrap().0 as u32;
        let span = |from: usize, to: usize| Some(line(from) + 2..line(to) + 9);
        let mut cases = Vec::new();
        for (from, to) in [(1, 1), (2, 2), (9, 10), (10, 10), (99, 100), (100, 101), (998, 1000), (1200, 1200)] {
            cases.push(Diagnostic::new(Code::DraftInvalidShape, "one").with_span(span(from, from)));
            cases.push(Diagnostic::new(Code::DraftInvalidShape, "many").with_span(span(from, to)));
            let mut related = Diagnostic::new(Code::GraphDuplicateNodeId, "two").with_span(span(to, to));
            related =
                related.with_related(Related { message: "first".into(), path: "$".into(), span: span(from, from) });
            related.help = Some("did you mean this?".into());
            cases.push(related);
        }
        let options = plain(160);
        for diagnostic in &cases {
            let mut windowed = Renderer::new("f.json", &source, &options);
            let mut whole = Renderer::new("f.json", &source, &options);
            let span = diagnostic.span.as_ref().unwrap();
            let touched = windowed.touched_lines(&windowed.marks(diagnostic, span));
            let notes = ["at $.somewhere".to_string()];
            let drawn = windowed.draw_short_lines(diagnostic, windowed.marks(diagnostic, span), &touched, &notes);
            let expected = whole.draw_from_whole_file(diagnostic, whole.marks(diagnostic, span), &notes);
            assert_eq!(drawn, expected, "{} at {:?}", diagnostic.message, diagnostic.span);
        }
    }

    /// Copying clean runs whole gives what replacing character by character gives.
    #[test]
    fn sanitizing_in_runs_matches_per_character() {
        let specials: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        let mixed = format!("ab\r\ncd\u{7}\u{85}é\u{2028}x\u{202E}日本\u{2069}\t{specials}\u{1F600}\u{0}");
        for text in [specials.as_str(), mixed.as_str(), "", "plain", "\u{9F}", "end\u{2029}"] {
            let mut out = String::new();
            push_sanitized(&mut out, text);
            assert_eq!(out, text.chars().map(sanitized).collect::<String>());
            assert_eq!(out.len(), text.len());
        }
    }

    /// The memoised column count agrees with [`LineIndex`], in any order of offsets.
    #[test]
    fn columns_agree_with_line_index() {
        let source = "a\u{e9}\u{65e5}b\r\n\u{1f600}xy\n\nz\u{e9}";
        let renderer = Renderer::new("f", source, &plain(160));
        let index = LineIndex::new(source);
        let offsets: Vec<usize> = source.char_indices().map(|(i, _)| i).chain([source.len()]).collect();
        for offset in offsets.iter().chain(offsets.iter().rev()).chain(offsets.iter().step_by(3)) {
            assert_eq!(renderer.line_col(*offset), index.line_col(source, *offset as u32), "{offset}");
        }
    }

    /// Every span on long lines of multi-byte characters (one or several lines, starting or
    /// ending on a line break) renders, small, without panicking.
    #[test]
    fn long_multibyte_lines_never_split_a_character() {
        let mut source = String::new();
        for i in 0..3000 {
            source.push_str(["\u{e9}", "\u{65e5}\u{672c}", "a", "\u{1f600}", "\t"][i % 5]);
            if i % 700 == 699 {
                source.push_str(if i % 1400 == 699 { "\r\n" } else { "\n" });
            }
        }
        let len = source.len() as u32;
        let starts: Vec<u32> = source.char_indices().map(|(i, _)| i as u32).step_by(41).collect();
        for start in starts {
            for width in [0, 1, 2, 5, 70, 400, 5000] {
                let end = (start + width).min(len);
                let diagnostics =
                    [Diagnostic::new(Code::ParseInvalidJson, "x").with_span(Some(start..end)).with_related(Related {
                        message: "far".into(),
                        path: String::new(),
                        span: Some(len - end..len - start),
                    })];
                let out = super::diagnostics(&CheckedFile::of_diagnostics("f", &source, &diagnostics), &plain(40));
                assert!(out.len() < 2000, "{start}..{end}: {} bytes\n{out}", out.len());
                let (line, column) = LineIndex::new(&source).line_col(&source, start);
                assert!(out.contains(&format!("f:{line}:{column} ")), "{start}..{end}\n{out}");
            }
        }
    }
}
