//! The `[providers.*]` tables and the `[sandbox]` table of `little.toml`, read with every
//! error as one `FILE:LINE:COL: message` line.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The name of the settings file that [`Config::discover`] looks for.
pub const FILE_NAME: &str = "little.toml";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
const KEYS: [&str; 4] = ["base_url", "api_key_env", "stream", "timeout"];

/// One `[providers.ID]` table: where an OpenAI-compatible Chat Completions endpoint lives and how to call it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderConfig {
    /// The table name, e.g. `openai` for `[providers.openai]`.
    pub id: String,
    /// The API root that `/chat/completions` is appended to, without a trailing slash.
    pub base_url: String,
    /// The environment variable holding the API key; `None` sends no `Authorization` header.
    pub api_key_env: Option<String>,
    /// Whether to ask for a server-sent event stream (default true).
    pub stream: bool,
    /// The time limit of one HTTP request, body included (default 120 s).
    pub timeout: Duration,
}

impl ProviderConfig {
    /// A provider with the defaults of a table that gives only `base_url`.
    pub fn new(id: &str, base_url: &str) -> ProviderConfig {
        ProviderConfig {
            id: id.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key_env: None,
            stream: true,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// The keys of `[sandbox]`, each a bound of one bash call.
const SANDBOX_KEYS: [&str; 6] = ["memory", "processes", "cpu", "file_size", "scratch", "memory_store"];

/// The `[sandbox]` table: the bounds of each bash call the harness runs. An absent key
/// leaves the bound to the command line or to its default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Bytes of memory of a call's processes together (`memory = "1GiB"`).
    pub memory: Option<u64>,
    /// Processes and threads (`processes = 256`).
    pub processes: Option<u64>,
    /// CPU time (`cpu = "60s"`).
    pub cpu: Option<Duration>,
    /// Bytes of one file (`file_size = "256MiB"`).
    pub file_size: Option<u64>,
    /// Bytes of the scratch after a call (`scratch = "256MiB"`).
    pub scratch: Option<u64>,
    /// Bytes of each read-write memory store after a call (`memory_store = "256MiB"`).
    pub memory_store: Option<u64>,
}

impl SandboxSettings {
    /// Each bound of `self`, else that of `other`.
    pub fn or(self, other: SandboxSettings) -> SandboxSettings {
        SandboxSettings {
            memory: self.memory.or(other.memory),
            processes: self.processes.or(other.processes),
            cpu: self.cpu.or(other.cpu),
            file_size: self.file_size.or(other.file_size),
            scratch: self.scratch.or(other.scratch),
            memory_store: self.memory_store.or(other.memory_store),
        }
    }
}

/// The providers and the sandbox bounds of one `little.toml`. Other top-level tables belong
/// to other settings and are ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub path: PathBuf,
    pub providers: BTreeMap<String, ProviderConfig>,
    pub sandbox: SandboxSettings,
}

impl Config {
    /// Reads a `little.toml`. Errors are one plain line: `FILE:LINE:COL: message`.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
        Config::parse(path, &text)
    }

    /// Reads the text of a `little.toml` that lives (or would live) at `path`, which errors name.
    pub fn parse(path: &Path, text: &str) -> Result<Config, String> {
        let at = |span: Range<usize>, message: &str| {
            let (line, column) = line_and_column(text, span.start);
            format!("{}:{line}:{column}: {message}", path.display())
        };
        let document = DeTable::parse(text).map_err(|e| {
            let message = one_line(e.message());
            at(e.span().unwrap_or(0..0), &message)
        })?;
        let mut providers = BTreeMap::new();
        let sandbox = match document.get_ref().get_key_value("sandbox") {
            Some((key, value)) => read_sandbox(key, value).map_err(|(span, message)| at(span, &message))?,
            None => SandboxSettings::default(),
        };
        let Some((providers_key, providers_value)) = document.get_ref().get_key_value("providers") else {
            return Ok(Config { path: path.to_path_buf(), providers, sandbox });
        };
        let DeValue::Table(tables) = providers_value.get_ref() else {
            return Err(at(
                providers_key.span(),
                &format!(
                    "`providers` must be a table of provider tables such as [providers.openai], not {}",
                    a_type(providers_value.get_ref())
                ),
            ));
        };
        for (id, table) in tables {
            let provider = read_provider(id, table).map_err(|(span, message)| at(span, &message))?;
            providers.insert(provider.id.clone(), provider);
        }
        Ok(Config { path: path.to_path_buf(), providers, sandbox })
    }

    /// The nearest `little.toml` from `start` (a folder or a file in it) upwards; `Ok(None)` when there is none.
    pub fn discover(start: &Path) -> Result<Option<Config>, String> {
        let start = if start.is_absolute() {
            start.to_path_buf()
        } else {
            let here = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
            here.join(start)
        };
        for folder in start.ancestors() {
            let candidate = folder.join(FILE_NAME);
            if candidate.is_file() {
                return Config::load(&candidate).map(Some);
            }
        }
        Ok(None)
    }

    /// The provider with this id, or an error naming the table to add.
    pub fn provider(&self, id: &str) -> Result<&ProviderConfig, String> {
        self.providers.get(id).ok_or_else(|| {
            let mut message = format!(
                "the provider `{id}` has no table in {FILE_NAME} ({}): add\n[providers.{}]\nbase_url = \"https://…/v1\"",
                self.path.display(),
                toml_key(id)
            );
            if !self.providers.is_empty() {
                let known: Vec<String> = self.providers.keys().map(|k| format!("[providers.{}]", toml_key(k))).collect();
                let _ = write!(message, "\n(the file has {})", known.join(", "));
            }
            message
        })
    }
}

type SpannedError = (Range<usize>, String);

fn read_provider(
    id: &Spanned<std::borrow::Cow<'_, str>>,
    table: &Spanned<DeValue<'_>>,
) -> Result<ProviderConfig, SpannedError> {
    let DeValue::Table(fields) = table.get_ref() else {
        return Err((
            id.span(),
            format!(
                "`providers.{}` must be a table with at least base_url, not {}",
                toml_key(id.get_ref()),
                a_type(table.get_ref())
            ),
        ));
    };
    let mut provider = ProviderConfig::new(id.get_ref(), "");
    let mut base_url = None;
    for (key, value) in fields {
        let name = key.get_ref().as_ref();
        let wrong_type =
            |expected: &str| (value.span(), format!("`{name}` must be {expected}, not {}", a_type(value.get_ref())));
        match name {
            "base_url" => {
                let DeValue::String(url) = value.get_ref() else { return Err(wrong_type("a string")) };
                let url = url.trim().trim_end_matches('/');
                if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains(char::is_whitespace) {
                    return Err((
                        value.span(),
                        format!(
                            "base_url must be an http:// or https:// address such as \"https://api.openai.com/v1\", not \"{url}\""
                        ),
                    ));
                }
                base_url = Some(url.to_string());
            }
            "api_key_env" => {
                let DeValue::String(variable) = value.get_ref() else { return Err(wrong_type("a string")) };
                if variable.is_empty() || variable.contains(['=', '\0']) {
                    return Err((
                        value.span(),
                        format!("api_key_env must name an environment variable, not \"{variable}\""),
                    ));
                }
                provider.api_key_env = Some(variable.to_string());
            }
            "stream" => {
                let DeValue::Boolean(stream) = value.get_ref() else { return Err(wrong_type("true or false")) };
                provider.stream = *stream;
            }
            "timeout" => provider.timeout = read_timeout(value)?,
            _ => {
                let mut message = format!("unknown key `{name}` in [providers.{}]", toml_key(id.get_ref()));
                match closest_key(name) {
                    Some(close) => {
                        let _ = write!(message, "; did you mean `{close}`?");
                    }
                    None => {
                        let _ = write!(message, "; the keys are {}", KEYS.join(", "));
                    }
                }
                return Err((key.span(), message));
            }
        }
    }
    let Some(base_url) = base_url else {
        return Err((
            id.span(),
            format!(
                "[providers.{}] has no base_url; add e.g. base_url = \"https://api.openai.com/v1\"",
                toml_key(id.get_ref())
            ),
        ));
    };
    provider.base_url = base_url;
    Ok(provider)
}

fn read_sandbox(
    key: &Spanned<std::borrow::Cow<'_, str>>,
    table: &Spanned<DeValue<'_>>,
) -> Result<SandboxSettings, SpannedError> {
    let DeValue::Table(fields) = table.get_ref() else {
        return Err((
            key.span(),
            format!(
                "`sandbox` must be a table of bounds such as [sandbox] memory = \"1GiB\", not {}",
                a_type(table.get_ref())
            ),
        ));
    };
    let mut settings = SandboxSettings::default();
    for (key, value) in fields {
        let name = key.get_ref().as_ref();
        match name {
            "memory" => settings.memory = Some(read_size(name, value)?),
            "file_size" => settings.file_size = Some(read_size(name, value)?),
            "scratch" => settings.scratch = Some(read_size(name, value)?),
            "memory_store" => settings.memory_store = Some(read_size(name, value)?),
            "processes" => {
                let count = match value.get_ref() {
                    DeValue::Integer(integer) => u64::from_str_radix(integer.as_str(), integer.radix()).ok(),
                    _ => None,
                };
                match count {
                    Some(count) if count > 0 => settings.processes = Some(count),
                    _ => {
                        return Err((
                            value.span(),
                            "`processes` must be a whole number above zero, such as 256".to_string(),
                        ));
                    }
                }
            }
            "cpu" => settings.cpu = Some(read_duration("cpu", value)?),
            _ => {
                let mut message = format!("unknown key `{name}` in [sandbox]");
                match closest(name, &SANDBOX_KEYS) {
                    Some(close) => {
                        let _ = write!(message, "; did you mean `{close}`?");
                    }
                    None => {
                        let _ = write!(message, "; the keys are {}", SANDBOX_KEYS.join(", "));
                    }
                }
                return Err((key.span(), message));
            }
        }
    }
    Ok(settings)
}

/// A size: a string such as `"256MiB"` or `"1G"`, or a whole number of bytes; above zero.
fn read_size(name: &str, value: &Spanned<DeValue<'_>>) -> Result<u64, SpannedError> {
    let bad = || {
        (value.span(), format!("`{name}` must be a size above zero such as \"256MiB\", \"1GiB\" or a number of bytes"))
    };
    let size = match value.get_ref() {
        DeValue::Integer(integer) => u64::from_str_radix(integer.as_str(), integer.radix()).ok(),
        DeValue::String(text) => parse_size(text),
        _ => None,
    };
    size.filter(|&size| size > 0).ok_or_else(bad)
}

/// A number of bytes, or one with a unit: `K`, `M`, `G`, `T`, also written `KiB`… or
/// `KB`…, all powers of 1024 (`"256MiB"`, `"1G"`).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(end);
    let number: u64 = number.parse().ok()?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    number.checked_mul(scale)
}

fn read_timeout(value: &Spanned<DeValue<'_>>) -> Result<Duration, SpannedError> {
    read_duration("timeout", value)
}

fn read_duration(name: &str, value: &Spanned<DeValue<'_>>) -> Result<Duration, SpannedError> {
    let bad = |shown: &str| {
        (
            value.span(),
            format!("bad duration {shown} for {name}: write \"500ms\", \"90s\", \"5m\" or a number of seconds"),
        )
    };
    let timeout = match value.get_ref() {
        DeValue::Integer(integer) => {
            let seconds =
                u64::from_str_radix(integer.as_str(), integer.radix()).map_err(|_| bad(&integer.to_string()))?;
            Duration::from_secs(seconds)
        }
        DeValue::String(text) => parse_duration(text).ok_or_else(|| bad(&format!("\"{text}\"")))?,
        other => {
            return Err((value.span(), format!("`{name}` must be a duration such as \"90s\", not {}", a_type(other))));
        }
    };
    if timeout.is_zero() {
        return Err((value.span(), format!("{name} must be more than zero")));
    }
    Ok(timeout)
}

/// `"500ms"`, `"90s"`, `"5m"`, `"1h"`, or a bare number of seconds such as `"30"`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let number: u64 = number.parse().ok()?;
    let millis_per_unit = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    Some(Duration::from_millis(number.checked_mul(millis_per_unit)?))
}

fn closest_key(unknown: &str) -> Option<&'static str> {
    closest(unknown, &KEYS)
}

fn closest(unknown: &str, keys: &[&'static str]) -> Option<&'static str> {
    keys.iter()
        .map(|known| (edit_distance(unknown, known), *known))
        .filter(|(distance, known)| *distance <= (known.len() / 3).max(1))
        .min()
        .map(|(_, known)| known)
}

/// Levenshtein distance with adjacent transpositions counted as one edit (`evn` → `env`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    rows[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let substitution = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + substitution);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn a_type(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// A table name as TOML needs it written: bare when it can be, quoted otherwise.
fn toml_key(id: &str) -> String {
    let bare = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { id.to_string() } else { format!("{id:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_duration("30"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("2 minutes"), None);
        assert_eq!(parse_duration("-3s"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("99999999999999999999h"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256MiB"), Some(256 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("1 GiB"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("12k"), Some(12 << 10));
        for bad in ["-1", "1.5G", "lots", "99999999999T", ""] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_sandbox_table_gives_bounds_and_refuses_bad_ones() {
        let path = Path::new("little.toml");
        let text = "[sandbox]\nmemory = \"2GiB\"\nprocesses = 64\ncpu = \"30s\"\nfile_size = 1048576\nscratch = \"1G\"\nmemory_store = \"10MiB\"\n";
        let config = Config::parse(path, text).unwrap();
        assert_eq!(
            config.sandbox,
            SandboxSettings {
                memory: Some(2 << 30),
                processes: Some(64),
                cpu: Some(Duration::from_secs(30)),
                file_size: Some(1 << 20),
                scratch: Some(1 << 30),
                memory_store: Some(10 << 20),
            }
        );
        assert_eq!(Config::parse(path, "").unwrap().sandbox, SandboxSettings::default());
        let cases = [
            (
                "[sandbox]\nmemroy = \"1G\"\n",
                "little.toml:2:1: unknown key `memroy` in [sandbox]; did you mean `memory`?",
            ),
            ("[sandbox]\nmemory = \"lots\"\n", "little.toml:2:10: `memory` must be a size above zero"),
            ("[sandbox]\nscratch = 0\n", "little.toml:2:11: `scratch` must be a size above zero"),
            ("[sandbox]\nprocesses = -3\n", "little.toml:2:13: `processes` must be a whole number above zero"),
            ("[sandbox]\ncpu = \"0s\"\n", "little.toml:2:7: cpu must be more than zero"),
            ("sandbox = 3\n", "little.toml:1:1: `sandbox` must be a table of bounds"),
        ];
        for (text, expected) in cases {
            let err = Config::parse(path, text).unwrap_err();
            assert!(err.starts_with(expected), "{text:?}: {err}");
        }
        let flags = SandboxSettings { memory: Some(1), ..SandboxSettings::default() };
        let file = SandboxSettings { memory: Some(2), processes: Some(3), ..SandboxSettings::default() };
        assert_eq!(
            flags.or(file),
            SandboxSettings { memory: Some(1), processes: Some(3), ..SandboxSettings::default() }
        );
    }

    #[test]
    fn close_keys() {
        assert_eq!(closest_key("api_key_evn"), Some("api_key_env"));
        assert_eq!(closest_key("baseurl"), Some("base_url"));
        assert_eq!(closest_key("streem"), Some("stream"));
        assert_eq!(closest_key("model"), None);
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(line_and_column("a\n€b", 5), (2, 2));
        assert_eq!(line_and_column("ab", 0), (1, 1));
    }
}
