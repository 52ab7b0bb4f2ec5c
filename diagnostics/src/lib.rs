//! Diagnostics of `little`: one [`Diagnostic`] type and the registry of codes. Every pass
//! returns diagnostics as values; the driver gathers them, sorts them and hands them to a
//! renderer (the `little-render` crate).

mod codes;
pub mod line_index;
pub mod suggest;

pub use codes::Code;
pub use line_index::{Encoding, LineIndex};

use std::fmt;
use std::ops::Range;

/// How serious a diagnostic is. Whether it blocks the candidate is the code's own fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A byte range in one source file.
pub type ByteRange = Range<u32>;

/// A secondary location: where something the message refers to was declared.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Related {
    pub message: String,
    pub path: String,
    pub span: Option<ByteRange>,
}

/// The shortest cycle through a strongly connected component (docs/reference/diagnostics.md#the-cycle-witness).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Witness {
    pub nodes: Vec<String>,
    pub edges: Vec<String>,
}

/// One finding about one file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    pub node_id: Option<String>,
    pub edge_id: Option<String>,
    /// JSONPath of the authored element, e.g. `$.edges[1].mapping`.
    pub path: Option<String>,
    pub span: Option<ByteRange>,
    pub help: Option<String>,
    pub related: Vec<Related>,
    pub witness: Option<Witness>,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            message: message.into(),
            node_id: None,
            edge_id: None,
            path: None,
            span: None,
            help: None,
            related: Vec::new(),
            witness: None,
        }
    }

    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    pub fn blocking(&self) -> bool {
        self.code.blocking()
    }

    pub fn with_node(mut self, node_id: impl Into<String>) -> Self {
        self.node_id = Some(node_id.into());
        self
    }

    pub fn with_edge(mut self, edge_id: impl Into<String>) -> Self {
        self.edge_id = Some(edge_id.into());
        self
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn with_span(mut self, span: Option<ByteRange>) -> Self {
        self.span = span;
        self
    }

    pub fn with_help(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    pub fn with_related(mut self, related: Related) -> Self {
        self.related.push(related);
        self
    }

    pub fn with_witness(mut self, witness: Witness) -> Self {
        self.witness = Some(witness);
        self
    }
}

/// Sorts diagnostics into the order of docs/reference/diagnostics.md: by span start, then code, then message.
/// Diagnostics without a span come first; the remaining fields break ties so the order
/// never depends on how the passes happened to run.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        let start = |d: &Diagnostic| d.span.as_ref().map(|s| s.start);
        start(a)
            .cmp(&start(b))
            .then_with(|| a.code.as_str().cmp(b.code.as_str()))
            .then_with(|| a.message.cmp(&b.message))
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.node_id.cmp(&b.node_id))
            .then_with(|| a.edge_id.cmp(&b.edge_id))
    });
}
