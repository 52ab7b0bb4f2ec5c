//! The built-in planner harness (`workflowHarness@1.0.0`, docs/reference/harness.md): an agent loop that
//! calls a model over the OpenAI-compatible API and runs the tools it asks for, one at a
//! time and in order, until a submission is accepted or a bound is hit.
//!
//! Every call goes through the run's event log: `harness.model.called` is durable before
//! the request goes out, `harness.tool_call.started` before the tool runs, and each end
//! after. A resumed session asks the recorded history first ([`replay`]): a recorded end
//! is answered from the log, the one call without an end is made again, and a request
//! that differs from the recorded one stops the run (`pipeline.replay_divergence`). So
//! replay is a pure function of the log, and a crash costs at most the call in flight.
//!
//! - [`session`]: the loop, shared by plan and fix sessions;
//! - [`runner`]: a session from its log to its end: client, files, start, failure;
//! - [`tools`]: `bash`, `validate_lwir`, `submit_lwir`, `submit_fix`;
//! - [`prompt`]: the system prompt, the tool descriptors and the task message;
//! - [`filesystem`]: scratch, memory stores and skills, and the sandbox that sees them;
//! - [`tracked`]: what each call changed in those files, recorded so a run resumes anywhere;
//! - [`replay`]: the recorded session and divergence;
//! - [`observer`]: what a person watching sees.

pub mod filesystem;
pub mod observer;
pub mod prompt;
pub mod replay;
pub mod runner;
pub mod session;
pub mod tools;
pub mod tracked;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use observer::Observer;
pub use session::{SessionEnd, SessionStats};

/// Settings of the built-in harness from the command line.
#[derive(Clone, Debug)]
pub struct HarnessOptions<'a> {
    /// `little.toml` (`--config`); without it, the nearest one from the working directory up.
    pub config: Option<&'a Path>,
    pub sandbox: little_sandbox::Mode,
    /// One bash call's time limit (`--tool-timeout`).
    pub tool_timeout: Duration,
    /// Model calls a session may make (`--max-turns`).
    pub max_turns: u32,
    /// Tokens a session may use, prompt plus completion as the provider reports usage
    /// (`--max-tokens`); `None`: no budget.
    pub max_tokens: Option<u64>,
    /// Where memory stores live (`--memory-root`); default `.little/memory` in the
    /// working directory.
    pub memory_root: Option<&'a Path>,
    /// Bounds of each bash call given on the command line (`--max-memory`, …); each
    /// overrides `[sandbox]` of `little.toml`, which overrides the default.
    pub bounds: little_provider::SandboxSettings,
    /// What a host program gives (providers as values, its own model, a cancellation).
    pub host: crate::host::Host<'a>,
}

impl Default for HarnessOptions<'_> {
    fn default() -> Self {
        HarnessOptions {
            config: None,
            sandbox: little_sandbox::Mode::Bwrap,
            tool_timeout: Duration::from_secs(60),
            max_turns: 40,
            max_tokens: None,
            memory_root: None,
            bounds: little_provider::SandboxSettings::default(),
            host: crate::host::Host::default(),
        }
    }
}

impl<'a> HarnessOptions<'a> {
    /// What a session that will call out needs, checked before anything is written: the
    /// sandbox, and who answers the model: the host's function, else the provider given as
    /// a value, else the provider of `little.toml` (its key read).
    pub fn caller(&self, provider_id: &str) -> Result<crate::host::Caller<'a>, String> {
        use crate::host::Caller;
        little_sandbox::check_available(self.sandbox)?;
        if let Some(model) = self.host.model {
            return Ok(Caller::Host { model, provider_id: provider_id.to_string() });
        }
        if !self.host.providers.is_empty() {
            let given = self.host.providers.iter().find(|p| p.config.id == provider_id).ok_or_else(|| {
                let ids: Vec<String> = self.host.providers.iter().map(|p| format!("`{}`", p.config.id)).collect();
                format!("the model's provider `{provider_id}` is not among the providers given ({})", ids.join(", "))
            })?;
            return Ok(Caller::Provider(little_provider::Client::with_key(&given.config, given.key.clone())));
        }
        client_for(self.config, provider_id).map(Caller::Provider)
    }

    /// The bounds of each bash call: the command line's, else `[sandbox]` of `little.toml`
    /// (`--config`, else the nearest one, if any), else the defaults.
    pub fn limits(&self) -> Result<little_sandbox::Limits, String> {
        let config = match self.config {
            Some(path) => Some(little_provider::Config::load(path)?),
            None => {
                let cwd = std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
                little_provider::Config::discover(&cwd)?
            }
        };
        let from_file = config.map(|c| c.sandbox).unwrap_or_default();
        let chosen = self.bounds.or(from_file);
        let defaults = little_sandbox::Limits::default();
        Ok(little_sandbox::Limits {
            memory: chosen.memory.unwrap_or(defaults.memory),
            processes: chosen.processes.unwrap_or(defaults.processes),
            cpu: chosen.cpu,
            file_size: chosen.file_size,
            scratch: chosen.scratch.unwrap_or(defaults.scratch),
            memory_store: chosen.memory_store.unwrap_or(defaults.memory_store),
        })
    }

    /// Where the memory stores live: `--memory-root`, else `.little/memory`.
    pub fn memory_root(&self) -> PathBuf {
        self.memory_root.map_or_else(|| PathBuf::from(".little").join("memory"), Path::to_path_buf)
    }
}

/// The client of the provider a model names, from `little.toml`.
fn client_for(config: Option<&Path>, provider_id: &str) -> Result<little_provider::Client, String> {
    let config = match config {
        Some(path) => little_provider::Config::load(path)?,
        None => {
            let cwd = std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
            little_provider::Config::discover(&cwd)?.ok_or_else(|| {
                format!(
                    "no `little.toml` in `{}` or above it: the planner's model needs its provider `{provider_id}`; \
                     create little.toml with\n[providers.{provider_id}]\nbase_url = \"https://…/v1\"\n\
                     api_key_env = \"…\"\nor name one with `--config`",
                    cwd.display()
                )
            })?
        }
    };
    let provider = config.provider(provider_id)?;
    little_provider::Client::new(provider).map_err(|e| e.to_string())
}
