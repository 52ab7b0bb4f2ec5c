//! The planner pipeline in process: `plan`, `fix`, `verify` and `events` over the same
//! pipeline code as the CLI's commands (no process spawned), with providers given as
//! values, a callback that hears every event as it is written (and the model's text as it
//! streams), a host's own model function, and cancellation.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use little_pipeline::host::{Cancel, HostModel};
use little_pipeline::host::{GivenProvider, Host};
use little_pipeline::{Failure, HarnessOptions, Located};
use little_store::{Event, Location};
use serde_json::{Value, json};

use crate::{Error, guarded, located_report};

/// The `type` of the model's streamed text as the callback hears it. It is shown, never
/// stored: the whole message is in `harness.model.responded`, and replay reads only the log.
pub const MODEL_TEXT: &str = "harness.model.text";

/// A provider given as a value, in place of a `little.toml` table and an environment
/// variable. The key is held in memory only: it is sent in the `Authorization` header and
/// appears in no event, message or `Debug` output.
#[derive(Clone)]
pub struct Provider {
    pub id: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub stream: bool,
    pub timeout: Duration,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("id", &self.id)
            .field("base_url", &self.base_url)
            .field("has_api_key", &self.api_key.is_some())
            .field("stream", &self.stream)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// How the built-in harness runs: `little plan`'s and `little fix`'s flags, with their defaults.
#[derive(Clone, Debug)]
pub struct HarnessSettings {
    /// `--config`: a `little.toml`; without it and without `providers`, the nearest one
    /// from the working directory up.
    pub config: Option<PathBuf>,
    /// Providers given as values; when any is given, `little.toml`'s are not read.
    pub providers: Vec<Provider>,
    /// `--sandbox bwrap` (true) or `--sandbox none`.
    pub bwrap: bool,
    pub tool_timeout: Duration,
    pub max_turns: u32,
    /// `--max-tokens`: prompt plus completion tokens, as the provider reports usage.
    pub max_tokens: Option<u64>,
    pub memory_root: Option<PathBuf>,
    pub lock_wait: Duration,
    pub lease: Duration,
}

impl Default for HarnessSettings {
    fn default() -> Self {
        HarnessSettings {
            config: None,
            providers: Vec::new(),
            bwrap: true,
            tool_timeout: Duration::from_secs(60),
            max_turns: 40,
            max_tokens: None,
            memory_root: None,
            lock_wait: Duration::from_secs(30),
            lease: little_pipeline::Store::DEFAULT_LEASE,
        }
    }
}

/// Hears each event (and the model's streamed text) as a JSON value.
pub type OnEvent = Arc<dyn Fn(&Value) + Send + Sync>;

/// What a host hooks into a call; all optional.
#[derive(Clone, Default)]
pub struct Hooks<'a> {
    /// Hears each event as `{ runId, seq, type, payload }`, in order, on the calling
    /// thread: every event the call appends as it is written, and the model's text as it
    /// streams as `{ runId, type: "harness.model.text", payload: { turn, text } }` (no `seq`:
    /// it is not stored).
    pub on_event: Option<OnEvent>,
    pub cancel: Option<&'a Cancel>,
    /// Answers every model call instead of a provider; never called on replay.
    pub model: Option<&'a dyn HostModel>,
}

/// `little plan` without `--planner`.
#[derive(Clone, Debug)]
pub struct PlanCall {
    pub definition: PathBuf,
    pub input: PathBuf,
    pub run_id: String,
    /// `--events`: a JSON Lines log or a PostgreSQL URL.
    pub events: String,
    pub max_attempts: u32,
    pub outer_loop: Option<PathBuf>,
    pub harness: HarnessSettings,
}

/// `little fix`.
#[derive(Clone, Debug)]
pub struct FixCall {
    pub lwir: PathBuf,
    pub step: String,
    pub error: PathBuf,
    pub definition: PathBuf,
    pub run_id: String,
    pub events: String,
    pub harness: HarnessSettings,
}

fn store_of(events: &str, lease: Duration, hooks: &Hooks<'_>) -> Result<little_pipeline::Store, Error> {
    let location = Location::parse(events).map_err(|e| Error::new("input.invalid", e, Some("events")))?;
    let on_event = hooks.on_event.clone().map(|hear| {
        let hook: little_pipeline::host::EventHook = Arc::new(move |event: &Event| hear(&event.to_json()));
        hook
    });
    Ok(little_pipeline::Store { location, lease, work_dir: None, on_event })
}

fn given_providers(settings: &HarnessSettings) -> Vec<GivenProvider> {
    settings
        .providers
        .iter()
        .map(|p| {
            let mut config = little_provider::ProviderConfig::new(&p.id, &p.base_url);
            config.stream = p.stream;
            config.timeout = p.timeout;
            GivenProvider { config, key: p.api_key.clone() }
        })
        .collect()
}

fn options<'a>(settings: &'a HarnessSettings, providers: &'a [GivenProvider], hooks: &Hooks<'a>) -> HarnessOptions<'a> {
    HarnessOptions {
        config: settings.config.as_deref(),
        sandbox: if settings.bwrap { little_sandbox::Mode::Bwrap } else { little_sandbox::Mode::None },
        tool_timeout: settings.tool_timeout,
        max_turns: settings.max_turns,
        max_tokens: settings.max_tokens,
        memory_root: settings.memory_root.as_deref(),
        bounds: Default::default(),
        host: Host { providers, model: hooks.model, cancel: hooks.cancel },
    }
}

/// Hands the model's streamed text to the callback; notes are dropped (a host reads the
/// events).
struct Streamed<'h> {
    run_id: &'h str,
    turn: u64,
    on_event: Option<&'h (dyn Fn(&Value) + Send + Sync)>,
}

impl little_pipeline::harness::Observer for Streamed<'_> {
    fn turn(&mut self, turn: u64, _replayed: bool) {
        self.turn = turn;
    }

    fn text(&mut self, piece: &str) {
        if let Some(hear) = self.on_event {
            hear(&json!({ "runId": self.run_id, "type": MODEL_TEXT, "payload": { "turn": self.turn, "text": piece } }));
        }
    }
}

/// The error of a failed pipeline call. A run that failed carries its `RunFailed` cause
/// code (`cause`), read back from the log (`events`, the store as `--events` names it).
pub fn run_error(failure: Failure, events: &str, run_id: &str) -> Error {
    match failure {
        Failure::Cancelled => Error::new("cancelled", "the call was cancelled; run it again to resume", None),
        Failure::Tool(message) => Error::new("failed", message, None),
        Failure::Blocked(located) => blocked_error("a diagnostic blocks".to_string(), &located, events, run_id),
        Failure::Failed { reason, located } => blocked_error(reason, &located, events, run_id),
    }
}

fn blocked_error(reason: String, located: &[Located], events: &str, run_id: &str) -> Error {
    let cause = last_cause(events, run_id);
    let mut error = Error::new(if cause.is_some() { "run.failed" } else { "blocked" }, reason, None);
    if let Some(d) = located.iter().flat_map(|l| &l.diagnostics).find(|d| d.blocking()) {
        error.message = format!("{}: {} ({})", error.message, d.message, d.code.as_str());
    }
    error.report = Some(Box::new(located_report(located)));
    error.cause = cause;
    error
}

/// The cause code of the run's last `RunFailed`, if it has one.
fn last_cause(events: &str, run_id: &str) -> Option<String> {
    let location = Location::parse(events).ok()?;
    let mut cause = None;
    little_store::scan(&location, Some(run_id), |event| {
        if event.kind == little_pipeline::events::RUN_FAILED {
            cause = event.str("causeCode").map(str::to_string);
        }
        Ok(())
    })
    .ok()?;
    cause
}

/// What a plan that registered gives: the WorkflowVersion's ids, its registration (the
/// document `little plan -o` writes) and what the session made and replayed. The packages'
/// `plan` and `little plan --format json` give the same.
pub fn plan_result(run_id: &str, report: &little_pipeline::PlanReport) -> Value {
    let session = &report.session;
    let lock = &report.registration.lock;
    json!({
        "runId": run_id,
        "workflowVersionId": lock["workflowVersionId"],
        "workflowVersionHash": lock["workflowVersionHash"],
        "lwirVersionId": report.registration.id(),
        "registration": report.registration.document(),
        "submission": report.attempt,
        "session": {
            "modelCalls": session.model_calls,
            "toolCalls": session.tool_runs,
            "modelCallsReplayed": session.model_replayed,
            "toolCallsReplayed": session.tool_replayed,
        },
    })
}

/// The `format` of [`plan_outcome`]'s object.
pub const PLAN_FORMAT: &str = "little-plan/v1";

/// What `little plan --format json` prints for a plan's result (`little schema plan`):
/// `outcome: "registered"` with [`plan_result`]'s fields, or `outcome: "failed"` with the
/// error the packages throw (its code and message, the run's `causeCode`, the diagnostics
/// as a `little-report/v1`).
pub fn plan_outcome(result: Result<Value, Error>, run_id: &str) -> Value {
    let mut object = serde_json::Map::new();
    object.insert("format".into(), PLAN_FORMAT.into());
    let fields = match result {
        Ok(result) => {
            object.insert("outcome".into(), "registered".into());
            // [`plan_result`]'s object.
            result.as_object().cloned().unwrap_or_default()
        }
        Err(error) => {
            object.insert("outcome".into(), "failed".into());
            let mut fields = serde_json::Map::new();
            fields.insert("runId".into(), run_id.into());
            fields.insert("code".into(), error.code.into());
            fields.insert("message".into(), error.message.into());
            if let Some(cause) = error.cause {
                fields.insert("causeCode".into(), cause.into());
            }
            if let Some(report) = error.report {
                fields.insert("report".into(), *report);
            }
            fields
        }
    };
    object.extend(fields);
    Value::Object(object)
}

/// `little plan` in process: the registered WorkflowVersion and its lock (the document
/// `little plan -o` writes, as `registration`), with what the session made and replayed.
pub fn plan(call: &PlanCall, hooks: &Hooks<'_>) -> Result<Value, Error> {
    guarded(|| {
        let store = store_of(&call.events, call.harness.lease, hooks)?;
        let providers = given_providers(&call.harness);
        let request = little_pipeline::PlanRequest {
            definition: &call.definition,
            input: &call.input,
            planner: little_pipeline::Planner::Harness(options(&call.harness, &providers, hooks)),
            run_id: &call.run_id,
            events: &store,
            max_attempts: call.max_attempts,
            outer_loop: call.outer_loop.as_deref(),
            lock_wait: call.harness.lock_wait,
        };
        let mut streamed = Streamed { run_id: &call.run_id, turn: 0, on_event: hooks.on_event.as_deref() };
        let report = little_pipeline::plan(&request, &mut streamed)
            .map_err(|failure| run_error(failure, &call.events, &call.run_id))?;
        Ok(plan_result(&call.run_id, &report))
    })
}

/// `little fix` in process: the repaired LWIR (as text and as JSON), its files and its
/// new WorkflowVersion.
pub fn fix(call: &FixCall, hooks: &Hooks<'_>) -> Result<Value, Error> {
    guarded(|| {
        let store = store_of(&call.events, call.harness.lease, hooks)?;
        let providers = given_providers(&call.harness);
        let request = little_pipeline::fix::FixRequest {
            lwir: &call.lwir,
            step: &call.step,
            error: &call.error,
            definition: &call.definition,
            run_id: &call.run_id,
            events: &store,
            harness: options(&call.harness, &providers, hooks),
            lock_wait: call.harness.lock_wait,
        };
        let mut streamed = Streamed { run_id: &call.run_id, turn: 0, on_event: hooks.on_event.as_deref() };
        let report = little_pipeline::fix::fix(&request, &mut streamed)
            .map_err(|failure| run_error(failure, &call.events, &call.run_id))?;
        let session = &report.session;
        Ok(json!({
            "runId": call.run_id,
            "lwirText": report.lwir_text,
            "lwir": serde_json::from_str::<Value>(&report.lwir_text).unwrap_or(Value::Null),
            "fixedSource": report.fixed_source,
            "workflowVersionId": report.version_id,
            "workflowVersionHash": report.version_hash,
            "session": {
                "modelCalls": session.model_calls,
                "toolCalls": session.tool_runs,
                "modelCallsReplayed": session.model_replayed,
                "toolCallsReplayed": session.tool_replayed,
            },
        }))
    })
}

/// `little verify` in process: `{ lwirVersionId, workflowVersionHash, capabilitiesChecked }`
/// (the ids `little verify` prints), or an error (`verify.failed`, or `blocked` with the drifted
/// capabilities as diagnostics).
pub fn verify(
    lwir: &std::path::Path,
    lock: &std::path::Path,
    definition: Option<&std::path::Path>,
) -> Result<Value, Error> {
    guarded(|| match little_pipeline::verify::verify(lwir, lock, definition) {
        Ok(verified) => Ok(json!({
            "lwirVersionId": verified.id,
            "workflowVersionHash": verified.hash,
            "capabilitiesChecked": verified.capabilities_checked,
        })),
        Err(Failure::Failed { reason, located }) if located.is_empty() => {
            Err(Error::new("verify.failed", reason, None))
        }
        Err(Failure::Tool(message)) => Err(Error::new("input.invalid", message, None)),
        Err(Failure::Cancelled) => Err(Error::new("cancelled", "the call was cancelled", None)),
        Err(Failure::Blocked(located) | Failure::Failed { located, .. }) => {
            let mut error = Error::new("blocked", "not verified: a diagnostic blocks", None);
            if let Some(d) = located.iter().flat_map(|l| &l.diagnostics).find(|d| d.blocking()) {
                error.message = format!("not verified: {} ({})", d.message, d.code.as_str());
            }
            error.report = Some(Box::new(located_report(&located)));
            Err(error)
        }
    })
}

/// The events of a store (a log path or a database URL), of one run or of every run, as
/// `little events --format json` prints them.
pub fn events(store: &str, run_id: Option<&str>) -> Result<Vec<Value>, Error> {
    guarded(|| {
        let location = Location::parse(store).map_err(|e| Error::new("input.invalid", e, Some("events")))?;
        if let Some(path) = location.file()
            && !path.exists()
        {
            return Err(Error::new(
                "input.invalid",
                format!("the event log `{}` does not exist", path.display()),
                Some("events"),
            ));
        }
        let mut events = Vec::new();
        little_store::scan(&location, run_id, |event| {
            events.push(event.to_json());
            Ok(())
        })
        .map_err(|e| Error::new("failed", e, Some("events")))?;
        Ok(events)
    })
}

/// Reads a call's options from the JSON object a host passes (camelCase keys, as the
/// packages document them); an unknown key or a value of the wrong type is an
/// `input.invalid` error naming the key.
struct Options<'v> {
    object: &'v serde_json::Map<String, Value>,
    known: &'static [&'static str],
}

const HARNESS_KEYS: [&str; 9] =
    ["config", "providers", "sandbox", "toolTimeout", "maxTurns", "maxTokens", "memoryRoot", "lockWait", "lease"];

impl<'v> Options<'v> {
    fn new(value: &'v Value, known: &'static [&'static str]) -> Result<Options<'v>, Error> {
        let object =
            value.as_object().ok_or_else(|| Error::new("input.invalid", "the options must be an object", None))?;
        if let Some(key) = object.keys().find(|k| !known.contains(&k.as_str()) && !HARNESS_KEYS.contains(&k.as_str())) {
            let help = little_diagnostics::suggest::did_you_mean(key, known.iter().chain(&HARNESS_KEYS).copied())
                .map(|h| format!("; {h}"))
                .unwrap_or_default();
            return Err(Error::new("input.invalid", format!("unknown option `{key}`{help}"), Some(key)));
        }
        Ok(Options { object, known })
    }

    fn wrong(key: &str, what: &str) -> Error {
        Error::new("input.invalid", format!("the option `{key}` must be {what}"), Some(key))
    }

    fn text(&self, key: &str) -> Result<Option<String>, Error> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(Options::wrong(key, "a string")),
        }
    }

    fn required(&self, key: &str) -> Result<String, Error> {
        debug_assert!(self.known.contains(&key));
        self.text(key)?.ok_or_else(|| Error::new("input.invalid", format!("the option `{key}` is required"), Some(key)))
    }

    fn count(&self, key: &str, default: u32, most: u32) -> Result<u32, Error> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(value) => value
                .as_u64()
                .filter(|n| (1..=u64::from(most)).contains(n))
                .map(|n| n as u32)
                .ok_or_else(|| Options::wrong(key, &format!("a whole number from 1 to {most}"))),
        }
    }

    /// A duration: a number of seconds, or text such as `90s`, `500ms`, `5m`.
    fn duration(&self, key: &str, default: Duration) -> Result<Duration, Error> {
        duration_of(self.object.get(key), key, default)
    }

    fn harness(&self) -> Result<HarnessSettings, Error> {
        let defaults = HarnessSettings::default();
        let bwrap = match self.text("sandbox")?.as_deref() {
            None | Some("bwrap") => true,
            Some("none") => false,
            Some(_) => return Err(Options::wrong("sandbox", "`bwrap` or `none`")),
        };
        Ok(HarnessSettings {
            config: self.text("config")?.map(PathBuf::from),
            providers: providers_of(self.object.get("providers"))?,
            bwrap,
            tool_timeout: self.duration("toolTimeout", defaults.tool_timeout)?,
            max_turns: self.count("maxTurns", defaults.max_turns, 1000)?,
            max_tokens: match self.object.get("maxTokens") {
                None | Some(Value::Null) => None,
                Some(value) => Some(
                    value
                        .as_u64()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| Options::wrong("maxTokens", "a whole number from 1"))?,
                ),
            },
            memory_root: self.text("memoryRoot")?.map(PathBuf::from),
            lock_wait: self.duration("lockWait", defaults.lock_wait)?,
            lease: self.duration("lease", defaults.lease)?,
        })
    }
}

fn duration_of(value: Option<&Value>, key: &str, default: Duration) -> Result<Duration, Error> {
    let what = "a number of seconds or a duration such as `90s`, `500ms`, `5m`";
    match value {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| Options::wrong(key, what)),
        Some(Value::String(text)) => {
            little_provider::config::parse_duration(text).ok_or_else(|| Options::wrong(key, what))
        }
        Some(_) => Err(Options::wrong(key, what)),
    }
}

/// `providers`: `{ ID: { baseUrl, apiKey?, stream?, timeout? } }`, as `little.toml`'s tables.
fn providers_of(value: Option<&Value>) -> Result<Vec<Provider>, Error> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
    let table = value
        .as_object()
        .ok_or_else(|| Options::wrong("providers", "an object of providers by id: { ID: { baseUrl, apiKey } }"))?;
    let mut providers = Vec::new();
    for (id, provider) in table {
        let key = format!("providers.{id}");
        let fields = provider
            .as_object()
            .ok_or_else(|| Options::wrong(&key, "an object { baseUrl, apiKey?, stream?, timeout? }"))?;
        if let Some(unknown) = fields.keys().find(|k| !["baseUrl", "apiKey", "stream", "timeout"].contains(&k.as_str()))
        {
            return Err(Error::new(
                "input.invalid",
                format!("unknown key `{unknown}` in `{key}` (keys: baseUrl, apiKey, stream, timeout)"),
                Some(&key),
            ));
        }
        let base_url = fields
            .get("baseUrl")
            .and_then(Value::as_str)
            .ok_or_else(|| Options::wrong(&format!("{key}.baseUrl"), "a URL (`https://…/v1`)"))?;
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(Options::wrong(&format!("{key}.baseUrl"), "an http:// or https:// URL"));
        }
        // The key is never repeated in a message: only its place is named.
        let api_key = match fields.get("apiKey") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(_) => return Err(Options::wrong(&format!("{key}.apiKey"), "a string")),
        };
        let stream = match fields.get("stream") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Options::wrong(&format!("{key}.stream"), "true or false")),
        };
        let timeout = duration_of(fields.get("timeout"), &format!("{key}.timeout"), Duration::from_secs(120))?;
        providers.push(Provider { id: id.clone(), base_url: base_url.to_string(), api_key, stream, timeout });
    }
    Ok(providers)
}

impl PlanCall {
    /// A plan call from a host's options: `{ definition, input, runId, events,
    /// maxAttempts?, outerLoop?, providers?, config?, sandbox?, toolTimeout?, maxTurns?,
    /// memoryRoot?, lockWait?, lease? }`.
    pub fn from_json(options: &Value) -> Result<PlanCall, Error> {
        let o = Options::new(options, &["definition", "input", "runId", "events", "maxAttempts", "outerLoop"])?;
        Ok(PlanCall {
            definition: o.required("definition")?.into(),
            input: o.required("input")?.into(),
            run_id: o.required("runId")?,
            events: o.required("events")?,
            max_attempts: o.count("maxAttempts", 3, 20)?,
            outer_loop: o.text("outerLoop")?.map(PathBuf::from),
            harness: o.harness()?,
        })
    }
}

impl FixCall {
    /// A fix call from a host's options: `{ lwir, step, error, definition, runId, events,
    /// … }` with the harness options of [`PlanCall::from_json`].
    pub fn from_json(options: &Value) -> Result<FixCall, Error> {
        let o = Options::new(options, &["lwir", "step", "error", "definition", "runId", "events"])?;
        Ok(FixCall {
            lwir: o.required("lwir")?.into(),
            step: o.required("step")?,
            error: o.required("error")?.into(),
            definition: o.required("definition")?.into(),
            run_id: o.required("runId")?,
            events: o.required("events")?,
            harness: o.harness()?,
        })
    }
}
