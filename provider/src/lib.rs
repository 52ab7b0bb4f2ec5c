//! An OpenAI-compatible Chat Completions client: the providers of `little.toml`, streamed
//! (server-sent events assembled into one message) or not, with retries; it knows nothing
//! about workflows.

pub mod client;
pub mod config;
mod error;
mod message;
mod sse;
#[cfg(feature = "testing")]
pub mod testing;

pub use client::{Canceller, Client, Completion, MAX_RESPONSE_BYTES, Progress, ProviderError, RetryPolicy};
pub use config::{Config, ProviderConfig, SandboxSettings};
