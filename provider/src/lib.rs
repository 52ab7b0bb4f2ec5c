//! An OpenAI-compatible Chat Completions client: the providers of `little.toml`, streamed
//! (server-sent events assembled into one message) or not, with retries; it knows nothing
//! about workflows.
