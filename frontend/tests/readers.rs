//! The document readers turn every wrong shape into a finding with a path.

use little_diagnostics::Code;
use little_frontend::anchor::{Finding, Resolver};
use little_frontend::catalog::{DEFAULT_CATALOG, read_catalog};
use little_frontend::context::{BindingStatus, read_bindings, read_context};
use little_frontend::draft::lower_draft;
use little_frontend::json::{JsonTree, parse};

fn tree(text: &str) -> JsonTree {
    let parsed = parse(text);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    parsed.tree.unwrap()
}

/// `(code, path)` of each finding, resolved against the tree.
fn located(tree: &JsonTree, findings: &[Finding]) -> Vec<(Code, String)> {
    let resolver = Resolver::new(tree);
    findings.iter().map(|f| (f.diagnostic.code, resolver.resolve(f.clone()).path.unwrap())).collect()
}

#[test]
fn the_default_catalog_reads_cleanly() {
    let (catalog, findings) = read_catalog(&tree(DEFAULT_CATALOG));
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(catalog.version, "2026.11");
    let ids: Vec<&str> = catalog.families.iter().map(|f| f.id.as_str()).collect();
    for expected in [
        "trigger.manual",
        "trigger.schedule",
        "trigger.webhook",
        "agent.task",
        "dataset.retrieve",
        "report.generate",
        "router.switch",
        "gate.approval",
        "notify.email",
        "notify.chat",
        "annotation",
        "group",
    ] {
        assert!(ids.contains(&expected), "missing {expected}");
    }
    // A family without `ports` gets `in` and `out` of type `any`.
    let annotation = catalog.family("annotation").unwrap();
    assert_eq!(annotation.inputs[0].name, "in");
    assert_eq!(annotation.outputs[0].types, ["any"]);
}

#[test]
fn catalog_shape_faults_have_paths() {
    let text = r#"{"format":"workflow-catalog/v1","version":"1","families":[
        {"id":"a","kind":"robot"},
        {"id":"b","kind":"action","ports":{"inputs":[{"name":"in","types":"any"}]}},
        {"id":"c","kind":"action","integrations":[{"pointer":"connection","kind":"x"}]},
        {"id":"a","kind":"action"},
        7
    ]}"#;
    let t = tree(text);
    let (catalog, findings) = read_catalog(&t);
    let got = located(&t, &findings);
    assert!(got.contains(&(Code::DraftInvalidShape, "$.families[0].kind".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.families[1].ports.inputs[0].types".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.families[2].integrations[0].pointer".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.families[4]".into())), "{got:?}");
    // The duplicate `a` is rejected; the first `a` was already rejected for its kind.
    assert_eq!(catalog.families.iter().filter(|f| f.id == "a").count(), 1);
}

#[test]
fn context_and_binding_rows_shape_faults_have_paths() {
    let t = tree(
        r#"{"format":"workflow-context/v1","tenantId":"acme","capabilities":"agents","integrations":[{"id":"x"}],"schedulePolicy":{"minIntervalMinutes":-5}}"#,
    );
    let (context, findings) = read_context(&t);
    let got = located(&t, &findings);
    assert!(got.contains(&(Code::DraftInvalidShape, "$.capabilities".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.integrations[0]".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.schedulePolicy.minIntervalMinutes".into())), "{got:?}");
    assert_eq!(context.tenant_id, "acme");

    let t = tree(
        r#"{"format":"agent-bindings/v1","rows":[{"agentId":"a","revision":1,"status":"accepted"},{"agentId":"b","revision":1,"status":"maybe"}]}"#,
    );
    let (rows, findings) = read_bindings(&t);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, BindingStatus::Accepted);
    let got = located(&t, &findings);
    assert!(got.contains(&(Code::DraftInvalidShape, "$.rows[1].status".into())), "{got:?}");
}

#[test]
fn draft_findings_are_anchored_to_ids_not_positions() {
    let nodes = [r#"{"id":"a","family":"trigger.manual","colour":1}"#, r#"{"id":"b","family":"x","config":[]}"#];
    let draft = |order: [usize; 2]| {
        format!(
            r#"{{"format":"workflow-draft/v1","tenantId":"t","workflowId":"w","draftId":"d","revision":1,"catalogVersion":"1","nodes":[{},{}]}}"#,
            nodes[order[0]], nodes[order[1]]
        )
    };
    let forward = lower_draft(&tree(&draft([0, 1])));
    let backward = lower_draft(&tree(&draft([1, 0])));
    // The same findings, whichever order the nodes stand in…
    let mut a = forward.findings.clone();
    let mut b = backward.findings.clone();
    a.sort_by(|x, y| x.at.cmp(&y.at));
    b.sort_by(|x, y| x.at.cmp(&y.at));
    assert_eq!(a, b);
    // …and resolved to where each node stands now.
    let t = tree(&draft([1, 0]));
    let got = located(&t, &backward.findings);
    assert!(got.contains(&(Code::DraftUnknownField, "$.nodes[1].colour".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.nodes[0].config".into())), "{got:?}");
}

#[test]
fn missing_identity_and_wrong_types_are_told_apart() {
    let t = tree(r#"{"format":"workflow-draft/v1","tenantId":"","workflowId":7,"revision":-1,"nodes":{}}"#);
    let draft = lower_draft(&t);
    let got = located(&t, &draft.findings);
    assert!(got.contains(&(Code::RequestMissingIdentity, "$.tenantId".into())), "{got:?}");
    assert!(got.contains(&(Code::RequestMissingIdentity, "$".into())), "{got:?}"); // no draftId
    assert!(got.contains(&(Code::DraftInvalidShape, "$.workflowId".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.revision".into())), "{got:?}");
    assert!(got.contains(&(Code::DraftInvalidShape, "$.nodes".into())), "{got:?}");
    assert!(draft.nodes_unreadable);
}
