//! A deterministic generator of large, realistic, valid drafts, for benchmarks and
//! scale tests (docs/benchmarks.md).
//!
//! `draft(nodes, seed)` is a `workflow-draft/v1` text of exactly `nodes` nodes that checks
//! with no error and no warning against the default catalog and no context:
//!
//! - a few triggers (`trigger.manual`, and `trigger.schedule` with cron `0 6 * * 1` in
//!   `Europe/Berlin`), each wired to a first `dataset.retrieve`;
//! - then layers of work: `dataset.retrieve` (connection `conn_wh` and a query) fed from
//!   a recent node, `report.generate` whose required `data` input is fed from a recent
//!   `dataset.retrieve`'s `dataset` output, `notify.email` (sender and recipients) fed
//!   mostly from a recent report; about one node in ten of the kinds with a `multiple`
//!   input gets a second edge, from another earlier node;
//! - about one annotation per 200 nodes, with no edges.
//!
//! Every edge goes from an earlier node to a later one, so the graph is acyclic and
//! every node is reachable from a trigger. Every node has a title and a position (its
//! layer and rank). Ids and texts are plain ASCII: nothing needs escaping. The text has
//! one node or edge per line. Gates, routers and agents are left out: they need
//! evidence, branches and bindings. With fewer than two nodes the lone trigger is
//! necessarily unwired.

use std::fmt::Write;

/// xorshift64*: small, fast, and enough for picking shapes.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that seeds 0, 1, 2 … start far apart (and never 0).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0); the bias of the modulo is irrelevant here.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Trigger,
    Dataset,
    Report,
    Email,
}

impl Kind {
    fn output_port(self) -> &'static str {
        match self {
            Kind::Dataset => "dataset",
            Kind::Report => "report",
            Kind::Trigger | Kind::Email => "out",
        }
    }
}

/// A node already placed: what later nodes need to wire to it.
struct Placed {
    id: String,
    kind: Kind,
    layer: usize,
}

/// How far back a node looks for its parent: keeps the graph local and layered.
const WINDOW: usize = 48;

const TABLES: &[&str] = &["sales", "orders", "returns", "inventory", "refunds", "leads", "churn", "payroll"];
const REGIONS: &[&str] = &["emea", "apac", "amer", "dach", "nordics", "iberia"];
const TEAMS: &[&str] = &["finance", "sales-ops", "leadership", "support", "marketing", "logistics"];
const FORMATS: &[&str] = &["pdf", "html", "markdown"];

/// The generator's state: the text being written and the nodes placed so far.
struct Generator {
    rng: Rng,
    nodes: String,
    edges: String,
    placed: Vec<Placed>,
    triggers: usize,
    /// Indices (into `placed`) of the recent dataset retrievals and reports.
    datasets: Vec<usize>,
    reports: Vec<usize>,
    /// How many nodes each layer holds so far (a node's rank in its layer is its row).
    layer_sizes: Vec<usize>,
    edge_count: usize,
}

impl Generator {
    fn push_node(&mut self, id: String, kind: Kind, layer: usize, family: &str, title: &str, config: &str) {
        if self.layer_sizes.len() <= layer {
            self.layer_sizes.resize(layer + 1, 0);
        }
        let row = self.layer_sizes[layer];
        self.layer_sizes[layer] += 1;
        let (x, y) = (80 + 280 * layer, 40 + 140 * row);
        let sep = if self.nodes.is_empty() { "\n    " } else { ",\n    " };
        write!(
            self.nodes,
            r#"{sep}{{"id":"{id}","family":"{family}","title":"{title}","config":{config},"position":{{"x":{x},"y":{y}}}}}"#
        )
        .expect("writing to a string");
        self.placed.push(Placed { id, kind, layer });
    }

    fn push_annotation(&mut self, n: usize) {
        let layer = self.rng.below(self.layer_sizes.len().max(1));
        let (x, y) = (80 + 280 * layer, 40 + 140 * self.layer_sizes.get(layer).copied().unwrap_or(0) + 70);
        let text = match n % 3 {
            0 => "Runs every Monday at 06:00 Berlin time",
            1 => "Owned by the finance data team",
            _ => "Reports go out before the weekly review",
        };
        write!(
            self.nodes,
            r#",
    {{"id":"note_{n}","family":"annotation","title":"Note {n}","text":"{text}","position":{{"x":{x},"y":{y}}}}}"#
        )
        .expect("writing to a string");
    }

    fn push_edge(&mut self, from: usize, to: usize, to_port: &str) {
        self.edge_count += 1;
        let (source, target) = (&self.placed[from], &self.placed[to]);
        let sep = if self.edges.is_empty() { "\n    " } else { ",\n    " };
        write!(
            self.edges,
            r#"{sep}{{"id":"e{}","from":{{"node":"{}","port":"{}"}},"to":{{"node":"{}","port":"{to_port}"}}}}"#,
            self.edge_count,
            source.id,
            source.kind.output_port(),
            target.id
        )
        .expect("writing to a string");
    }

    /// One of the last `WINDOW` retrievals (`reports` false) or reports (true).
    fn recent(&mut self, reports: bool) -> usize {
        let len = if reports { self.reports.len() } else { self.datasets.len() };
        let start = len.saturating_sub(WINDOW);
        let k = start + self.rng.below(len - start);
        if reports { self.reports[k] } else { self.datasets[k] }
    }

    /// Any recent node (a trigger now and then, so that entry points keep fanning out).
    fn recent_any(&mut self) -> usize {
        if self.rng.chance(3) {
            return self.rng.below(self.triggers);
        }
        let start = self.placed.len().saturating_sub(WINDOW).max(self.triggers);
        start + self.rng.below(self.placed.len() - start)
    }

    fn dataset(&mut self, i: usize, parent: usize) {
        let table = self.rng.pick(TABLES);
        let region = self.rng.pick(REGIONS);
        let limit = if self.rng.chance(30) {
            format!(r#","rowLimit":{}"#, 1000 * (1 + self.rng.below(50)))
        } else {
            String::new()
        };
        let config = format!(
            r#"{{"connection":"conn_wh","query":"select region, week, revenue from {table} where region = '{region}' and batch = {i}"{limit}}}"#
        );
        let title = format!("Fetch {table} ({region}) #{i}");
        let layer = self.placed[parent].layer + 1;
        self.push_node(format!("fetch_{i}"), Kind::Dataset, layer, "dataset.retrieve", &title, &config);
        let me = self.placed.len() - 1;
        self.push_edge(parent, me, "in");
        self.datasets.push(me);
    }

    fn node(&mut self, i: usize) {
        let roll = self.rng.below(100);
        if roll < 40 || self.datasets.is_empty() {
            let parent = self.recent_any();
            self.dataset(i, parent);
            self.maybe_second_input(self.placed.len() - 1, parent);
        } else if roll < 70 {
            let parent = self.recent(false);
            let format = self.rng.pick(FORMATS);
            let config = format!(r#"{{"template":"weekly-{}","format":"{format}"}}"#, self.rng.below(12));
            let title = format!("Weekly report #{i}");
            let layer = self.placed[parent].layer + 1;
            self.push_node(format!("report_{i}"), Kind::Report, layer, "report.generate", &title, &config);
            let me = self.placed.len() - 1;
            self.push_edge(parent, me, "data");
            self.reports.push(me);
        } else {
            let parent =
                if !self.reports.is_empty() && self.rng.chance(75) { self.recent(true) } else { self.recent_any() };
            let team = self.rng.pick(TEAMS);
            let config = format!(
                r#"{{"sender":"reports@acme.example","to":["{team}@acme.example","ops@acme.example"],"subject":"Weekly numbers #{i}"}}"#
            );
            let title = format!("Email {team} #{i}");
            let layer = self.placed[parent].layer + 1;
            self.push_node(format!("email_{i}"), Kind::Email, layer, "notify.email", &title, &config);
            let me = self.placed.len() - 1;
            self.push_edge(parent, me, "in");
            self.maybe_second_input(me, parent);
        }
    }

    /// Now and then a second edge into a `multiple` input, from another earlier node.
    fn maybe_second_input(&mut self, me: usize, first: usize) {
        if !self.rng.chance(10) {
            return;
        }
        let other = self.recent_any();
        if other != first && other != me {
            self.push_edge(other, me, "in");
        }
    }
}

/// A valid draft of exactly `nodes` nodes (see the module docs); the same arguments
/// always give the same text.
pub fn draft(nodes: usize, seed: u64) -> String {
    let triggers = if nodes < 2 { nodes } else { (2 + nodes / 20_000).min(8).min(nodes / 2) };
    let annotations = nodes / 200;
    let work = nodes - triggers - annotations;
    let mut g = Generator {
        rng: Rng::new(seed),
        nodes: String::with_capacity(nodes * 230),
        edges: String::with_capacity(nodes * 110),
        placed: Vec::with_capacity(nodes),
        triggers,
        datasets: Vec::new(),
        reports: Vec::new(),
        layer_sizes: Vec::new(),
        edge_count: 0,
    };
    for t in 0..triggers {
        if t % 2 == 0 {
            let config = r#"{"cron":"0 6 * * 1","timezone":"Europe/Berlin"}"#;
            g.push_node(format!("weekly_{t}"), Kind::Trigger, 0, "trigger.schedule", "Every Monday 06:00", config);
        } else {
            g.push_node(format!("start_{t}"), Kind::Trigger, 0, "trigger.manual", "Run by hand", "{}");
        }
    }
    // Every trigger starts something: the first work nodes are its retrievals.
    let stride = if annotations == 0 { usize::MAX } else { work.div_ceil(annotations) };
    let mut notes = 0;
    for i in 0..work {
        if i < triggers {
            g.dataset(i, i);
        } else {
            g.node(i);
        }
        if (i + 1) % stride == 0 && notes < annotations {
            g.push_annotation(notes);
            notes += 1;
        }
    }
    while notes < annotations {
        g.push_annotation(notes);
        notes += 1;
    }
    let mut out = String::with_capacity(g.nodes.len() + g.edges.len() + 512);
    write!(
        out,
        r#"{{
  "format": "workflow-draft/v1",
  "tenantId": "acme",
  "workflowId": "reports.generated",
  "draftId": "drf_gen{seed}",
  "revision": 1,
  "catalogVersion": "2026.11",
  "nodes": [{}
  ],
  "edges": [{}
  ]
}}
"#,
        g.nodes, g.edges
    )
    .expect("writing to a string");
    out
}

/// A context that grants everything the generated drafts use, so that a check of one
/// runs every tenant layer and finds nothing.
pub fn accepting_context() -> String {
    serde_json::json!({
        "format": "workflow-context/v1",
        "tenantId": "acme",
        "capabilities": ["data.warehouse", "notifications.email", "agents", "webhooks", "notifications.chat"],
        "integrations": [ { "id": "conn_wh", "kind": "warehouse" }, { "id": "reports@acme.example", "kind": "email" } ],
        "schedulePolicy": { "minIntervalMinutes": 15 }
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Setup, check_text, codes};

    #[test]
    fn a_thousand_node_draft_checks_clean() {
        let text = draft(1_000, 7);
        let report = check_text(&text, &Setup::default());
        assert!(codes(&report).is_empty(), "{:#?}", &report.diagnostics[..report.diagnostics.len().min(5)]);
        assert!(report.candidate.is_some());
        let topology = crate::compile_text(&text, &Setup::default()).expect("a topology");
        // Annotations are visual-only: the topology holds the other nodes.
        assert_eq!(topology.nodes.len(), 1_000 - 1_000 / 200);
        let edges = topology.transitions.len();
        assert!((1_000..1_150).contains(&edges), "about one edge per node: {edges}");
    }

    #[test]
    fn several_sizes_and_seeds_check_clean() {
        for (nodes, seed) in [(2, 0), (3, 1), (10, 2), (199, 3), (201, 4), (5_000, 5), (50_000, 6)] {
            let report = check_text(&draft(nodes, seed), &Setup::default());
            assert!(codes(&report).is_empty(), "{nodes} nodes, seed {seed}: {:#?}", &report.diagnostics[..1]);
            assert!(report.candidate.is_some(), "{nodes} nodes, seed {seed}");
        }
    }

    #[test]
    fn the_draft_is_deterministic_and_seeded() {
        assert_eq!(draft(500, 1), draft(500, 1));
        assert_ne!(draft(500, 1), draft(500, 2));
        let value: serde_json::Value = serde_json::from_str(&draft(500, 1)).expect("JSON");
        assert_eq!(value["nodes"].as_array().map(Vec::len), Some(500));
    }

    /// Writes the drafts the memory measurement of docs/benchmarks.md reads:
    /// `cargo test -p little-conformance --release -- --ignored write_bench_drafts`.
    #[test]
    #[ignore]
    fn write_bench_drafts() {
        let dir = std::env::temp_dir();
        for (nodes, name) in [(1_000, "1k"), (10_000, "10k"), (100_000, "100k"), (1_000_000, "1m")] {
            let path = dir.join(format!("little-bench-{name}.json"));
            std::fs::write(&path, draft(nodes, 42)).expect("writable temp dir");
            println!("{}", path.display());
        }
    }
}
