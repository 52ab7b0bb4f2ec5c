//! The registry: every diagnostic code of docs/reference/diagnostics.md, with its severity, whether it blocks
//! a candidate, and a one-line summary. The explanation pages live in `explain/CODE.md`.

use crate::Severity;

macro_rules! registry {
    ($( $variant:ident = $name:literal, $severity:ident, blocking: $blocking:literal, $summary:literal; )*) => {
        /// A stable diagnostic code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $( $variant, )* }

        impl Code {
            /// Every code, in registry order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The dotted name users see, e.g. `graph.cycle`.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            /// The default severity.
            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$severity, )* }
            }

            /// Whether a diagnostic with this code withholds the candidate.
            pub fn blocking(self) -> bool {
                match self { $( Code::$variant => $blocking, )* }
            }

            /// One line for listings and SARIF rules.
            pub fn summary(self) -> &'static str {
                match self { $( Code::$variant => $summary, )* }
            }

            /// The explanation page: what the code means, a failing and a fixed example.
            pub fn explanation(self) -> &'static str {
                match self { $( Code::$variant => include_str!(concat!("../explain/", $name, ".md")), )* }
            }
        }
    };
}

registry! {
    ParseInvalidJson = "parse.invalid_json", Error, blocking: true, "The file is not valid JSON.";
    ParseDuplicateKey = "parse.duplicate_key", Error, blocking: true, "A key appears twice in one object.";
    ParseUnsupportedFormat = "parse.unsupported_format", Error, blocking: true, "The document's `format` is missing or not one little reads.";
    ParseUnsafeInteger = "parse.unsafe_integer", Warning, blocking: false, "An integer lies outside ±2^53 and cannot be represented exactly by every reader.";

    RequestMissingIdentity = "request.missing_identity", Error, blocking: true, "The draft lacks a tenant, workflow or draft identity, or a revision.";
    RequestTenantMismatch = "request.tenant_mismatch", Error, blocking: true, "The draft's tenant is not the tenant of the context.";
    RequestContextUnavailable = "request.context_unavailable", Info, blocking: false, "No tenant context was given, so the tenant checks did not run.";

    DraftInvalidShape = "draft.invalid_shape", Error, blocking: true, "A draft element has the wrong JSON type or lacks a required field.";
    DraftUnknownField = "draft.unknown_field", Warning, blocking: false, "A key that the draft format does not define.";
    DraftInvalidSuppression = "draft.invalid_suppression", Error, blocking: true, "A suppression names a blocking code; only non-blocking codes can be suppressed.";
    DraftUnknownSuppression = "draft.unknown_suppression", Warning, blocking: false, "A suppression names a code that does not exist.";

    CatalogStaleVersion = "catalog.stale_version", Error, blocking: true, "The draft was authored against another catalog version.";
    CatalogUnknownFamily = "catalog.unknown_family", Error, blocking: true, "A node names a family the catalog does not have.";
    CatalogInvalidConfig = "catalog.invalid_config", Error, blocking: true, "A node's config does not satisfy its family's config schema.";
    CatalogCapabilityUnavailable = "catalog.capability_unavailable", Error, blocking: true, "A family requires a capability the tenant does not have.";
    CatalogMissingIntegration = "catalog.missing_integration", Error, blocking: true, "A config field names an integration the tenant does not have.";
    CatalogDeprecatedFamily = "catalog.deprecated_family", Warning, blocking: false, "A node uses a family the catalog marks deprecated.";

    PackageMalformedBinding = "package.malformed_binding", Error, blocking: true, "A package binding lacks a name, a semver version or a sha256 digest.";
    PackageUnknown = "package.unknown", Error, blocking: true, "A package binding names a package the tenant's registry does not have.";
    PackageStaleBinding = "package.stale_binding", Error, blocking: true, "A package binding's version or digest is not the registry's current one.";

    GraphDuplicateNodeId = "graph.duplicate_node_id", Error, blocking: true, "Two nodes share one id.";
    GraphDuplicateEdgeId = "graph.duplicate_edge_id", Error, blocking: true, "Two edges share one id.";
    GraphDanglingEdge = "graph.dangling_edge", Error, blocking: true, "An edge names a node that does not exist.";
    GraphInvalidPort = "graph.invalid_port", Error, blocking: true, "An edge names a port its node does not have.";
    GraphSelfConnection = "graph.self_connection", Error, blocking: true, "A forward or branch edge connects a node to itself.";
    GraphIncompatiblePortTypes = "graph.incompatible_port_types", Error, blocking: true, "The two ports of an edge share no data type.";
    GraphDuplicateInput = "graph.duplicate_input", Error, blocking: true, "A second edge enters an input port that takes one.";
    GraphMissingRequiredInput = "graph.missing_required_input", Error, blocking: true, "A required input port has no edge.";
    GraphMissingTrigger = "graph.missing_trigger", Error, blocking: true, "The draft has no trigger, so nothing can start it.";
    GraphUnsupportedRouter = "graph.unsupported_router", Error, blocking: true, "A branch edge leaves a node that is not a router.";
    GraphEdgeToVisualNode = "graph.edge_to_visual_node", Warning, blocking: false, "An edge touches a visual-only node; it is dropped.";
    GraphUnreachableNode = "graph.unreachable_node", Warning, blocking: false, "No trigger reaches this node.";
    GraphCycle = "graph.cycle", Error, blocking: true, "Forward or branch edges close a loop.";

    ContractInvalidEnvelope = "contract.invalid_envelope", Error, blocking: true, "A node's contracts are not a valid `workflow-node-contracts/v1` envelope.";
    ContractMappingPortMismatch = "contract.mapping_port_mismatch", Error, blocking: true, "An edge's mapping names other ports than the edge connects.";
    ContractUnknownPort = "contract.unknown_port", Error, blocking: true, "A mapping names a port the node's contract does not declare.";
    ContractIncompatibleTypes = "contract.incompatible_types", Error, blocking: true, "A mapped output and input share no data type.";
    ContractPartialTypeOverlap = "contract.partial_type_overlap", Warning, blocking: false, "A mapped output may emit a type the input does not accept.";
    ContractMissingRequiredInput = "contract.missing_required_input", Error, blocking: true, "A required contract input has no mapped edge.";
    ContractUndeclaredArtifact = "contract.undeclared_artifact", Error, blocking: true, "A mapping names an artifact the producer does not declare.";

    TriggerUnwired = "trigger.unwired", Error, blocking: true, "A trigger has no outgoing edge.";
    TriggerInboundEdge = "trigger.inbound_edge", Error, blocking: true, "An edge enters a trigger.";
    TriggerInvalidSchedule = "trigger.invalid_schedule", Error, blocking: true, "A schedule trigger's cron expression is not five valid fields.";
    TriggerInvalidTimezone = "trigger.invalid_timezone", Error, blocking: true, "A schedule trigger's timezone is not an IANA name.";
    TriggerScheduleTooFrequent = "trigger.schedule_too_frequent", Error, blocking: true, "A schedule fires more often than the tenant's policy allows.";

    BranchMissingLabel = "branch.missing_label", Error, blocking: true, "An edge out of a router is not a labelled branch edge.";
    BranchUnknownLabel = "branch.unknown_label", Error, blocking: true, "A branch edge carries a label the router does not declare.";
    BranchDuplicateLabel = "branch.duplicate_label", Error, blocking: true, "A router declares or wires one label twice.";
    BranchTooFew = "branch.too_few", Error, blocking: true, "A router declares fewer than two branches.";
    BranchUnhandled = "branch.unhandled", Warning, blocking: false, "A router's declared branch has no edge.";

    GateMissingEvidence = "gate.missing_evidence", Error, blocking: true, "An approval gate names no evidence.";
    GateUnknownEvidence = "gate.unknown_evidence", Error, blocking: true, "A gate's evidence is not an artifact of an upstream node.";

    RetryInvalidConfig = "retry.invalid_config", Error, blocking: true, "A retry edge's attempts or backoff are out of range.";
    RetryNotBackward = "retry.not_backward", Error, blocking: true, "A retry edge does not point back to its node or an ancestor.";

    AgentMissingBinding = "agent.missing_binding", Error, blocking: true, "An agent node names no agent binding.";
    AgentBindingMissingRow = "agent.binding_missing_row", Error, blocking: true, "The binding reader has no row for an agent node's binding.";
    AgentBindingNotAccepted = "agent.binding_not_accepted", Error, blocking: true, "An agent binding's status is not `accepted`.";
    AgentBindingStatusUnavailable = "agent.binding_status_unavailable", Warning, blocking: false, "No binding reader was given, so binding status is unknown.";

    LwirInvalidShape = "lwir.invalid_shape", Error, blocking: true, "An LWIR element has the wrong JSON type or lacks a required field.";
    LwirUnknownStepKind = "lwir.unknown_step_kind", Error, blocking: true, "A step `uses` a kind that LWIR does not define.";
    LwirCodeHashMismatch = "lwir.code_hash_mismatch", Error, blocking: true, "A `code.run` file's sha256 is not the hash of its content.";
    LwirMissingEntrypoint = "lwir.missing_entrypoint", Error, blocking: true, "A `code.run` step's entrypoint is not one of its files.";
    LwirInvalidFixer = "lwir.invalid_fixer", Error, blocking: true, "An `onFailure.fixer` is malformed or on a step that is not `code.run`.";
    SchemaInvalid = "schema.invalid", Error, blocking: true, "An embedded schema is not a valid JSON Schema.";
    TemplateSyntax = "template.syntax", Error, blocking: true, "A `{{ … }}` template is malformed.";
    TemplateUnknownReference = "template.unknown_reference", Error, blocking: true, "A template names a step that does not exist.";
    TemplateNotUpstream = "template.not_upstream", Error, blocking: true, "A template reads a step that is not in the transitive `needs`.";
    TemplateUnknownField = "template.unknown_field", Error, blocking: true, "A template reads a field its schema does not declare.";

    BindingNameMismatch = "binding.name_mismatch", Error, blocking: true, "The LWIR's name is not the snapshot's definition id.";
    BindingInputSchemaMismatch = "binding.input_schema_mismatch", Error, blocking: true, "The LWIR's input schema hash is not the snapshot's.";
    BindingOutputSchemaMismatch = "binding.output_schema_mismatch", Error, blocking: true, "The LWIR's output schema hash is not the snapshot's.";
    BindingModelNotPermitted = "binding.model_not_permitted", Error, blocking: true, "A permitted model is not a model slot of the snapshot.";
    BindingToolNotPermitted = "binding.tool_not_permitted", Error, blocking: true, "A permitted tool is not a global tool of the snapshot.";
    BindingStepModelNotAllowed = "binding.step_model_not_allowed", Error, blocking: true, "A step uses a model outside `permissions.models`.";
    BindingStepToolNotAllowed = "binding.step_tool_not_allowed", Error, blocking: true, "A step calls a tool outside `permissions.tools`.";
    BindingSnapshotUnavailable = "binding.snapshot_unavailable", Info, blocking: false, "No definition snapshot was given, so the binding checks did not run.";

    PipelineInputSchemaError = "pipeline.input_schema_error", Error, blocking: true, "The run's input does not satisfy the definition's input schema.";
    PipelineMissingTool = "pipeline.missing_tool", Error, blocking: true, "A global tool of the definition is not in the tool registry.";
    PipelineCapabilityDrift = "pipeline.capability_drift", Error, blocking: true, "The planner manifest differs from the one recorded for this run.";
    PipelineReplayDivergence = "pipeline.replay_divergence", Error, blocking: true, "A resumed session asked for a model or tool call other than the one its event log recorded.";
    DefinitionInvalidShape = "definition.invalid_shape", Error, blocking: true, "A workflow definition element has the wrong JSON type, an unknown key, or lacks a required field.";
    PipelineToolWithoutOutputSchema = "pipeline.tool_without_output_schema", Error, blocking: true, "A `tool.call` step calls a tool that its MCP server lists without an output schema.";
}

impl Code {
    /// Looks a code up by its dotted name.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|code| code.as_str() == name)
    }

    /// The registered code nearest to `name`, for did-you-mean help.
    pub fn nearest(name: &str) -> Option<Code> {
        crate::suggest::nearest(name, Code::ALL.iter().map(|c| c.as_str())).and_then(Code::from_name)
    }
}
