//! Generated LWIR documents for benchmarks: a chain of `ai.generate` steps, each needing
//! the previous one and reading its output through a template.

use serde_json::{Value, json};

/// An LWIR of `steps` steps; `prompt_of(i)` is the free text of step i's prompt.
pub fn chain(steps: usize, prompt_of: impl Fn(usize) -> String) -> String {
    let schema =
        json!({ "type": "object", "required": ["summary"], "properties": { "summary": { "type": "string" } } });
    let steps: Vec<Value> = (0..steps)
        .map(|i| {
            let (needs, read) = match i {
                0 => (vec![], "{{ input.ticketId }}".to_string()),
                _ => (vec![format!("s{:05}", i - 1)], format!("{{{{ steps.s{:05}.output.summary }}}}", i - 1)),
            };
            json!({
                "id": format!("s{i:05}"), "uses": "ai.generate", "needs": needs,
                "with": { "model": "gpt-4o-mini", "prompt": format!("{} {read}", prompt_of(i)) },
                "output": { "mode": "object", "schema": schema }
            })
        })
        .collect();
    let lwir = json!({
        "apiVersion": "littleworkflow.dev/v0.1", "kind": "Workflow",
        "metadata": { "name": "bench.chain", "version": "0.1.0", "description": "A generated chain." },
        "input": { "schema": { "type": "object", "properties": { "ticketId": { "type": "string" } } } },
        "output": { "schema": schema },
        "permissions": { "models": ["gpt-4o-mini"], "tools": [], "secrets": [], "network": [] },
        "steps": steps
    });
    serde_json::to_string_pretty(&lwir).expect("JSON values serialize")
}
