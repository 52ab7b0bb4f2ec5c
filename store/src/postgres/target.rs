//! What a `postgres://` URL names, completed as libpq completes it: what the URL leaves out
//! comes from the `PG*` variables, the password last from the password file (`PGPASSFILE`
//! or `~/.pgpass`). Resolved once, when the URL is read, so that every connection of a
//! store goes to the same place.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How the connection is protected, as libpq's `sslmode` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// Plain TCP.
    Disable,
    /// TLS when the server offers it, without checking its certificate (libpq's default).
    Prefer,
    /// TLS, without checking the certificate.
    Require,
    /// TLS, the certificate signed by a trusted root.
    VerifyCa,
    /// TLS, the certificate signed by a trusted root and naming the host.
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Option<SslMode> {
        Some(match text {
            "disable" => SslMode::Disable,
            // libpq's `allow` tries plain first; TLS when offered is as safe and simpler.
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// A database named by a URL, with everything needed to connect to it.
#[derive(Clone)]
pub struct Target {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: Option<String>,
    pub(crate) dbname: String,
    pub(crate) sslmode: SslMode,
    /// A file of PEM certificates trusted by `verify-*`; `None`: the system's roots.
    pub(crate) sslrootcert: Option<PathBuf>,
    pub(crate) connect_timeout: Duration,
    pub(crate) application_name: String,
    shown: String,
    notes: Vec<String>,
    /// Why the URL cannot be used, for a target kept to report it when first used.
    unusable: Option<String>,
}

// A password must not reach a `{:?}` either.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target").field("url", &self.shown).field("sslmode", &self.sslmode.name()).finish()
    }
}

/// The query parameters a URL may carry (libpq's names).
const PARAMETERS: &[&str] =
    &["host", "port", "user", "password", "dbname", "sslmode", "sslrootcert", "connect_timeout", "application_name"];

impl Target {
    /// Reads a `postgres://` or `postgresql://` URL, completing it from the environment.
    pub fn parse(url: &str) -> Result<Target, String> {
        Target::parse_with(url, &|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// [`Target::parse`] with the environment given (tests set no process variables).
    pub fn parse_with(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Target, String> {
        let masked = mask(url);
        let bad = |why: String| format!("`{masked}` is not a PostgreSQL URL this store can use: {why}");
        let lower = url.get(..13).unwrap_or(url).to_ascii_lowercase();
        let rest = if lower.starts_with("postgresql://") {
            &url[13..]
        } else if lower.starts_with("postgres://") {
            &url[11..]
        } else {
            return Err(bad("it does not begin with `postgres://` or `postgresql://`".to_string()));
        };
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, Some(query)),
            None => (rest, None),
        };
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], Some(&rest[slash + 1..])),
            None => (rest, None),
        };
        // The last `@` ends the user information: a password may hold one unencoded.
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
            None => (None, authority),
        };
        let mut user = None;
        let mut password = None;
        if let Some(userinfo) = userinfo {
            let (u, p) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            if !u.is_empty() {
                user = Some(decode(u).map_err(|why| bad(format!("its user name {why}")))?);
            }
            if let Some(p) = p {
                // The password's own text is never quoted, even when it does not decode.
                password = Some(decode(p).map_err(|_| bad("its password is not valid percent-encoding".to_string()))?);
            }
        }
        let (mut host, mut port) = split_host_port(hostport).map_err(&bad)?;
        let mut dbname = match path {
            Some(p) if !p.is_empty() => Some(decode(p).map_err(|why| bad(format!("its database name {why}")))?),
            _ => None,
        };
        let mut sslmode = None;
        let mut sslrootcert = None;
        let mut connect_timeout = None;
        let mut application_name = None;
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let key = decode(key).map_err(|why| bad(format!("a parameter's name {why}")))?;
            let value = if key == "password" {
                decode(value).map_err(|_| bad("its password is not valid percent-encoding".to_string()))?
            } else {
                decode(value).map_err(|why| bad(format!("the value of `{key}` {why}")))?
            };
            match key.as_str() {
                "host" => host = Some(value),
                "port" => port = Some(value),
                "user" => user = Some(value),
                "password" => password = Some(value),
                "dbname" => dbname = Some(value),
                "sslmode" => sslmode = Some(value),
                "sslrootcert" => sslrootcert = Some(value),
                "connect_timeout" => connect_timeout = Some(value),
                "application_name" => application_name = Some(value),
                other => {
                    return Err(bad(format!(
                        "it has the parameter `{other}`, which this store does not know (it knows {})",
                        PARAMETERS.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
                    )));
                }
            }
        }

        let port_text = port.or_else(|| env("PGPORT")).unwrap_or_else(|| "5432".to_string());
        let port = port_text
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| bad(format!("its port `{port_text}` is not a port number")))?;
        let host = match host.or_else(|| env("PGHOST")) {
            Some(host) if host.contains(',') => {
                return Err(bad("it names several hosts; this store connects to one".to_string()));
            }
            Some(host) => host,
            None => default_host(port),
        };
        let user = match user.or_else(|| env("PGUSER")) {
            Some(user) => user,
            None => {
                os_user().ok_or_else(|| bad("it names no user, and neither PGUSER nor the system does".to_string()))?
            }
        };
        let dbname = dbname.or_else(|| env("PGDATABASE")).unwrap_or_else(|| user.clone());
        let sslmode_text = sslmode.or_else(|| env("PGSSLMODE")).unwrap_or_else(|| "prefer".to_string());
        let sslmode = SslMode::parse(&sslmode_text).ok_or_else(|| {
            bad(format!(
                "its sslmode `{sslmode_text}` is not one of `disable`, `allow`, `prefer`, `require`, `verify-ca`, `verify-full`"
            ))
        })?;
        let sslrootcert = sslrootcert.or_else(|| env("PGSSLROOTCERT"));
        let sslrootcert = match sslrootcert.as_deref() {
            // libpq's word for the system's roots.
            Some("system") => None,
            Some(path) => Some(PathBuf::from(path)),
            None => env("HOME").map(|home| Path::new(&home).join(".postgresql/root.crt")).filter(|p| p.is_file()),
        };
        let timeout_text = connect_timeout.or_else(|| env("PGCONNECT_TIMEOUT"));
        let connect_timeout = match timeout_text {
            None => Duration::from_secs(10),
            Some(text) => match text.trim().parse::<i64>() {
                // libpq: zero or less waits forever; less than 2 s is 2 s.
                Ok(s) if s <= 0 => Duration::from_secs(24 * 3600),
                Ok(s) => Duration::from_secs(s.max(2) as u64),
                Err(_) => return Err(bad(format!("its connect_timeout `{text}` is not a number of seconds"))),
            },
        };
        let application_name = application_name.or_else(|| env("PGAPPNAME")).unwrap_or_else(|| "little".to_string());

        let mut notes = Vec::new();
        if password.is_none() {
            password = env("PGPASSWORD");
        }
        if password.is_none() {
            let file =
                env("PGPASSFILE").map(PathBuf::from).or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")));
            if let Some(file) = file {
                password = pgpass_password(&file, &host, port, &dbname, &user, &mut notes);
            }
        }
        let shown = format!("postgres://{}@{}:{port}/{}", encode(&user), shown_host(&host), encode(&dbname));
        Ok(Target {
            host,
            port,
            user,
            password,
            dbname,
            sslmode,
            sslrootcert,
            connect_timeout,
            application_name,
            shown,
            notes,
            unusable: None,
        })
    }

    /// A URL that [`Target::parse`] refused, kept to say why when it is used: an argument
    /// parser that quotes the value it was given would show its password.
    pub fn unusable(url: &str, why: String) -> Target {
        Target {
            host: String::new(),
            port: 0,
            user: String::new(),
            password: None,
            dbname: String::new(),
            sslmode: SslMode::Disable,
            sslrootcert: None,
            connect_timeout: Duration::ZERO,
            application_name: String::new(),
            shown: mask(url),
            notes: Vec::new(),
            unusable: Some(why),
        }
    }

    /// Why the URL cannot be used, for a target made by [`Target::unusable`].
    pub fn why_unusable(&self) -> Option<&str> {
        self.unusable.as_deref()
    }

    /// The database as shown to a person: `postgres://user@host:port/db`, never a password.
    pub fn display(&self) -> String {
        self.shown.clone()
    }

    /// What reading the URL found that a person should know (a password file ignored).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    pub fn sslmode(&self) -> SslMode {
        self.sslmode
    }

    /// Whether the host is a folder holding the server's Unix socket.
    pub(crate) fn is_socket(&self) -> bool {
        self.host.starts_with('/')
    }
}

/// A URL as it may appear in a message about it: the scheme, the user, and what follows
/// the last `@` up to the query; never the password (nor a `password=` parameter).
fn mask(url: &str) -> String {
    let url = url.split('?').next().unwrap_or(url);
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        // Not a URL at all: nothing in it is known to be a password, but show none of it.
        return "(the URL)".to_string();
    };
    let rest = &url[scheme_end..];
    match rest.rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or("");
            format!("{}{user}@{}", &url[..scheme_end], &rest[at + 1..])
        }
        None => url.to_string(),
    }
}

/// Splits `host:port`, `[v6]:port`, `host`, or nothing.
fn split_host_port(text: &str) -> Result<(Option<String>, Option<String>), String> {
    if text.is_empty() {
        return Ok((None, None));
    }
    let (host, port) = if let Some(inner) = text.strip_prefix('[') {
        let close = inner.find(']').ok_or("its host `[` has no closing `]`")?;
        let host = &inner[..close];
        let after = &inner[close + 1..];
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return Err(format!("`{after}` follows its IPv6 host where a `:port` was expected")),
        };
        (host.to_string(), port)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (decode(host).map_err(|why| format!("its host {why}"))?, Some(port)),
            None => (decode(text).map_err(|why| format!("its host {why}"))?, None),
        }
    };
    let host = if host.is_empty() { None } else { Some(host) };
    Ok((host, port.filter(|p| !p.is_empty()).map(str::to_string)))
}

/// Percent-decoding, as UTF-8.
fn decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or("is not valid percent-encoding")?;
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "is not UTF-8 once decoded".to_string())
}

/// Percent-encodes what would be read as part of the URL's syntax.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn shown_host(host: &str) -> String {
    if host.contains(':') { format!("[{host}]") } else { encode(host) }
}

/// libpq's default on this system: the Unix socket where Debian's server puts it, or in
/// `/tmp`, else TCP to `localhost`.
fn default_host(port: u16) -> String {
    for dir in ["/var/run/postgresql", "/tmp"] {
        if Path::new(dir).join(format!(".s.PGSQL.{port}")).exists() {
            return dir.to_string();
        }
    }
    "localhost".to_string()
}

/// The name of the user this process runs as.
fn os_user() -> Option<String> {
    // SAFETY: getpwuid returns a pointer into static storage or null; the name is copied
    // out at once, before any other call could reuse that storage.
    unsafe {
        let entry = libc::getpwuid(libc::geteuid());
        if entry.is_null() || (*entry).pw_name.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr((*entry).pw_name).to_str().ok().map(str::to_string)
    }
}

/// The password the password file gives for a connection, as libpq reads it: lines of
/// `host:port:database:user:password`, `*` matching anything, `\` escaping `:` and `\`,
/// the first matching line winning; a Unix socket matches `localhost`. A file that its
/// group or others may read is ignored, with a note, as libpq ignores it.
fn pgpass_password(
    file: &Path,
    host: &str,
    port: u16,
    dbname: &str,
    user: &str,
    notes: &mut Vec<String>,
) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let metadata = std::fs::metadata(file).ok()?;
    if !metadata.is_file() {
        return None;
    }
    if metadata.permissions().mode() & 0o077 != 0 {
        notes.push(format!(
            "warning: the password file `{}` may be read by its group or others; it was ignored \
             (its permissions should be u=rw, 0600, or less)",
            file.display()
        ));
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let host = if host.starts_with('/') { "localhost" } else { host };
    let port = port.to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() < 5 {
            continue;
        }
        let matches = |field: &str, value: &str| field == "*" || field == value;
        if matches(&fields[0], host)
            && matches(&fields[1], &port)
            && matches(&fields[2], dbname)
            && matches(&fields[3], user)
        {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

/// The fields of a password file's line, `\` escaping the next character.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("one field at least").push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one field at least").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn parse(url: &str, vars: &[(&str, &str)]) -> Result<Target, String> {
        let vars: BTreeMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Target::parse_with(url, &|name| vars.get(name).cloned())
    }

    #[test]
    fn a_url_gives_every_part_and_shows_no_password() {
        let t = parse(
            "postgresql://me:p%40ss@db.example:5433/runs?sslmode=verify-full&sslrootcert=/ca.pem&connect_timeout=3&application_name=w1",
            &[],
        )
        .unwrap();
        assert_eq!((t.host.as_str(), t.port, t.user.as_str(), t.dbname.as_str()), ("db.example", 5433, "me", "runs"));
        assert_eq!(t.password.as_deref(), Some("p@ss"));
        assert_eq!(t.sslmode, SslMode::VerifyFull);
        assert_eq!(t.sslrootcert, Some(PathBuf::from("/ca.pem")));
        assert_eq!(t.connect_timeout, Duration::from_secs(3));
        assert_eq!(t.application_name, "w1");
        assert_eq!(t.display(), "postgres://me@db.example:5433/runs");
        assert!(!format!("{t:?}").contains("p@ss"));
    }

    #[test]
    fn an_ipv6_host_and_an_unencoded_at_in_the_password() {
        let t = parse("postgres://me:a@b@[::1]:6000/d", &[]).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 6000));
        assert_eq!(t.password.as_deref(), Some("a@b"));
        assert_eq!(t.display(), "postgres://me@[::1]:6000/d");
    }

    #[test]
    fn what_the_url_leaves_out_comes_from_the_environment() {
        let env = [
            ("PGHOST", "envhost"),
            ("PGPORT", "7000"),
            ("PGUSER", "envuser"),
            ("PGPASSWORD", "envpw"),
            ("PGDATABASE", "envdb"),
            ("PGSSLMODE", "require"),
        ];
        let t = parse("postgres://", &env).unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.user.as_str(), t.dbname.as_str()),
            ("envhost", 7000, "envuser", "envdb")
        );
        assert_eq!(t.password.as_deref(), Some("envpw"));
        assert_eq!(t.sslmode, SslMode::Require);
        let t = parse("postgres://u:urlpw@h:1/d?sslmode=disable", &env).unwrap();
        assert_eq!((t.host.as_str(), t.port, t.user.as_str(), t.dbname.as_str()), ("h", 1, "u", "d"));
        assert_eq!((t.password.as_deref(), t.sslmode), (Some("urlpw"), SslMode::Disable));
        let t = parse("postgres://u@h/", &[]).unwrap();
        assert_eq!((t.dbname.as_str(), t.port, t.sslmode), ("u", 5432, SslMode::Prefer));
        assert_eq!(t.connect_timeout, Duration::from_secs(10));
    }

    #[test]
    fn bad_urls_are_refused_clearly_without_the_password() {
        for (url, says) in [
            ("postgres://me:s3cret@h:notaport/d", "port `notaport`"),
            ("postgres://me:s3cret@h/d?sslmode=sometimes", "sslmode `sometimes`"),
            ("postgres://me:s3cret@h/d?colour=blue", "parameter `colour`"),
            ("postgres://me:s3cret@[::1/d", "closing `]`"),
            ("postgres://me:s3cret@h/d?password=s3cret&connect_timeout=soon", "connect_timeout `soon`"),
            ("postgres://me:s3cret%zz@h/d", "password is not valid"),
            ("postgres://me:s3cret@h1,h2/d", "several hosts"),
            ("mysql://me:s3cret@h/d", "does not begin"),
        ] {
            let error = parse(url, &[]).unwrap_err();
            assert!(error.contains(says), "{url}: {error}");
            assert!(!error.contains("s3cret"), "{url}: {error}");
        }
    }

    #[test]
    fn the_password_file_matches_as_libpq_does() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:*:*:*:no\nh:5432:d:me:first\\:half\n*:*:*:me:wild\nlocalhost:*:*:*:socket\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let passfile = file.to_str().unwrap();
        let env = [("PGPASSFILE", passfile)];
        assert_eq!(parse("postgres://me@h/d", &env).unwrap().password.as_deref(), Some("first:half"));
        assert_eq!(parse("postgres://me@h:5433/d", &env).unwrap().password.as_deref(), Some("wild"));
        assert_eq!(parse("postgres://you@h/d", &env).unwrap().password, None);
        let socket = parse("postgres://you@%2Ftmp%2Fsock/d", &env).unwrap();
        assert!(socket.is_socket());
        assert_eq!(socket.password.as_deref(), Some("socket"));
        assert_eq!(parse("postgres://me:given@h/d", &env).unwrap().password.as_deref(), Some("given"));
        // Readable by others: ignored, with a note.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let t = parse("postgres://me@h/d", &env).unwrap();
        assert_eq!(t.password, None);
        assert!(t.notes().iter().any(|n| n.contains("ignored")), "{:?}", t.notes());
        // `~/.pgpass` when PGPASSFILE is unset.
        std::fs::write(dir.path().join(".pgpass"), "*:*:*:*:home\n").unwrap();
        std::fs::set_permissions(dir.path().join(".pgpass"), std::fs::Permissions::from_mode(0o600)).unwrap();
        let home = [("HOME", dir.path().to_str().unwrap())];
        assert_eq!(parse("postgres://me@h/d", &home).unwrap().password.as_deref(), Some("home"));
    }
}
