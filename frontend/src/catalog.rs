//! Reading a `workflow-catalog/v1` document (docs/reference/formats.md#catalog).

use little_ir::NodeKind;
use little_ir::catalog::{Catalog, Family, IntegrationRef, Port};

use crate::anchor::{Anchor, Finding};
use crate::json::{JsonTree, NodeIdx};
use crate::reader::{DRAFT_CODES, Reader, member};

pub const CATALOG_FORMAT: &str = "workflow-catalog/v1";

/// The catalog compiled into `little`, used when `--catalog` is not given.
pub const DEFAULT_CATALOG: &str = include_str!("../catalog/default.json");

const FAMILY_KEYS: &[&str] = &[
    "id",
    "kind",
    "semantic",
    "visualOnly",
    "requires",
    "configSchema",
    "ports",
    "integrations",
    "workerSlot",
    "deprecated",
    "title",
    "description",
];

/// Reads a catalog whose `format` has been recognised. Errors among the findings make
/// the catalog unusable; the driver reports them as a tool failure.
pub fn read_catalog(tree: &JsonTree) -> (Catalog, Vec<Finding>) {
    let mut reader = Reader::new(tree, DRAFT_CODES);
    let mut catalog = Catalog::default();
    let root = Anchor::root();
    if let Some(top) = reader.object(tree.root(), &root, "a catalog") {
        reader.unknown_keys(top, &root, "the catalog", &["format", "version", "families"]);
        match member(top, "version") {
            Some(v) => {
                catalog.version = reader.name(v, &root.at("version"), "`version`").unwrap_or_default().to_string()
            }
            None => reader.missing(&root, "the catalog", "version"),
        }
        match member(top, "families") {
            None => reader.missing(&root, "the catalog", "families"),
            Some(f) => {
                if let Some(items) = reader.array(f, &root.at("families"), "`families`") {
                    for (i, &item) in items.iter().enumerate() {
                        let at = root.at("families").at(i);
                        if let Some(family) = read_family(&mut reader, item, &at) {
                            if catalog.family(&family.id).is_some() {
                                reader.invalid(&at.at("id"), format!("family `{}` is declared twice", family.id));
                                continue;
                            }
                            catalog.families.push(family);
                        }
                    }
                }
            }
        }
    }
    (catalog, reader.findings)
}

fn read_family(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> Option<Family> {
    let fields = reader.object(idx, at, "a family")?;
    reader.unknown_keys(fields, at, "a family", FAMILY_KEYS);
    let id = match member(fields, "id") {
        Some(v) => reader.name(v, &at.at("id"), "a family's `id`")?.to_string(),
        None => {
            reader.missing(at, "a family", "id");
            return None;
        }
    };
    let kind = match member(fields, "kind") {
        Some(v) => {
            let name = reader.string(v, &at.at("kind"), "`kind`")?;
            match NodeKind::parse(name) {
                Some(kind) => kind,
                None => {
                    reader.invalid(
                        &at.at("kind"),
                        format!(
                            "family `{id}` has unknown kind `{name}`: expected one of {}",
                            NodeKind::NAMES.join(", ")
                        ),
                    );
                    return None;
                }
            }
        }
        None => {
            reader.missing(at, format_args!("family `{id}`"), "kind");
            return None;
        }
    };
    let flag = |reader: &mut Reader<'_>, key: &str| {
        member(fields, key).and_then(|v| reader.boolean(v, &at.at(key), format_args!("`{key}`"))).unwrap_or(false)
    };
    let visual_only = flag(reader, "visualOnly");
    let worker_slot = flag(reader, "workerSlot");
    let deprecated = flag(reader, "deprecated");
    let semantic = member(fields, "semantic")
        .and_then(|v| reader.string(v, &at.at("semantic"), "`semantic`"))
        .unwrap_or(kind.as_str())
        .to_string();
    let requires = member(fields, "requires")
        .and_then(|v| reader.strings(v, &at.at("requires"), "`requires`"))
        .unwrap_or_default();
    let config_schema = member(fields, "configSchema").and_then(|v| match reader.tree.value(v) {
        crate::json::JsonValue::Object(_) | crate::json::JsonValue::Bool(_) => Some(reader.tree.to_serde(v)),
        _ => {
            reader.invalid(
                &at.at("configSchema"),
                "`configSchema` must be a JSON Schema (an object or a boolean)".into(),
            );
            None
        }
    });
    let mut integrations = Vec::new();
    if let Some(v) = member(fields, "integrations")
        && let Some(items) = reader.array(v, &at.at("integrations"), "`integrations`")
    {
        for (i, &item) in items.iter().enumerate() {
            let item_at = at.at("integrations").at(i);
            let Some(parts) = reader.object(item, &item_at, "an integration reference") else { continue };
            reader.unknown_keys(parts, &item_at, "an integration reference", &["pointer", "kind"]);
            let pointer = member(parts, "pointer").and_then(|p| reader.string(p, &item_at.at("pointer"), "`pointer`"));
            let kind = member(parts, "kind").and_then(|k| reader.name(k, &item_at.at("kind"), "`kind`"));
            match (pointer, kind) {
                (Some(pointer), Some(kind)) if pointer.is_empty() || pointer.starts_with('/') => {
                    integrations.push(IntegrationRef { pointer: pointer.to_string(), kind: kind.to_string() })
                }
                (Some(pointer), Some(_)) => reader.invalid(
                    &item_at.at("pointer"),
                    format!("`{pointer}` is not a JSON pointer (it must start with `/`)"),
                ),
                _ => reader.invalid(&item_at, "an integration reference needs a `pointer` and a `kind`".into()),
            }
        }
    }
    let (inputs, outputs) = match member(fields, "ports") {
        None => (vec![Port::any("in")], vec![Port::any("out")]),
        Some(v) => read_ports(reader, v, &at.at("ports"))?,
    };
    Some(Family {
        id,
        kind,
        semantic,
        visual_only,
        requires,
        inputs,
        outputs,
        config_schema,
        integrations,
        worker_slot,
        deprecated,
    })
}

fn read_ports(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> Option<(Vec<Port>, Vec<Port>)> {
    let fields = reader.object(idx, at, "`ports`")?;
    reader.unknown_keys(fields, at, "`ports`", &["inputs", "outputs"]);
    let mut sides = [Vec::new(), Vec::new()];
    for (side, key) in sides.iter_mut().zip(["inputs", "outputs"]) {
        let Some(v) = member(fields, key) else { continue };
        let Some(items) = reader.array(v, &at.at(key), format_args!("`{key}`")) else { continue };
        for (i, &item) in items.iter().enumerate() {
            let item_at = at.at(key).at(i);
            let Some(parts) = reader.object(item, &item_at, "a port") else { continue };
            reader.unknown_keys(parts, &item_at, "a port", &["name", "types", "required", "multiple"]);
            let Some(name) = member(parts, "name").and_then(|n| reader.name(n, &item_at.at("name"), "a port's `name`"))
            else {
                reader.missing(&item_at, "a port", "name");
                continue;
            };
            let types = member(parts, "types")
                .and_then(|t| reader.strings(t, &item_at.at("types"), "`types`"))
                .unwrap_or_else(|| vec![little_ir::ANY_TYPE.to_string()]);
            let flag = |reader: &mut Reader<'_>, key: &str| {
                member(parts, key)
                    .and_then(|v| reader.boolean(v, &item_at.at(key), format_args!("`{key}`")))
                    .unwrap_or(false)
            };
            let required = flag(reader, "required");
            let multiple = flag(reader, "multiple");
            if side.iter().any(|p: &Port| p.name == name) {
                reader.invalid(&item_at.at("name"), format!("port `{name}` is declared twice"));
                continue;
            }
            side.push(Port { name: name.to_string(), types, required, multiple });
        }
    }
    let [inputs, outputs] = sides;
    Some((inputs, outputs))
}
