//! The checks of LWIR documents (docs/reference/formats.md#lwir), one rule per file.
//!
//! `lwir_ir` lowers the file into a header and one [`Step`] tracked struct per step,
//! identified by its id and occurrence like draft nodes, so that an edit inside one step
//! re-runs that step's checks; `check_lwir` gathers every layer's findings and issues the
//! WorkflowVersion when nothing blocks.

pub mod binding;
pub mod graph;
pub mod schemas;
pub mod steps;
pub mod templates;
pub mod version;

use std::sync::Arc;

use little_frontend::DocumentKind;
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::lwir::{LwirHeader, StepDecl, lower_lwir};

use crate::db::{SourceFile, Workspace};
use crate::queries::{document_kind, whole_tree};

pub use version::{WorkflowVersion, check_lwir_text, version_of_tree, workflow_version};

/// One authored step. Its id and occurrence are its identity.
#[salsa::tracked(debug)]
pub struct Step<'db> {
    #[returns(ref)]
    pub id: String,
    #[returns(copy)]
    pub nth: u32,
    #[tracked]
    #[returns(ref)]
    pub decl: Arc<StepDecl>,
}

impl Step<'_> {
    pub fn anchor(self, db: &dyn salsa::Database) -> Anchor {
        Anchor::step(self.id(db), self.nth(db))
    }
}

/// A lowered LWIR: the header, the steps, and the reader's findings.
#[derive(Debug, PartialEq, salsa::SalsaValue)]
pub struct LwirIr<'db> {
    pub header: LwirHeader,
    pub steps: Vec<Step<'db>>,
    pub steps_unreadable: bool,
    pub findings: Vec<Finding>,
}

/// The lowered LWIR; `None` when the file is not a readable LWIR.
#[salsa::tracked(returns(ref))]
pub fn lwir_ir(db: &dyn salsa::Database, file: SourceFile) -> Option<LwirIr<'_>> {
    if !matches!(document_kind(db, file), Some(Ok(DocumentKind::Lwir))) {
        return None;
    }
    let tree = whole_tree(db, file)?;
    let lowered = lower_lwir(tree);
    let steps = lowered.steps.into_iter().map(|s| Step::new(db, s.id.clone(), s.nth, Arc::new(s))).collect();
    Some(LwirIr {
        header: lowered.header,
        steps,
        steps_unreadable: lowered.steps_unreadable,
        findings: lowered.findings,
    })
}

/// Everything the checks of one LWIR produced, still anchored.
#[derive(Debug, PartialEq)]
pub struct LwirOutcome {
    pub findings: Vec<Finding>,
    pub version: Option<WorkflowVersion>,
}

#[salsa::tracked(returns(ref))]
pub fn check_lwir(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> LwirOutcome {
    let mut outcome = LwirOutcome { findings: Vec::new(), version: None };
    let Some(lwir) = lwir_ir(db, file) else { return outcome };
    let findings = &mut outcome.findings;
    findings.extend(lwir.findings.iter().cloned());
    findings.extend(schemas::header_schemas(db, file).findings.iter().cloned());
    for &step in &lwir.steps {
        findings.extend(steps::step_findings(db, step).findings.iter().cloned());
        findings.extend(templates::template_findings(db, file, step).iter().cloned());
    }
    findings.extend(graph::lwir_graph(db, file).findings.iter().cloned());
    findings.extend(binding::binding_findings(db, workspace, file).iter().cloned());
    findings.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.diagnostic.code.cmp(&b.diagnostic.code)));
    findings.dedup();
    if !findings.iter().any(|f| f.diagnostic.blocking()) {
        let tree = whole_tree(db, file).expect("an LWIR was parsed");
        outcome.version = version::version_of_tree(tree, false);
    }
    outcome
}
