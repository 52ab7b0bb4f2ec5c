//! `little.toml`: the provider tables, every bad file as one `FILE:LINE:COL: message` line, and discovery upwards.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use little_provider::{Config, ProviderConfig};

/// A fresh folder under the system's temporary folder, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new() -> Folder {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("little-provider-config-{}-{}", std::process::id(), COUNT.fetch_add(1, Ordering::SeqCst));
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).unwrap();
        Folder(path)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The error of loading this text, with the file's path replaced by `FILE`.
fn error_of(text: &str) -> String {
    let folder = Folder::new();
    let path = folder.write("little.toml", text);
    let error = Config::load(&path).unwrap_err();
    assert!(!error.contains('\n'), "one line: {error}");
    error.replace(&path.display().to_string(), "FILE")
}

#[test]
fn a_good_file() {
    let folder = Folder::new();
    let path = folder.write(
        "little.toml",
        r#"
[check]
strict = true

[providers.openai]
base_url = "https://api.openai.com/v1/"
api_key_env = "OPENAI_API_KEY"

[providers.local]
base_url = "http://127.0.0.1:8080/v1"
stream = false
timeout = "90s"

[providers.quick]
base_url = "http://localhost:1234/v1"
timeout = "500ms"

[providers.patient]
base_url = "http://localhost:1234/v1"
timeout = 600
"#,
    );
    let config = Config::load(&path).unwrap();
    assert_eq!(config.path, path);
    assert_eq!(config.providers.keys().collect::<Vec<_>>(), ["local", "openai", "patient", "quick"]);
    assert_eq!(
        config.providers["openai"],
        ProviderConfig {
            id: "openai".into(),
            base_url: "https://api.openai.com/v1".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            stream: true,
            timeout: Duration::from_secs(120),
        }
    );
    let local = config.provider("local").unwrap();
    assert!(!local.stream);
    assert_eq!(local.timeout, Duration::from_secs(90));
    assert_eq!(local.api_key_env, None);
    assert_eq!(config.providers["quick"].timeout, Duration::from_millis(500));
    assert_eq!(config.providers["patient"].timeout, Duration::from_secs(600));
}

#[test]
fn a_file_without_providers_has_none() {
    let folder = Folder::new();
    let config = Config::load(&folder.write("little.toml", "[check]\nstrict = true\n")).unwrap();
    assert!(config.providers.is_empty());
}

#[test]
fn a_syntax_error() {
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"https://x/v1\nstream = true\n"),
        "FILE:2:25: invalid basic string, expected `\"`"
    );
}

#[test]
fn a_missing_base_url() {
    assert_eq!(
        error_of("[other]\nx = 1\n\n[providers.openai]\napi_key_env = \"K\"\n"),
        "FILE:4:12: [providers.openai] has no base_url; add e.g. base_url = \"https://api.openai.com/v1\""
    );
}

#[test]
fn wrong_types() {
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"https://x/v1\"\nstream = \"yes\"\n"),
        "FILE:3:10: `stream` must be true or false, not a string"
    );
    assert_eq!(
        error_of("[providers.openai]\nbase_url = 42\n"),
        "FILE:2:12: `base_url` must be a string, not an integer"
    );
    assert_eq!(
        error_of("providers = 3\n"),
        "FILE:1:1: `providers` must be a table of provider tables such as [providers.openai], not an integer"
    );
    assert_eq!(
        error_of("[providers]\nopenai = \"https://x/v1\"\n"),
        "FILE:2:1: `providers.openai` must be a table with at least base_url, not a string"
    );
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"api.openai.com\"\n"),
        "FILE:2:12: base_url must be an http:// or https:// address such as \"https://api.openai.com/v1\", not \"api.openai.com\""
    );
}

#[test]
fn bad_durations() {
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"https://x/v1\"\ntimeout = \"2 minutes\"\n"),
        "FILE:3:11: bad duration \"2 minutes\" for timeout: write \"500ms\", \"90s\", \"5m\" or a number of seconds"
    );
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"https://x/v1\"\ntimeout = -5\n"),
        "FILE:3:11: bad duration -5 for timeout: write \"500ms\", \"90s\", \"5m\" or a number of seconds"
    );
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"https://x/v1\"\ntimeout = \"0s\"\n"),
        "FILE:3:11: timeout must be more than zero"
    );
}

#[test]
fn an_unknown_key_suggests_the_close_one() {
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"https://x/v1\"\napi_key_evn = \"OPENAI_API_KEY\"\n"),
        "FILE:3:1: unknown key `api_key_evn` in [providers.openai]; did you mean `api_key_env`?"
    );
    assert_eq!(
        error_of("[providers.openai]\nbase_url = \"https://x/v1\"\nmodel = \"gpt-4o\"\n"),
        "FILE:3:1: unknown key `model` in [providers.openai]; the keys are base_url, api_key_env, stream, timeout"
    );
}

#[test]
fn an_unreadable_file_is_one_line_naming_it() {
    let folder = Folder::new();
    let missing = folder.0.join("little.toml");
    let error = Config::load(&missing).unwrap_err();
    assert!(error.starts_with(&format!("{}: cannot read it:", missing.display())), "{error}");
    assert!(!error.contains('\n'));
}

#[test]
fn discover_finds_the_nearest_file_upwards() {
    let folder = Folder::new();
    let outer = folder.write("little.toml", "[providers.outer]\nbase_url = \"http://localhost:1/v1\"\n");
    let inner = folder.write("project/little.toml", "[providers.inner]\nbase_url = \"http://localhost:2/v1\"\n");
    let deep = folder.0.join("project/src/nested");
    std::fs::create_dir_all(&deep).unwrap();

    let found = Config::discover(&deep).unwrap().unwrap();
    assert_eq!(found.path, inner);
    assert!(found.providers.contains_key("inner"));
    let found = Config::discover(&folder.0.join("project/src/nested/draft.little")).unwrap().unwrap();
    assert_eq!(found.path, inner, "a file as the start looks from its folder");
    assert_eq!(Config::discover(&folder.0).unwrap().unwrap().path, outer);

    std::fs::write(&inner, "[providers.inner\n").unwrap();
    let error = Config::discover(&deep).unwrap_err();
    assert!(error.starts_with(&format!("{}:1:", inner.display())), "{error}");
}

#[test]
fn discover_without_a_file_is_none() {
    let folder = Folder::new();
    let deep = folder.0.join("a/b");
    std::fs::create_dir_all(&deep).unwrap();
    let above_has_one = folder.0.ancestors().any(|dir| dir.join("little.toml").is_file());
    assert_eq!(Config::discover(&deep).unwrap().is_none(), !above_has_one);
}

#[test]
fn a_missing_provider_names_the_table_to_add() {
    let config =
        Config::parse(Path::new("/x/little.toml"), "[providers.local]\nbase_url = \"http://localhost/v1\"\n").unwrap();
    assert_eq!(
        config.provider("openai").unwrap_err(),
        "the provider `openai` has no table in little.toml (/x/little.toml): add\n[providers.openai]\nbase_url = \"https://…/v1\"\n(the file has [providers.local])"
    );
    let empty = Config::parse(Path::new("/x/little.toml"), "").unwrap();
    assert_eq!(
        empty.provider("my.provider").unwrap_err(),
        "the provider `my.provider` has no table in little.toml (/x/little.toml): add\n[providers.\"my.provider\"]\nbase_url = \"https://…/v1\""
    );
}
