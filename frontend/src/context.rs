//! Reading the tenant context (`workflow-context/v1`) and binding rows
//! (`agent-bindings/v1`) of docs/reference/formats.md#context.

use crate::anchor::{Anchor, Finding};
use crate::json::JsonTree;
use crate::reader::{DRAFT_CODES, Reader, member};

pub const CONTEXT_FORMAT: &str = "workflow-context/v1";
pub const BINDINGS_FORMAT: &str = "agent-bindings/v1";

/// A tenant integration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Integration {
    pub id: String,
    pub kind: String,
}

/// A package of the tenant's registry, at its current version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegistryPackage {
    pub name: String,
    pub version: String,
    pub digest: String,
}

/// The tenant a draft is checked for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Context {
    pub tenant_id: String,
    pub capabilities: Vec<String>,
    pub integrations: Vec<Integration>,
    pub packages: Vec<RegistryPackage>,
    pub min_interval_minutes: Option<u64>,
}

/// The status of one agent binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindingStatus {
    Accepted,
    Pending,
    Rejected,
    Revoked,
}

impl BindingStatus {
    pub fn parse(name: &str) -> Option<BindingStatus> {
        Some(match name {
            "accepted" => BindingStatus::Accepted,
            "pending" => BindingStatus::Pending,
            "rejected" => BindingStatus::Rejected,
            "revoked" => BindingStatus::Revoked,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BindingStatus::Accepted => "accepted",
            BindingStatus::Pending => "pending",
            BindingStatus::Rejected => "rejected",
            BindingStatus::Revoked => "revoked",
        }
    }
}

/// One binding row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindingRow {
    pub agent_id: String,
    pub revision: u64,
    pub status: BindingStatus,
}

pub fn read_context(tree: &JsonTree) -> (Context, Vec<Finding>) {
    let mut reader = Reader::new(tree, DRAFT_CODES);
    let mut context = Context::default();
    let root = Anchor::root();
    if let Some(top) = reader.object(tree.root(), &root, "a context") {
        reader.unknown_keys(
            top,
            &root,
            "the context",
            &["format", "tenantId", "capabilities", "integrations", "packages", "schedulePolicy"],
        );
        match member(top, "tenantId") {
            Some(v) => {
                context.tenant_id = reader.name(v, &root.at("tenantId"), "`tenantId`").unwrap_or_default().into()
            }
            None => reader.missing(&root, "the context", "tenantId"),
        }
        if let Some(v) = member(top, "capabilities") {
            context.capabilities = reader.strings(v, &root.at("capabilities"), "`capabilities`").unwrap_or_default();
        }
        if let Some(v) = member(top, "integrations")
            && let Some(items) = reader.array(v, &root.at("integrations"), "`integrations`")
        {
            for (i, &item) in items.iter().enumerate() {
                let at = root.at("integrations").at(i);
                let Some(fields) = reader.object(item, &at, "an integration") else { continue };
                reader.unknown_keys(fields, &at, "an integration", &["id", "kind"]);
                let id = member(fields, "id").and_then(|v| reader.name(v, &at.at("id"), "`id`"));
                let kind = member(fields, "kind").and_then(|v| reader.name(v, &at.at("kind"), "`kind`"));
                match (id, kind) {
                    (Some(id), Some(kind)) => {
                        context.integrations.push(Integration { id: id.into(), kind: kind.into() })
                    }
                    _ => reader.invalid(&at, "an integration needs an `id` and a `kind`".into()),
                }
            }
        }
        if let Some(v) = member(top, "packages")
            && let Some(items) = reader.array(v, &root.at("packages"), "`packages`")
        {
            for (i, &item) in items.iter().enumerate() {
                let at = root.at("packages").at(i);
                let Some(fields) = reader.object(item, &at, "a registry package") else { continue };
                reader.unknown_keys(fields, &at, "a registry package", &["name", "version", "digest"]);
                let mut text =
                    |key: &str| member(fields, key).and_then(|v| reader.name(v, &at.at(key), format_args!("`{key}`")));
                let (name, version, digest) = (text("name"), text("version"), text("digest"));
                match (name, version, digest) {
                    (Some(name), Some(version), Some(digest)) => context.packages.push(RegistryPackage {
                        name: name.into(),
                        version: version.into(),
                        digest: digest.into(),
                    }),
                    _ => reader.invalid(&at, "a registry package needs a `name`, a `version` and a `digest`".into()),
                }
            }
        }
        if let Some(v) = member(top, "schedulePolicy") {
            let at = root.at("schedulePolicy");
            if let Some(fields) = reader.object(v, &at, "`schedulePolicy`") {
                reader.unknown_keys(fields, &at, "`schedulePolicy`", &["minIntervalMinutes"]);
                if let Some(m) = member(fields, "minIntervalMinutes") {
                    match reader.integer(m, &at.at("minIntervalMinutes"), "`minIntervalMinutes`") {
                        Some(n) if n >= 0 => context.min_interval_minutes = Some(n as u64),
                        Some(_) => reader
                            .invalid(&at.at("minIntervalMinutes"), "`minIntervalMinutes` must not be negative".into()),
                        None => {}
                    }
                }
            }
        }
    }
    (context, reader.findings)
}

pub fn read_bindings(tree: &JsonTree) -> (Vec<BindingRow>, Vec<Finding>) {
    let mut reader = Reader::new(tree, DRAFT_CODES);
    let mut rows = Vec::new();
    let root = Anchor::root();
    if let Some(top) = reader.object(tree.root(), &root, "binding rows") {
        reader.unknown_keys(top, &root, "the binding rows", &["format", "rows"]);
        match member(top, "rows") {
            None => reader.missing(&root, "the binding rows", "rows"),
            Some(v) => {
                if let Some(items) = reader.array(v, &root.at("rows"), "`rows`") {
                    for (i, &item) in items.iter().enumerate() {
                        let at = root.at("rows").at(i);
                        let Some(fields) = reader.object(item, &at, "a binding row") else { continue };
                        reader.unknown_keys(fields, &at, "a binding row", &["agentId", "revision", "status"]);
                        let agent_id =
                            member(fields, "agentId").and_then(|v| reader.name(v, &at.at("agentId"), "`agentId`"));
                        let revision = member(fields, "revision")
                            .and_then(|v| reader.integer(v, &at.at("revision"), "`revision`"))
                            .filter(|n| *n >= 0);
                        let status = member(fields, "status").and_then(|v| {
                            let name = reader.string(v, &at.at("status"), "`status`")?;
                            let status = BindingStatus::parse(name);
                            if status.is_none() {
                                reader.invalid(
                                    &at.at("status"),
                                    format!("unknown binding status `{name}`: expected accepted, pending, rejected or revoked"),
                                );
                            }
                            status
                        });
                        match (agent_id, revision, status) {
                            (Some(agent_id), Some(revision), Some(status)) => {
                                rows.push(BindingRow { agent_id: agent_id.into(), revision: revision as u64, status })
                            }
                            _ => reader
                                .invalid(&at, "a binding row needs `agentId`, `revision` (≥ 0) and `status`".into()),
                        }
                    }
                }
            }
        }
    }
    (rows, reader.findings)
}
