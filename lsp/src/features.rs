//! The answers: diagnostics, hover, definition, symbols, completion and code actions, each
//! computed on a worker from a [`Snapshot`].

use std::collections::HashMap;
use std::ops::Range;

use little_diagnostics::{Code, Diagnostic, Encoding, LineIndex, Severity};
use little_frontend::json::{JsonTree, NodeIdx};
use little_passes::queries::{catalog_of, whole_tree};
use lsp_types::request::Request as _;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionProviderCapability, CompletionItem,
    CompletionItemKind, CompletionList, CompletionOptions, CompletionParams, CompletionTextEdit,
    DiagnosticRelatedInformation, DiagnosticSeverity, DocumentSymbol, DocumentSymbolParams, GotoDefinitionParams,
    Hover, HoverContents, HoverParams, HoverProviderCapability, Location, MarkupContent, MarkupKind, NumberOrString,
    OneOf, Position, PositionEncodingKind, ServerCapabilities, SymbolKind, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Url, WorkspaceEdit, request,
};
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};

use crate::analysis::{self, Spot};
use crate::server::Snapshot;
use crate::settings::Settings;

pub fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::INCREMENTAL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["\"".to_string(), ".".to_string()]),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

pub fn handles(method: &str) -> bool {
    [
        request::HoverRequest::METHOD,
        request::GotoDefinition::METHOD,
        request::DocumentSymbolRequest::METHOD,
        request::Completion::METHOD,
        request::CodeActionRequest::METHOD,
    ]
    .contains(&method)
}

/// The answer to a request, serialized straight from the LSP types (no `Value` between).
pub(crate) fn answer(snapshot: &Snapshot, method: &str, params: Value) -> Result<Box<RawValue>, String> {
    fn decode<P: serde::de::DeserializeOwned>(params: Value) -> Result<P, String> {
        serde_json::from_value(params).map_err(|e| format!("bad parameters: {e}"))
    }
    let value = match method {
        request::HoverRequest::METHOD => to_raw_value(&hover(snapshot, decode(params)?)),
        request::GotoDefinition::METHOD => to_raw_value(&definition(snapshot, decode(params)?)),
        request::DocumentSymbolRequest::METHOD => to_raw_value(&symbols(snapshot, decode(params)?)),
        request::Completion::METHOD => to_raw_value(&completion(snapshot, decode(params)?)),
        request::CodeActionRequest::METHOD => to_raw_value(&code_actions(snapshot, decode(params)?)),
        other => return Err(format!("unknown method {other}")),
    };
    Ok(value.expect("LSP types serialize"))
}

fn position(text: &str, index: &LineIndex, offset: u32, encoding: Encoding) -> Position {
    let (line, character) = index.position(text, offset, encoding);
    Position { line, character }
}

pub fn range(text: &str, index: &LineIndex, span: &Range<u32>, encoding: Encoding) -> lsp_types::Range {
    lsp_types::Range {
        start: position(text, index, span.start, encoding),
        end: position(text, index, span.end, encoding),
    }
}

impl Snapshot {
    fn range(&self, span: &Range<u32>) -> lsp_types::Range {
        range(&self.text, &self.index, span, self.encoding)
    }

    fn offset(&self, position: Position) -> u32 {
        self.index.offset(&self.text, position.line, position.character, self.encoding)
    }

    fn tree(&self) -> Option<&JsonTree> {
        whole_tree(&self.db, self.file)
    }

    fn catalog(&self) -> &little_ir::catalog::Catalog {
        &catalog_of(&self.db, self.workspace.catalog(&self.db)).value
    }

    fn report(&self) -> little_passes::FileReport {
        little_passes::diagnostics_report(&self.db, self.workspace, self.file)
    }

    fn location(&self, node: NodeIdx, tree: &JsonTree) -> Location {
        Location { uri: self.uri.clone(), range: self.range(&tree.span(node)) }
    }
}

/// One diagnostic in LSP terms: range, severity, code with its explanation link, the help
/// after the message, and the related locations (same document).
pub fn to_lsp(
    d: &Diagnostic,
    uri: &Url,
    text: &str,
    index: &LineIndex,
    encoding: Encoding,
    settings: &Settings,
) -> lsp_types::Diagnostic {
    let span = d.span.clone().unwrap_or(0..0);
    let message = match &d.help {
        Some(help) => format!("{}\nhelp: {help}", d.message),
        None => d.message.clone(),
    };
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location {
                uri: uri.clone(),
                range: range(text, index, &r.span.clone().unwrap_or(0..0), encoding),
            },
            message: r.message.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: range(text, index, &span, encoding),
        severity: Some(match d.severity() {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.code.as_str().to_string())),
        code_description: Url::parse(&settings.explain_url(d.code.as_str()))
            .ok()
            .map(|href| lsp_types::CodeDescription { href }),
        source: Some("little".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

pub(crate) fn diagnostics(snapshot: &Snapshot) -> Vec<lsp_types::Diagnostic> {
    let report = snapshot.report();
    report
        .diagnostics
        .iter()
        .map(|d| to_lsp(d, &snapshot.uri, &snapshot.text, &snapshot.index, snapshot.encoding, &snapshot.settings))
        .collect()
}

fn hover(snapshot: &Snapshot, params: HoverParams) -> Option<Hover> {
    let offset = snapshot.offset(params.text_document_position_params.position);
    let tree = snapshot.tree()?;
    let cursor = analysis::cursor_at(tree, offset);
    let mut sections = Vec::new();
    let mut span = None;
    let family_name = match analysis::spot(tree, &cursor) {
        Some(Spot::Family { name, .. }) => Some(name),
        Some(Spot::NodeId { node }) => analysis::member_string(tree, node, "family"),
        _ => None,
    };
    if let Some(family) = family_name.and_then(|name| snapshot.catalog().family(name)) {
        sections.push(analysis::family_markdown(family));
        span = Some(tree.span(cursor.target()));
    }
    // The explanation of every code whose diagnostic covers the cursor.
    let mut codes: Vec<Code> = Vec::new();
    for d in snapshot.report().diagnostics {
        if let Some(s) = &d.span
            && s.start <= offset
            && offset <= s.end
            && !codes.contains(&d.code)
        {
            codes.push(d.code);
            span = span.or(Some(s.clone()));
        }
    }
    sections.extend(codes.iter().map(|code| code.explanation().to_string()));
    if sections.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: sections.join("\n\n---\n\n"),
        }),
        range: span.map(|s| snapshot.range(&s)),
    })
}

fn definition(snapshot: &Snapshot, params: GotoDefinitionParams) -> Option<Location> {
    let offset = snapshot.offset(params.text_document_position_params.position);
    let tree = snapshot.tree()?;
    let cursor = analysis::cursor_at(tree, offset);
    let (key, id) = match analysis::spot(tree, &cursor)? {
        Spot::NodeRef { id } => ("nodes", id),
        Spot::Need { id } => ("steps", id),
        _ => return None,
    };
    let (_, id_value) = analysis::find_by_id(tree, key, id)?;
    Some(snapshot.location(id_value, tree))
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be spelled out
fn symbol(
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: lsp_types::Range,
    selection: lsp_types::Range,
    children: Option<Vec<DocumentSymbol>>,
) -> DocumentSymbol {
    DocumentSymbol { name, detail, kind, tags: None, deprecated: None, range, selection_range: selection, children }
}

/// Nodes and edges (drafts) or steps (LWIR) as an outline, under one entry per list.
fn symbols(snapshot: &Snapshot, _params: DocumentSymbolParams) -> Option<Vec<DocumentSymbol>> {
    let tree = snapshot.tree()?;
    let mut outline = Vec::new();
    for (key, kind) in [("nodes", SymbolKind::OBJECT), ("edges", SymbolKind::EVENT), ("steps", SymbolKind::FUNCTION)] {
        let Some(member) = tree.get(tree.root(), key).filter(|m| tree.value(m.value).is_array()) else { continue };
        let mut children = Vec::new();
        for &element in analysis::elements(tree, key) {
            let Some(id) = tree.get(element, "id").filter(|m| tree.value(m.value).is_string()) else { continue };
            let name = analysis::string(tree, id.value).unwrap_or_default().to_string();
            let detail = match key {
                "nodes" => analysis::member_string(tree, element, "family").map(str::to_string),
                "edges" => {
                    let end = |end: &str| {
                        tree.get(element, end)
                            .and_then(|m| analysis::member_string(tree, m.value, "node"))
                            .unwrap_or("?")
                    };
                    Some(format!("{} → {}", end("from"), end("to")))
                }
                _ => analysis::member_string(tree, element, "uses").map(str::to_string),
            };
            let range = snapshot.range(&tree.span(element));
            children.push(symbol(name, detail, kind, range, snapshot.range(&tree.span(id.value)), None));
        }
        let range = snapshot.range(&tree.span(member.value));
        outline.push(symbol(
            key.to_string(),
            None,
            SymbolKind::ARRAY,
            range,
            snapshot.range(&member.key_span),
            Some(children),
        ));
    }
    Some(outline)
}

/// One completion candidate.
struct Candidate {
    label: String,
    detail: Option<String>,
    documentation: Option<String>,
    deprecated: bool,
}

impl Candidate {
    fn named(label: &str, detail: Option<String>) -> Candidate {
        Candidate { label: label.to_string(), detail, documentation: None, deprecated: false }
    }
}

/// At most this many completion items go out; past it the list is marked incomplete and
/// the client asks again as more is typed (a 10,000-node draft has 10,000 node ids).
pub const COMPLETION_CAP: usize = 100;

fn completion(snapshot: &Snapshot, params: CompletionParams) -> Option<CompletionList> {
    let offset = snapshot.offset(params.text_document_position.position);
    let tree = snapshot.tree()?;
    let cursor = analysis::cursor_at(tree, offset);
    let spot = analysis::spot(tree, &cursor)?;
    let catalog = snapshot.catalog();
    let candidates: Vec<Candidate> = match spot {
        Spot::Family { .. } => catalog
            .families
            .iter()
            .map(|f| {
                let detail = format!("{} · {}", f.kind.as_str(), f.semantic);
                Candidate {
                    label: f.id.clone(),
                    detail: Some(detail),
                    documentation: Some(analysis::family_markdown(f)),
                    deprecated: f.deprecated,
                }
            })
            .collect(),
        Spot::NodeRef { .. } => analysis::elements(tree, "nodes")
            .iter()
            .filter_map(|&n| {
                let id = analysis::member_string(tree, n, "id")?;
                Some(Candidate::named(id, analysis::member_string(tree, n, "family").map(str::to_string)))
            })
            .fold(Vec::new(), |mut items, item| {
                if !items.iter().any(|c: &Candidate| c.label == item.label) {
                    items.push(item);
                }
                items
            }),
        Spot::Port { edge, output } => {
            let family = analysis::family_of_end(tree, catalog, edge, if output { "from" } else { "to" })?;
            let ports = if output { &family.outputs } else { &family.inputs };
            ports.iter().map(|p| Candidate::named(&p.name, Some(p.types.join(" | ")))).collect()
        }
        Spot::BranchLabel { edge } => {
            let from = tree.get(edge, "from")?.value;
            let (router, _) = analysis::find_by_id(tree, "nodes", analysis::member_string(tree, from, "node")?)?;
            analysis::branch_labels(tree, router).into_iter().map(|l| Candidate::named(l, None)).collect()
        }
        Spot::Need { .. } => {
            let own = cursor.nodes.get(2).and_then(|&step| analysis::member_string(tree, step, "id"));
            analysis::ids(tree, "steps")
                .into_iter()
                .filter(|id| Some(*id) != own)
                .map(|id| Candidate::named(id, None))
                .collect()
        }
        Spot::NodeId { .. } => return None,
    };
    // Replace the string's contents, whatever has been typed of it; offer what contains
    // what was typed before the cursor, those that start with it first, deprecated last.
    let span = tree.span(cursor.target());
    let inside = snapshot.range(&(span.start + 1..span.end.saturating_sub(1).max(span.start + 1)));
    let typed_end = (offset as usize).clamp(span.start as usize + 1, (span.end as usize).max(span.start as usize + 1));
    let typed = snapshot.text.get(span.start as usize + 1..typed_end).unwrap_or("").to_lowercase();
    let mut matching: Vec<(u8, usize, Candidate)> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(order, candidate)| {
            let label = candidate.label.to_lowercase();
            let rank = if label.starts_with(&typed) {
                0
            } else if label.contains(&typed) {
                1
            } else {
                return None;
            };
            Some((u8::from(candidate.deprecated) * 2 + rank, order, candidate))
        })
        .collect();
    matching.sort_by_key(|&(rank, order, _)| (rank, order));
    let is_incomplete = matching.len() > COMPLETION_CAP;
    matching.truncate(COMPLETION_CAP);
    let kind = match spot {
        Spot::Family { .. } => CompletionItemKind::CLASS,
        Spot::Port { .. } => CompletionItemKind::FIELD,
        Spot::BranchLabel { .. } => CompletionItemKind::ENUM_MEMBER,
        _ => CompletionItemKind::REFERENCE,
    };
    let items = matching
        .into_iter()
        .enumerate()
        .map(|(at, (_, _, Candidate { label, detail, documentation, deprecated }))| CompletionItem {
            text_edit: Some(CompletionTextEdit::Edit(TextEdit { range: inside, new_text: label.clone() })),
            // The client sorts by this: our order, whatever its own fuzzy score.
            sort_text: Some(format!("{at:04}")),
            filter_text: Some(label.clone()),
            label,
            kind: Some(kind),
            detail,
            documentation: documentation.map(|value| {
                lsp_types::Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value })
            }),
            tags: deprecated.then(|| vec![lsp_types::CompletionItemTag::DEPRECATED]),
            deprecated: deprecated.then_some(true),
            ..CompletionItem::default()
        })
        .collect();
    Some(CompletionList { is_incomplete, items })
}

/// A quick fix for every did-you-mean diagnostic that touches the requested range.
fn code_actions(snapshot: &Snapshot, params: CodeActionParams) -> Option<Vec<CodeActionOrCommand>> {
    let tree = snapshot.tree()?;
    let (start, end) = (snapshot.offset(params.range.start), snapshot.offset(params.range.end));
    let mut actions = Vec::new();
    for d in snapshot.report().diagnostics {
        let Some(span) = &d.span else { continue };
        if span.end < start || span.start > end {
            continue;
        }
        let Some(fix) = analysis::fix(tree, &d) else { continue };
        let edit = TextEdit { range: snapshot.range(&fix.span), new_text: fix.replacement };
        let diagnostic =
            to_lsp(&d, &snapshot.uri, &snapshot.text, &snapshot.index, snapshot.encoding, &snapshot.settings);
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: fix.title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diagnostic]),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(snapshot.uri.clone(), vec![edit])])),
                ..WorkspaceEdit::default()
            }),
            is_preferred: Some(true),
            ..CodeAction::default()
        }));
    }
    Some(actions)
}
