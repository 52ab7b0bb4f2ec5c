//! The analyzer of `little`: a salsa database of layered, memoized passes.
//!
//! Inputs are source files ([`SourceFile`]) and the [`Workspace`] they are checked
//! against. Queries parse, lower, resolve and check; each returns its diagnostics as
//! values ([`little_frontend::anchor::Finding`]), gathered by [`report::check_draft`].
//! See ARCHITECTURE.md for the layers and where a new check goes.

pub mod batch;
pub mod checks;
pub mod db;
pub mod definition;
pub mod inputs;
pub mod lwir;
mod prefetch;
pub mod project;
pub mod queries;
pub mod report;
pub mod rules;
pub mod unknown;

pub use db::{Database, SourceFile, Workspace};
pub use report::{FileReport, Issued, diagnostics_report, report};
