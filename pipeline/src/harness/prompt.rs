//! What the model is shown (docs/reference/harness.md#the-built-in-harness-workflowharness100): the system prompt (the definition's `system`, the
//! harness's fixed instructions, the skills' frontmatter, the global tools' descriptors,
//! the memory paths), the function tools, and the task as the first user message. All of
//! it is a function of the definition, the input and the session's paths, so a resumed
//! session sends the same requests.

use serde_json::{Value, json};

use super::filesystem::SessionFiles;
use crate::capabilities::Capabilities;
use crate::outer_loop::OuterLoop;

/// The system prompt of a plan session. It names no bound (turns, attempts, time limits):
/// those may change when a run is resumed, and a resumed session must send what it sent.
pub fn plan_system(capabilities: &Capabilities, files: &SessionFiles) -> String {
    let definition = &capabilities.definition;
    let scratch = files.workdir.display();
    let mut prompt = String::new();
    if !definition.planner.system.is_empty() {
        prompt.push_str(&definition.planner.system);
        prompt.push_str("\n\n");
    }
    prompt.push_str(&format!(
        "# How this session works (workflowHarness@1.0.0)
You are the planner of the workflow `{id}`. Write one LWIR document for the task in the first user message and submit it with `submit_lwir`.

LWIR is JSON: `{{\"apiVersion\": \"littleworkflow.dev/v0.1\", \"kind\": \"Workflow\", \"metadata\": {{\"name\": \"{id}\", \"version\": \"0.1.0\"}}, \"input\": {{\"schema\": <inputSchema>}}, \"output\": {{\"schema\": <outputSchema>}}, \"permissions\": {{\"models\": [...], \"tools\": [...], \"secrets\": [], \"network\": []}}, \"steps\": [...]}}`.
- `metadata.name` is the workflow id; `input.schema` and `output.schema` are the task's `inputSchema` and `outputSchema`, copied exactly.
- `permissions.models` lists model slot ids of `workflowSnapshot.modelSlots`; `permissions.tools` lists ids of `workflowSnapshot.globalTools`.
- A step is `{{\"id\", \"uses\", \"needs\": [step ids], \"with\", \"output\": {{\"mode\": \"object\", \"schema\"}}}}`. `uses` is `ai.generate` (`with.model`: a permitted slot id, `with.prompt`, optional `with.system`), `code.run` (`with.entrypoint`, `with.files: {{NAME: {{\"content\", \"sha256\": \"sha256:<hex of the content's UTF-8 bytes>\"}}}}`, `with.sandbox: {{\"network\", \"env\", \"fs\"}}` each `allow` or `deny`) or `tool.call` (`with.tool`: a permitted tool, `with.input`).
- Strings under `with` may hold templates `{{{{ input.FIELD }}}}` or `{{{{ steps.ID.output.FIELD }}}}`, where ID is in the step's transitive `needs`.

Tools:
- `bash` runs one command in your scratch directory `{scratch}` (no network; a time limit a call; 64 KiB of each output kept). Test code there before you embed it.
- `validate_lwir` checks an LWIR and returns its findings without submitting it.
- `submit_lwir` submits the LWIR. When it is valid the session ends; otherwise you get the findings (`code`, `path`, `message`): repair what they name and submit again. Only a few submissions may be refused: validate first.
Pass the LWIR as a JSON object in the `lwir` argument.
",
        id = definition.id,
    ));
    push_shared(&mut prompt, capabilities, &definition.planner.skills, files);
    prompt
}

/// The parts of a system prompt plan and fix sessions share: skills, global tools, memory.
pub fn push_shared(
    prompt: &mut String,
    capabilities: &Capabilities,
    skills: &[little_frontend::definition::Skill],
    files: &SessionFiles,
) {
    if !skills.is_empty() {
        prompt.push_str(
            "\n# Skills\nRead a skill's body with `cat .agents/skills/<name>/SKILL.md` in your scratch directory.\n",
        );
        for skill in skills {
            prompt.push_str(&format!("- name: {}\n  description: {}\n", skill.name, skill.description));
        }
    }
    if !capabilities.global_tools.is_empty() {
        prompt.push_str(
            "\n# Global tools\nThese tools may be called by `tool.call` steps of the workflow; you cannot call them yourself.\n",
        );
        for tool in &capabilities.global_tools {
            prompt.push_str(&format!("{}\n", crate::capabilities::canonical_text(&Capabilities::tool_json(tool))));
        }
    }
    if !files.memory.is_empty() {
        prompt.push_str(
            "\n# Memory\nLessons kept between runs. Read them before you design; write what you learn where you may.\n",
        );
        for store in &files.memory {
            let access = if store.writable { "read-write" } else { "read-only" };
            prompt.push_str(&format!("- `{}/` ({}, {access})\n", store.path.display(), store.id));
        }
    }
}

/// The function tools of a plan session.
pub fn plan_tools() -> Vec<Value> {
    let lwir = json!({
        "type": "object",
        "properties": { "lwir": { "type": "object", "description": "The LWIR document." } },
        "required": ["lwir"],
    });
    vec![
        bash_tool(),
        function(
            "validate_lwir",
            "Check an LWIR document against the workflow's snapshot; returns {valid, findings}.",
            lwir.clone(),
        ),
        function(
            "submit_lwir",
            "Submit the LWIR document. Valid: the session ends. Invalid: returns {valid: false, findings} to repair.",
            lwir,
        ),
    ]
}

pub fn bash_tool() -> Value {
    function(
        "bash",
        "Run a bash command in the scratch directory; returns {exitCode, stdout, stderr, truncated}.",
        json!({
            "type": "object",
            "properties": { "command": { "type": "string", "description": "The command, run with `bash -c`." } },
            "required": ["command"],
        }),
    )
}

pub fn function(name: &str, description: &str, parameters: Value) -> Value {
    json!({ "type": "function", "function": { "name": name, "description": description, "parameters": parameters } })
}

/// The PlanTask (docs/reference/harness.md; `kind`, `workflowSnapshot`, `input`, `outerLoopContext` for a
/// later cycle), with what the snapshot only hashes: the input and output schemas and
/// the global tools' descriptors.
pub fn plan_task(capabilities: &Capabilities, input: &Value, outer_loop: Option<&OuterLoop>) -> String {
    let definition = &capabilities.definition;
    let mut task = json!({
        "kind": "plan",
        "workflowSnapshot": capabilities.snapshot,
        "input": input,
        "inputSchema": definition.input_schema,
        "outputSchema": definition.output_schema,
        "tools": capabilities.global_tools.iter().map(Capabilities::tool_json).collect::<Vec<_>>(),
    });
    if let Some(outer_loop) = outer_loop {
        task["outerLoopContext"] = outer_loop.task_context();
    }
    serde_json::to_string_pretty(&task).expect("JSON values serialize")
}
