//! Incrementality, counted from salsa's execution events.

use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::queries::draft_ir;
use little_passes::{Database, SourceFile, Workspace, report};
use salsa::Setter;

/// A chain `start -> n0000 -> n0001 -> …` of dataset retrievals; `query_of(i)` is node i's query.
fn chain(nodes: usize, query_of: impl Fn(usize) -> String) -> String {
    let mut out = String::from(
        r#"{"format":"workflow-draft/v1","tenantId":"acme","workflowId":"wf","draftId":"d","revision":1,"catalogVersion":"2026.11","nodes":[{"id":"start","family":"trigger.manual"}"#,
    );
    for i in 0..nodes {
        out.push_str(&format!(
            r#",{{"id":"n{i:04}","family":"dataset.retrieve","config":{{"connection":"conn_wh","query":"{}"}}}}"#,
            query_of(i)
        ));
    }
    out.push_str(r#"],"edges":[{"id":"e_start","from":{"node":"start"},"to":{"node":"n0000"}}"#);
    for i in 1..nodes {
        out.push_str(&format!(
            r#",{{"id":"e{i:04}","from":{{"node":"n{:04}","port":"dataset"}},"to":{{"node":"n{i:04}"}}}}"#,
            i - 1
        ));
    }
    out.push_str("]}");
    out
}

fn executions(log: &little_passes::db::ExecutionLog, query: &str) -> Vec<String> {
    log.lock().unwrap().iter().filter(|e| e.starts_with(&format!("{query}("))).cloned().collect()
}

#[test]
fn a_config_edit_reruns_only_that_nodes_checks() {
    let (mut db, log) = Database::with_execution_log();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let original = chain(1000, |i| format!("select {i}"));
    let file = SourceFile::new(&db, "draft.json".into(), original.into());
    let before = report(&db, workspace, file);
    assert!(
        !before.diagnostics.iter().any(|d| d.severity() != little_diagnostics::Severity::Info),
        "{:?}",
        before.diagnostics
    );
    assert!(before.candidate.is_some());
    // The first run checks the nodes in authored order: `start`, then n0000, n0001, …
    // so the k-th execution key names the k-th node.
    let first_run = executions(&log, "check_node");
    assert_eq!(first_run.len(), 1001);

    log.lock().unwrap().clear();
    let edited = chain(1000, |i| if i == 500 { "select changed".into() } else { format!("select {i}") });
    file.set_text(&mut db).to(edited.into());
    let after = report(&db, workspace, file);
    let reruns = executions(&log, "check_node");
    assert_eq!(reruns, [first_run[1 + 500].clone()], "only the edited node's checks re-run");
    // The graph layers do not read configs, so none of them re-runs either.
    for query in ["port_findings", "contract_findings", "flow_findings", "cycle_findings"] {
        assert!(executions(&log, query).is_empty(), "{query} re-ran: {:?}", log.lock().unwrap());
    }
    // The edit is real: the topology hash moved.
    assert_ne!(before.draft_candidate().unwrap().topology_hash, after.draft_candidate().unwrap().topology_hash);
    assert_eq!(draft_ir(&db, workspace, file).as_ref().unwrap().nodes[1 + 500].id(&db), "n0500");
}

#[test]
fn moving_text_reruns_no_check() {
    let (mut db, log) = Database::with_execution_log();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let compact = chain(200, |i| format!("select {i}"));
    let file = SourceFile::new(&db, "draft.json".into(), compact.as_str().into());
    let before = report(&db, workspace, file);
    log.lock().unwrap().clear();
    // Re-indent: every byte offset moves, nothing else changes.
    let spaced = compact.replace(",{", ",\n  {");
    file.set_text(&mut db).to(spaced.into());
    let after = report(&db, workspace, file);
    let ran = log.lock().unwrap().clone();
    assert!(ran.iter().any(|e| e.starts_with("outline(")), "{ran:?}");
    for query in ["check_node", "port_findings", "flow_findings", "cycle_findings", "check_draft"] {
        assert!(executions(&log, query).is_empty(), "{query} re-ran after a whitespace edit: {ran:?}");
    }
    assert_eq!(before.candidate, after.candidate);
}

#[test]
fn a_binding_rows_edit_reruns_only_the_agent_pass() {
    let (mut db, log) = Database::with_execution_log();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let rows = |status: &str| {
        format!(
            r#"{{"format":"agent-bindings/v1","rows":[{{"agentId":"agt_a","revision":1,"status":"accepted"}},{{"agentId":"agt_b","revision":1,"status":"{status}"}}]}}"#
        )
    };
    let bindings = SourceFile::new(&db, "bindings.json".into(), rows("accepted").into());
    let workspace = Workspace::new(&db, catalog, None, Some(bindings), None);
    let draft = r#"{"format":"workflow-draft/v1","tenantId":"acme","workflowId":"wf","draftId":"d","revision":1,"catalogVersion":"2026.11",
        "nodes":[{"id":"start","family":"trigger.manual"},
                 {"id":"a","family":"agent.task","agent":{"agentId":"agt_a","revision":1}},
                 {"id":"b","family":"agent.task","agent":{"agentId":"agt_b","revision":1}}],
        "edges":[{"id":"e1","from":{"node":"start"},"to":{"node":"a"}},{"id":"e2","from":{"node":"a"},"to":{"node":"b"}}]}"#;
    let file = SourceFile::new(&db, "draft.json".into(), draft.into());
    assert!(report(&db, workspace, file).candidate.is_some());
    log.lock().unwrap().clear();
    bindings.set_text(&mut db).to(rows("revoked").into());
    let after = report(&db, workspace, file);
    assert_eq!(executions(&log, "agent_findings").len(), 2, "{:?}", log.lock().unwrap());
    for query in ["check_node", "flow_findings", "cycle_findings"] {
        assert!(executions(&log, query).is_empty(), "{query} re-ran after a rows edit");
    }
    let codes: Vec<&str> = after.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert!(codes.contains(&"agent.binding_not_accepted"), "{codes:?}");
    assert!(after.candidate.is_none());
}

/// A check parses each file once: the catalog's outline is its whole tree, and a draft is
/// read from its outline, so the whole-tree query (the editor's) never runs.
#[test]
fn a_check_parses_each_file_once() {
    let (db, log) = Database::with_execution_log();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let file = SourceFile::new(&db, "draft.json".into(), chain(20, |i| format!("select {i}")).into());
    assert!(report(&db, workspace, file).candidate.is_some());
    assert_eq!(executions(&log, "outline").len(), 2, "{:?}", log.lock().unwrap());
    assert!(executions(&log, "parse").is_empty(), "{:?}", log.lock().unwrap());
    // The editor's whole tree of the draft is a parse of its own.
    let tree = little_passes::queries::whole_tree(&db, file).expect("JSON");
    assert!(!tree.is_outline());
    assert_eq!(executions(&log, "parse").len(), 1);
}

/// The lowering hands each chunk of nodes, and the edges, to the first `draft_ir`; a
/// second one (another workspace over the same file) reads them again from their spans,
/// and lowers alike, across several chunks.
#[test]
fn a_second_lowering_of_one_outline_reads_alike() {
    let db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let first = Workspace::new(&db, catalog, None, None, None);
    let second = Workspace::new(&db, catalog, None, None, None);
    let nodes = 2 * little_passes::queries::NODE_CHUNK + 5;
    let text = chain(nodes, |i| format!("select {i}")).replace(r#""id":"n0007""#, r#""id":"n0007","colour":1"#);
    let file = SourceFile::new(&db, "draft.json".into(), text.into());
    let (a, b) = (draft_ir(&db, first, file).as_ref().unwrap(), draft_ir(&db, second, file).as_ref().unwrap());
    let ids = |draft: &little_passes::queries::DraftIr<'_>| -> Vec<String> {
        draft.nodes.iter().map(|n| format!("{}#{} {:?}", n.id(&db), n.nth(&db), n.config(&db))).collect()
    };
    assert_eq!(ids(a), ids(b));
    assert_eq!(a.nodes.len(), nodes + 1, "every chunk's nodes, `start` included");
    assert_eq!(a.findings, b.findings);
    assert!(!a.findings.is_empty(), "the unknown field is found both times");
    let graph = |workspace| little_passes::queries::resolved_graph(&db, workspace, file);
    assert_eq!(graph(first), graph(second));
    assert_eq!(graph(first).edges.len(), nodes, "every edge, `e_start` included");
    assert_eq!(report(&db, first, file).diagnostics, report(&db, second, file).diagnostics);
}

/// A file an editor changes keeps its last outline, and an edit inside one element
/// patches it: after every edit, its report is the one a fresh file of the same text gets
/// (findings, their spans, the candidate), whether the edit could be patched or not. The
/// fresh file is an editor's too, so that a text that is not JSON is recovered in both (a
/// broken element is patched as unknown, or the whole text recovered).
#[test]
fn an_edited_file_reports_as_a_fresh_one() {
    let mut db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let mut text = chain(40, |i| format!("select {i}"));
    let file = SourceFile::edited(&db, "draft.json".into(), text.clone().into());
    let edits: &[(&str, &str)] = &[
        // Inside one node: a config value, an unknown field, a duplicate key, a family.
        (r#""query":"select 7""#, r#""query":"select seven""#),
        (r#""id":"n0012""#, r#""id":"n0012","colour":1"#),
        (r#""id":"n0020""#, r#""id":"n0020","id":"n0021""#),
        (
            r#""family":"dataset.retrieve","config":{"connection":"conn_wh","query":"select 30"}"#,
            r#""family":"no.such""#,
        ),
        // Inside one edge: a port that does not exist, then an endpoint that does not.
        (r#""from":{"node":"n0004","port":"dataset"}"#, r#""from":{"node":"n0004","port":"nope"}"#),
        (r#""to":{"node":"n0009"}"#, r#""to":{"node":"n9999"}"#),
        // Across elements, and in the header: parsed whole.
        (r#"},{"id":"n0031""#, r#"},{"id":"n0031x"}, {"id":"n0031""#),
        (r#""revision":1"#, r#""revision":2"#),
        // Broken, then mended.
        (r#""query":"select 33""#, r#""query":"select 33"#),
        (r#""query":"select 33"#, r#""query":"select 33""#),
        (r#""query":"select seven""#, r#""query":"select 7""#),
    ];
    for &(from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
        file.set_text(&mut db).to(text.clone().into());
        let fresh = SourceFile::edited(&db, "draft.json".into(), text.clone().into());
        let (edited, fresh) = (report(&db, workspace, file), report(&db, workspace, fresh));
        assert_eq!(edited.diagnostics, fresh.diagnostics, "after {to}");
        assert_eq!(edited.candidate, fresh.candidate, "after {to}");
    }
}

/// An edit re-creates the nodes of its own chunk only ([`little_passes::queries::ChunkStamp`]):
/// the other chunks' nodes are left as they were, unless the edit changed how often an id
/// occurs before one of theirs. After each edit the report is a fresh file's.
#[test]
fn an_edit_recreates_the_nodes_of_its_chunk_only() {
    let (mut db, log) = Database::with_execution_log();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let chunk = little_passes::queries::NODE_CHUNK;
    let mut text = chain(2 * chunk + 5, |i| format!("select {i}"));
    let file = SourceFile::edited(&db, "draft.json".into(), text.clone().into());
    report(&db, workspace, file);
    assert_eq!(executions(&log, "node_chunk").len(), 3);
    // `start` is node 0, so n{i} is node i + 1: n4500 lies in the second chunk; n0003 in
    // the first and n8195 in the third. Renaming n0003 to n8195 gives the third chunk's
    // n8195 a count of 1, so that chunk is re-created too, and the duplicate reported.
    let n0003 = r#"{"id":"n0003","family":"dataset.retrieve","config":{"connection":"conn_wh","query":"select 3"}"#;
    let renamed = n0003.replace("n0003", "n8195");
    // A config is not part of the graph, so its edit does not resolve the graph again; an
    // id is.
    let edits: [(&str, &str, usize, usize, usize); 4] = [
        (r#""query":"select 4500""#, r#""query":"select changed""#, 1, 0, 0),
        (n0003, &renamed, 2, 1, 1),
        (&renamed, n0003, 2, 1, 0),
        (r#""query":"select changed""#, r#""query":"select 4500""#, 1, 0, 0),
    ];
    for (from, to, recreated, resolved, duplicates) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
        log.lock().unwrap().clear();
        file.set_text(&mut db).to(text.clone().into());
        let edited = report(&db, workspace, file);
        assert_eq!(executions(&log, "node_chunk").len(), recreated, "after {to}");
        assert_eq!(executions(&log, "resolved_graph").len(), resolved, "after {to}");
        let duplicate = |d: &&little_diagnostics::Diagnostic| d.code == little_diagnostics::Code::GraphDuplicateNodeId;
        assert_eq!(edited.diagnostics.iter().filter(duplicate).count(), duplicates, "after {to}");
        let fresh = SourceFile::new(&db, "fresh.json".into(), text.clone().into());
        let fresh = report(&db, workspace, fresh);
        assert_eq!(edited.diagnostics, fresh.diagnostics, "after {to}");
        assert_eq!(edited.candidate, fresh.candidate, "after {to}");
    }
}
