//! The blocking Chat Completions client: one call, streamed or not, retried with backoff that honours Retry-After.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use ureq::Agent;
use ureq::http::{HeaderMap, Response};

use crate::config::ProviderConfig;
use crate::error::{cut, seconds};
use crate::message::{Answer, StreamAssembly, embedded_error, error_message, from_completion};
use crate::sse::{SseError, StreamEnd, read_data_lines};

pub use crate::error::ProviderError;

/// The most bytes of one answer the client reads (after decompression); more is [`ProviderError::TooLarge`].
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// Enough of an error body for its message; the rest is not read.
const MAX_ERROR_BODY_BYTES: u64 = 64 * 1024;
/// A Retry-After longer than this is taken as this: a provider asking for an hour would hang the caller.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// How often and how patiently failed tries (429, 5xx, broken connections, timeouts, cut streams) are repeated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub max_tries: u32,
    /// The delay before the second try; it doubles for each later one, with full jitter.
    pub base_delay: Duration,
    /// No backoff delay is longer (a Retry-After is capped at 120 s instead).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy { max_tries: 5, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(30) }
    }
}

/// What a call reports while it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress<'a> {
    /// A piece of the assistant's text as it streams in.
    Text(&'a str),
    /// A tool call's name, once known (streaming), before its arguments are complete.
    ToolCall { index: usize, name: &'a str },
    /// A failed try that will be retried after `delay`. Text and tool calls reported by the failed try
    /// (a stream cut halfway) are void: the next try starts the answer again.
    Retrying { try_number: u32, delay: Duration, reason: String },
}

/// The answer of one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The assembled assistant message: `{"role":"assistant","content": string|null, "tool_calls":[{"id","type":"function",
    /// "function":{"name","arguments"}}]}`; `tool_calls` omitted when there are none, ordered by their stream `index`;
    /// `arguments` is the joined string exactly as sent (not parsed).
    pub message: Value,
    /// The provider's `usage` object (prompt_tokens, completion_tokens, total_tokens) or Null when it sent none.
    pub usage: Value,
    /// `finish_reason` of the choice, when given.
    pub finish_reason: Option<String>,
    /// How many HTTP tries this took (1 = no retry).
    pub tries: u32,
    /// Whether the answer came as a stream.
    pub streamed: bool,
}

/// A client of one provider. It is `Sync`: threads may share one and call [`Client::complete`] at once.
pub struct Client {
    config: ProviderConfig,
    /// Goes only into the `Authorization` header; never printed (see the `Debug` impl) and scrubbed from errors.
    key: Option<String>,
    agent: Agent,
    policy: RetryPolicy,
    /// Set once the provider refused a streaming request, so later calls do not ask again.
    streaming_refused: AtomicBool,
    /// xorshift64 state for the backoff jitter; races between threads only mix it more.
    jitter: AtomicU64,
    /// Set by a [`Canceller`]: no try starts or is retried once it is.
    cancelled: Arc<AtomicBool>,
}

/// Ends a client's calls from another thread: the call in flight fails at once with
/// [`ProviderError::Cancelled`] (its connection shut down, not left to time out), and every
/// later call of the client too.
#[derive(Clone)]
pub struct Canceller {
    agent: Agent,
    cancelled: Arc<AtomicBool>,
}

impl Canceller {
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.agent.clone().shutdown();
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.config)
            .field("has_key", &self.key.is_some())
            .field("policy", &self.policy)
            .field("streaming_refused", &self.streaming_refused.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// How one try failed.
enum TryFailure {
    /// Not worth another try.
    Final(ProviderError),
    /// A 400 about streaming to a streaming request: ask again without streaming.
    StreamRefused,
    /// Another try may succeed.
    Transient { reason: String, retry_after: Option<Duration>, cause: Cause },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// No connection: refused, or the host name does not resolve.
    Connect,
    Timeout,
    /// An answer that said "later": 429, 5xx, a cut stream, a broken connection.
    Other,
}

impl Client {
    /// Reads the key from `config.api_key_env` (when set) now; a missing or empty variable is `MissingKey`.
    pub fn new(config: &ProviderConfig) -> Result<Client, ProviderError> {
        let key = match &config.api_key_env {
            None => None,
            Some(variable) => {
                let value = std::env::var(variable).unwrap_or_default();
                let value = value.trim();
                if value.is_empty() {
                    return Err(ProviderError::MissingKey { provider: config.id.clone(), variable: variable.clone() });
                }
                Some(value.to_string())
            }
        };
        Ok(Client::with_key(config, key))
    }

    /// A client whose key is given as a value (a host's provider table): held in memory only,
    /// sent only in the `Authorization` header; `config.api_key_env` is not read.
    pub fn with_key(config: &ProviderConfig, key: Option<String>) -> Client {
        let key = key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty());
        let mut agent_config = Agent::config_builder()
            // 4xx and 5xx bodies carry the provider's message; they are read, not turned into bare errors.
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            // A redirected POST would lose its body; a 3xx is reported so that base_url gets fixed.
            .max_redirects(0)
            .user_agent(concat!("little-provider/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&config.base_url) {
            // A proxy from HTTP_PROXY cannot reach this machine's own servers (ureq honours NO_PROXY otherwise).
            agent_config = agent_config.proxy(None);
        }
        let seed = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32);
        Client {
            config: config.clone(),
            key,
            agent: Agent::new_with_config(agent_config.build()),
            policy: RetryPolicy::default(),
            streaming_refused: AtomicBool::new(false),
            jitter: AtomicU64::new(seed | 1),
            cancelled: Arc::new(AtomicBool::new(false)),
        }
    }

    /// What ends this client's calls from another thread.
    pub fn canceller(&self) -> Canceller {
        Canceller { agent: self.agent.clone(), cancelled: self.cancelled.clone() }
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    pub fn with_policy(self, policy: RetryPolicy) -> Client {
        Client { policy, ..self }
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    pub fn policy(&self) -> RetryPolicy {
        self.policy
    }

    /// POSTs `body` to `{base_url}/chat/completions`. `body` is the request without transport fields: `"stream": true`
    /// and `"stream_options": {"include_usage": true}` are added when the provider streams (and `body` has no
    /// `stream` key), else it is sent as is.
    ///
    /// `progress` hears the text and tool call names of a streamed answer as they arrive (nothing for an answer
    /// that comes whole), and each retry before its wait.
    ///
    /// When every try failed the same way, the error says how: all refused or unresolvable is `Unreachable`, all
    /// timed out is `Timeout`; any other run of failures is `Exhausted`.
    pub fn complete(&self, body: &Value, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Completion, ProviderError> {
        // A provider may echo the key in its message; it never leaves the client, neither in
        // the error nor in the reason of a retry.
        let scrub = |text: String| match &self.key {
            Some(key) => text.replace(key.as_str(), "[the API key]"),
            None => text,
        };
        let mut scrubbed = |event: Progress<'_>| match event {
            Progress::Retrying { try_number, delay, reason } => {
                progress(Progress::Retrying { try_number, delay, reason: scrub(reason) })
            }
            other => progress(other),
        };
        self.complete_unredacted(body, &mut scrubbed).map_err(|error| error.map_text(scrub))
    }

    fn complete_unredacted(
        &self,
        body: &Value,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Completion, ProviderError> {
        let mut streaming = self.config.stream
            && !self.streaming_refused.load(Ordering::Relaxed)
            && body.is_object()
            && body.get("stream").is_none();
        let mut request = request_bytes(body, streaming);
        let max_tries = self.policy.max_tries.max(1);
        let mut http_tries = 0u32;
        let mut failed_tries = 0u32;
        let (mut all_connect, mut all_timeout) = (true, true);
        loop {
            if self.is_cancelled() {
                return Err(ProviderError::Cancelled);
            }
            http_tries += 1;
            let failure = match self.try_once(&request, streaming, progress) {
                Ok((answer, streamed)) => {
                    return Ok(Completion {
                        message: answer.message,
                        usage: answer.usage,
                        finish_reason: answer.finish_reason,
                        tries: http_tries,
                        streamed,
                    });
                }
                Err(failure) => failure,
            };
            // A try the canceller broke off is not the provider failing.
            if self.is_cancelled() {
                return Err(ProviderError::Cancelled);
            }
            match failure {
                TryFailure::Final(error) => return Err(error),
                TryFailure::StreamRefused => {
                    // Not the provider failing: it answered at once, so this try costs nothing of the budget.
                    self.streaming_refused.store(true, Ordering::Relaxed);
                    streaming = false;
                    request = request_bytes(body, false);
                }
                TryFailure::Transient { reason, retry_after, cause } => {
                    // Connection failures leave the URL out of their reason, for `Unreachable` names it itself.
                    let with_url = |reason: String| {
                        if cause == Cause::Connect { format!("{}: {reason}", self.endpoint()) } else { reason }
                    };
                    failed_tries += 1;
                    all_connect &= cause == Cause::Connect;
                    all_timeout &= cause == Cause::Timeout;
                    if failed_tries >= max_tries {
                        return Err(if all_timeout {
                            ProviderError::Timeout { after: self.config.timeout }
                        } else if all_connect {
                            let tries = if http_tries == 1 { "1 try".into() } else { format!("{http_tries} tries") };
                            ProviderError::Unreachable { url: self.endpoint(), reason: format!("{reason} ({tries})") }
                        } else {
                            ProviderError::Exhausted { tries: http_tries, last: with_url(reason) }
                        });
                    }
                    let delay = retry_after.map_or_else(|| self.backoff(failed_tries), |d| d.min(MAX_RETRY_AFTER));
                    progress(Progress::Retrying { try_number: http_tries, delay, reason: with_url(reason) });
                    self.wait(delay);
                }
            }
        }
    }

    /// Sleeps out a backoff delay, cut short by a cancellation.
    fn wait(&self, delay: Duration) {
        let until = std::time::Instant::now() + delay;
        while !self.is_cancelled() {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }

    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.config.base_url)
    }

    /// Full jitter: a random delay between half and all of `base * 2^(n-1)`, capped at `max_delay`.
    fn backoff(&self, failed_tries: u32) -> Duration {
        let doubling = 2u32.saturating_pow(failed_tries.saturating_sub(1));
        let ceiling = self.policy.base_delay.saturating_mul(doubling).min(self.policy.max_delay);
        let floor = ceiling / 2;
        let spread = u64::try_from((ceiling - floor).as_nanos()).unwrap_or(u64::MAX);
        floor + Duration::from_nanos(self.next_random() % spread.saturating_add(1))
    }

    fn next_random(&self) -> u64 {
        let mut x = self.jitter.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.jitter.store(x, Ordering::Relaxed);
        x
    }

    fn try_once(
        &self,
        request: &[u8],
        streaming: bool,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<(Answer, bool), TryFailure> {
        let url = self.endpoint();
        let mut call = self.agent.post(&url).header("content-type", "application/json");
        if streaming {
            call = call.header("accept", "text/event-stream");
        }
        if let Some(key) = &self.key {
            call = call.header("authorization", format!("Bearer {key}"));
        }
        let response = call.send(request).map_err(|error| transport_failure(&url, self.config.timeout, error))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return self.read_answer(&url, response, streaming, progress);
        }
        let headers = response.headers().clone();
        let message = read_error_message(response);
        Err(match status {
            401 | 403 => TryFailure::Final(ProviderError::Unauthorized { status, message }),
            408 | 429 | 500..=599 => TryFailure::Transient {
                reason: format!("{url} answered HTTP {status}: {message}"),
                retry_after: retry_after(&headers),
                cause: Cause::Other,
            },
            400 if streaming && message.to_ascii_lowercase().contains("stream") => TryFailure::StreamRefused,
            300..=399 => {
                let location = header(&headers, "location").unwrap_or("elsewhere");
                TryFailure::Final(ProviderError::Rejected {
                    status,
                    message: format!("{url} redirects to {location}; set base_url to the final address"),
                })
            }
            400..=499 => TryFailure::Final(ProviderError::Rejected { status, message }),
            _ => TryFailure::Final(ProviderError::Malformed(format!("{url} answered HTTP {status}"))),
        })
    }

    fn read_answer(
        &self,
        url: &str,
        response: Response<ureq::Body>,
        streaming: bool,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<(Answer, bool), TryFailure> {
        let content_type = header(response.headers(), "content-type").unwrap_or("").to_ascii_lowercase();
        let declared_length = header(response.headers(), "content-length").and_then(|n| n.trim().parse::<u64>().ok());
        if declared_length.is_some_and(|length| length > MAX_RESPONSE_BYTES as u64) {
            return Err(TryFailure::Final(ProviderError::TooLarge));
        }
        let limited = response.into_body().into_reader().take(MAX_RESPONSE_BYTES as u64 + 1);
        let mut reader = BufReader::with_capacity(64 * 1024, limited);
        let is_json = if content_type.starts_with("text/event-stream") {
            false
        } else if content_type.contains("json") || !streaming {
            true
        } else {
            // No telling content type: a JSON object starts with `{`, a stream with a field name.
            first_byte_after_whitespace(&mut reader).map_err(|e| io_failure(url, self.config.timeout, e))? == Some(b'{')
        };
        if is_json {
            read_whole_answer(url, self.config.timeout, &mut reader).map(|answer| (answer, false))
        } else {
            let event_stream = content_type.starts_with("text/event-stream");
            read_streamed_answer(url, self.config.timeout, &mut reader, event_stream, progress)
                .map(|answer| (answer, true))
        }
    }
}

fn request_bytes(body: &Value, streaming: bool) -> Vec<u8> {
    let mut body = body.clone();
    if streaming && let Value::Object(fields) = &mut body {
        fields.insert("stream".into(), Value::Bool(true));
        match fields.get_mut("stream_options") {
            Some(Value::Object(options)) => {
                options.entry("include_usage").or_insert(Value::Bool(true));
            }
            _ => {
                fields.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
    }
    serde_json::to_vec(&body).expect("a JSON value always serializes")
}

enum StreamStop {
    Malformed(String),
    ProviderError { message: String, retryable: bool },
}

fn read_streamed_answer(
    url: &str,
    timeout: Duration,
    reader: &mut impl BufRead,
    event_stream: bool,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Answer, TryFailure> {
    let mut assembly = StreamAssembly::default();
    let end = read_data_lines(reader, MAX_RESPONSE_BYTES, |data| {
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            StreamStop::Malformed(format!("a data line from {url} is not JSON ({error}): {}", cut(data, 200)))
        })?;
        if let Some(error) = embedded_error(&chunk) {
            return Err(StreamStop::ProviderError { message: error.message, retryable: error.retryable });
        }
        assembly.add_chunk(&chunk, progress);
        Ok(())
    });
    match end {
        Ok(StreamEnd::Done) => Ok(assembly.finish(progress)),
        // An event stream that ends before its first data line is how some servers refuse to
        // stream what was asked (llama.cpp's Python server with tools and `tool_choice`
        // auto answers 200, then closes): ask again without streaming, as for a 400.
        Ok(StreamEnd::Eof { data_lines: 0 }) if event_stream => Err(TryFailure::StreamRefused),
        Ok(StreamEnd::Eof { data_lines }) if event_stream || data_lines > 0 => Err(TryFailure::Transient {
            reason: format!("the stream from {url} was cut before `data: [DONE]` (after {data_lines} data lines)"),
            retry_after: None,
            cause: Cause::Other,
        }),
        Ok(StreamEnd::Eof { .. }) => Err(TryFailure::Final(ProviderError::Malformed(format!(
            "{url} answered a streaming request with neither an event stream nor JSON"
        )))),
        Err(SseError::TooLarge) => Err(TryFailure::Final(ProviderError::TooLarge)),
        Err(SseError::Io(error)) => Err(io_failure(url, timeout, error)),
        Err(SseError::NotUtf8 { line }) => Err(TryFailure::Final(ProviderError::Malformed(format!(
            "line {line} of the stream from {url} is not UTF-8"
        )))),
        Err(SseError::Stopped(StreamStop::Malformed(what))) => Err(TryFailure::Final(ProviderError::Malformed(what))),
        Err(SseError::Stopped(StreamStop::ProviderError { message, retryable: true })) => Err(TryFailure::Transient {
            reason: format!("{url} sent an error in the stream: {message}"),
            retry_after: None,
            cause: Cause::Other,
        }),
        Err(SseError::Stopped(StreamStop::ProviderError { message, retryable: false })) => {
            Err(TryFailure::Final(ProviderError::Rejected { status: 200, message }))
        }
    }
}

fn read_whole_answer(
    url: &str,
    timeout: Duration,
    reader: &mut BufReader<io::Take<ureq::BodyReader<'static>>>,
) -> Result<Answer, TryFailure> {
    // The buffer holds the body's start; kept for an error message should it not be JSON.
    let beginning = match reader.fill_buf() {
        Ok(buffer) => String::from_utf8_lossy(&buffer[..buffer.len().min(200)]).into_owned(),
        Err(error) => return Err(io_failure(url, timeout, error)),
    };
    let parsed: Result<Value, serde_json::Error> = serde_json::from_reader(&mut *reader);
    if reader.get_ref().limit() == 0 {
        return Err(TryFailure::Final(ProviderError::TooLarge));
    }
    let body = match parsed {
        Ok(body) => body,
        Err(error) if error.is_io() => return Err(io_failure(url, timeout, io::Error::from(error))),
        Err(error) if error.is_eof() && !beginning.trim().is_empty() => {
            // A JSON body that stops short is a connection cut before its end.
            return Err(TryFailure::Transient {
                reason: format!("the answer from {url} was cut before its end"),
                retry_after: None,
                cause: Cause::Other,
            });
        }
        Err(error) => {
            return Err(TryFailure::Final(ProviderError::Malformed(format!(
                "the body from {url} is not JSON ({error}): {}",
                cut(beginning.trim(), 200)
            ))));
        }
    };
    if let Some(error) = embedded_error(&body) {
        return Err(if error.retryable {
            TryFailure::Transient {
                reason: format!("{url} answered with an error: {}", error.message),
                retry_after: None,
                cause: Cause::Other,
            }
        } else {
            TryFailure::Final(ProviderError::Rejected { status: 200, message: error.message })
        });
    }
    from_completion(&body).map_err(|what| TryFailure::Final(ProviderError::Malformed(format!("{url}: {what}"))))
}

/// The provider's message from an error response: its `{"error":{"message"}}`, else its text, cut to 500 characters.
fn read_error_message(response: Response<ureq::Body>) -> String {
    let status = response.status();
    let mut bytes = Vec::new();
    // A body that breaks off still has a message in what arrived.
    let _ = response.into_body().into_reader().take(MAX_ERROR_BODY_BYTES).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let from_json = serde_json::from_str::<Value>(&text).ok().and_then(|body| error_message(&body));
    match from_json {
        Some(message) if !message.is_empty() => message,
        _ if text.trim().is_empty() => status.canonical_reason().unwrap_or("no message").to_string(),
        _ => cut(&text.split_whitespace().collect::<Vec<_>>().join(" "), 500),
    }
}

fn transport_failure(url: &str, timeout: Duration, error: ureq::Error) -> TryFailure {
    let transient = |reason: String, cause| TryFailure::Transient { reason, retry_after: None, cause };
    match error {
        ureq::Error::Timeout(_) => transient(format!("{url} timed out after {}", seconds(timeout)), Cause::Timeout),
        ureq::Error::HostNotFound => transient("the host name was not found".into(), Cause::Connect),
        ureq::Error::Io(error) if error.kind() == io::ErrorKind::ConnectionRefused => {
            transient("the host refused the connection".into(), Cause::Connect)
        }
        ureq::Error::ConnectionFailed | ureq::Error::ConnectProxyFailed(_) => {
            transient(format!("could not connect: {error}"), Cause::Connect)
        }
        ureq::Error::Io(error) => io_failure(url, timeout, error),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::Pem(_) => {
            TryFailure::Final(ProviderError::Unreachable {
                url: url.to_string(),
                reason: format!("TLS failed: {error}"),
            })
        }
        ureq::Error::BadUri(_) | ureq::Error::Http(_) | ureq::Error::InvalidProxyUrl => {
            TryFailure::Final(ProviderError::Unreachable { url: url.to_string(), reason: error.to_string() })
        }
        ureq::Error::LargeResponseHeader(..) | ureq::Error::BodyExceedsLimit(_) => {
            TryFailure::Final(ProviderError::TooLarge)
        }
        other => transient(format!("the exchange with {url} failed: {other}"), Cause::Other),
    }
}

/// A read that failed mid-answer: ureq's own timeout comes wrapped in the io::Error.
fn io_failure(url: &str, timeout: Duration, error: io::Error) -> TryFailure {
    match ureq::Error::from(error) {
        ureq::Error::Timeout(_) => TryFailure::Transient {
            reason: format!("{url} timed out after {}", seconds(timeout)),
            retry_after: None,
            cause: Cause::Timeout,
        },
        ureq::Error::Io(error) => TryFailure::Transient {
            reason: format!("the connection to {url} broke: {error}"),
            retry_after: None,
            cause: Cause::Other,
        },
        other => TryFailure::Transient {
            reason: format!("reading the answer from {url} failed: {other}"),
            retry_after: None,
            cause: Cause::Other,
        },
    }
}

fn first_byte_after_whitespace(reader: &mut impl BufRead) -> io::Result<Option<u8>> {
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(None);
        }
        match buffer.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(at) => return Ok(Some(buffer[at])),
            None => {
                let length = buffer.len();
                reader.consume(length);
            }
        }
    }
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// `retry-after-ms` (OpenAI's) or `Retry-After` in seconds; HTTP dates are left to the backoff.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        header(headers, name).and_then(|value| value.trim().parse::<f64>().ok()).filter(|n| n.is_finite() && *n >= 0.0)
    };
    let seconds = number("retry-after-ms").map(|ms| ms / 1000.0).or_else(|| number("retry-after"))?;
    Some(Duration::from_secs_f64(seconds.min(MAX_RETRY_AFTER.as_secs_f64())))
}

/// Whether a URL's host is this machine (`localhost`, 127.0.0.0/8, `[::1]`).
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_and_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host_and_port.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => host_and_port.split(':').next().unwrap_or(""),
    };
    let host = host.to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://localhost/v1"));
        assert!(is_loopback("http://user@[::1]:99/v1"));
        assert!(is_loopback("http://127.8.0.1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("https://127.0.0.1.example.com/v1"));
    }

    #[test]
    fn backoff_stays_within_its_bounds() {
        let config = ProviderConfig::new("x", "http://127.0.0.1:1/v1");
        let client = Client::new(&config).unwrap().with_policy(RetryPolicy {
            max_tries: 40,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        });
        for _ in 0..200 {
            let first = client.backoff(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100), "{first:?}");
            let third = client.backoff(3);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400), "{third:?}");
            let late = client.backoff(40);
            assert!(late >= Duration::from_millis(500) && late <= Duration::from_secs(1), "{late:?}");
        }
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        headers.remove("retry-after-ms");
        headers.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "86400".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(MAX_RETRY_AFTER));
    }

    #[test]
    fn stream_fields_are_added_only_when_streaming() {
        let body = json!({"model": "m", "messages": []});
        let streamed: Value = serde_json::from_slice(&request_bytes(&body, true)).unwrap();
        assert_eq!(
            streamed,
            json!({"model": "m", "messages": [], "stream": true, "stream_options": {"include_usage": true}})
        );
        let plain: Value = serde_json::from_slice(&request_bytes(&body, false)).unwrap();
        assert_eq!(plain, body);
    }
}
