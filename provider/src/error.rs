//! What can go wrong calling a provider, each as one sentence that never holds the API key.

use std::fmt;
use std::time::Duration;

/// A call that did not produce a [`Completion`](crate::Completion).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderError {
    /// `api_key_env` names a variable that is unset or empty.
    MissingKey { provider: String, variable: String },
    /// HTTP 401 or 403, not retried; `message` is the provider's own (cut to 500 characters).
    Unauthorized { status: u16, message: String },
    /// Any other 4xx but 429 (or an error inside a 200 answer), not retried; the provider's message.
    Rejected { status: u16, message: String },
    /// 429s, 5xx, broken connections, timeouts or cut streams still failing after the last try;
    /// `last` tells the last failure, naming the URL.
    Exhausted { tries: u32, last: String },
    /// Every try failed to connect (refused, or the host name does not resolve) or met a TLS error.
    Unreachable { url: String, reason: String },
    /// Every try ran out of time.
    Timeout { after: Duration },
    /// A response that is not the protocol: bad JSON in a `data:` line, no choices, a non-JSON body.
    Malformed(String),
    /// A response over [`MAX_RESPONSE_BYTES`](crate::MAX_RESPONSE_BYTES), refused.
    TooLarge,
    /// The caller cancelled the call ([`Canceller`](crate::client::Canceller)).
    Cancelled,
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::MissingKey { provider, variable } => write!(
                f,
                "the provider `{provider}` takes its API key from the environment variable {variable}, which is not set or empty"
            ),
            ProviderError::Unauthorized { status: 401, message } => {
                write!(f, "the provider did not accept the API key (HTTP 401): {message}")
            }
            ProviderError::Unauthorized { status, message } => {
                write!(f, "the provider refused access with this API key (HTTP {status}): {message}")
            }
            ProviderError::Rejected { status, message } => {
                write!(f, "the provider rejected the request (HTTP {status}): {message}")
            }
            ProviderError::Exhausted { tries, last } => {
                write!(
                    f,
                    "the provider still failed after {tries} {}: {last}",
                    if *tries == 1 { "try" } else { "tries" }
                )
            }
            ProviderError::Unreachable { url, reason } => write!(f, "cannot reach the provider at {url}: {reason}"),
            ProviderError::Timeout { after } => {
                write!(f, "the provider did not answer in time: timed out after {}", seconds(*after))
            }
            ProviderError::Malformed(what) => {
                write!(f, "the provider's answer is not the Chat Completions protocol: {what}")
            }
            ProviderError::TooLarge => write!(
                f,
                "the provider's answer is over {} MiB and was refused",
                crate::MAX_RESPONSE_BYTES / (1024 * 1024)
            ),
            ProviderError::Cancelled => write!(f, "the call was cancelled"),
        }
    }
}

impl std::error::Error for ProviderError {}

impl ProviderError {
    /// Every text the error carries, for scrubbing a secret out of them.
    pub(crate) fn map_text(self, scrub: impl Fn(String) -> String) -> ProviderError {
        match self {
            ProviderError::Unauthorized { status, message } => {
                ProviderError::Unauthorized { status, message: scrub(message) }
            }
            ProviderError::Rejected { status, message } => ProviderError::Rejected { status, message: scrub(message) },
            ProviderError::Exhausted { tries, last } => ProviderError::Exhausted { tries, last: scrub(last) },
            ProviderError::Unreachable { url, reason } => ProviderError::Unreachable { url, reason: scrub(reason) },
            ProviderError::Malformed(what) => ProviderError::Malformed(scrub(what)),
            other @ (ProviderError::MissingKey { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::TooLarge
            | ProviderError::Cancelled) => other,
        }
    }
}

/// `120s`, `0.5s`, `1.25s`: the shortest exact form in seconds.
pub(crate) fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        let text = format!("{}.{:03}", millis / 1000, millis % 1000);
        format!("{}s", text.trim_end_matches('0'))
    }
}

/// At most `limit` characters of `text`, with `…` when cut.
pub(crate) fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_short() {
        assert_eq!(seconds(Duration::from_secs(120)), "120s");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5s");
        assert_eq!(seconds(Duration::from_millis(1250)), "1.25s");
    }

    #[test]
    fn cut_counts_characters() {
        assert_eq!(cut("ééé", 2), "éé…");
        assert_eq!(cut("ab", 2), "ab");
    }
}
