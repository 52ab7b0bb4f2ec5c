//! What `--events` names: a JSON Lines file (a path), or a PostgreSQL database (a
//! `postgres://` or `postgresql://` URL), and how it is shown to a person.

use std::path::PathBuf;

use crate::postgres::Target;

/// The store of a run's history.
// One a command, read once from its arguments: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Location {
    File(PathBuf),
    Postgres(Target),
}

impl Location {
    /// Reads `--events`: a URL with a PostgreSQL scheme is a database, anything else a path.
    pub fn parse(text: &str) -> Result<Location, String> {
        let lower = text.get(..13).unwrap_or(text).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            // A URL that cannot be used says so when the store is first used: an error here
            // would reach an argument parser that quotes the URL, password and all.
            Ok(Location::Postgres(Target::parse(text).unwrap_or_else(|why| Target::unusable(text, why))))
        } else {
            Ok(Location::File(PathBuf::from(text)))
        }
    }

    /// The store as shown in messages: the path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::File(path) => path.display().to_string(),
            Location::Postgres(target) => target.display(),
        }
    }

    /// The file of a file log.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Location::File(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_scheme_is_a_database_and_anything_else_a_path() {
        assert!(matches!(Location::parse("events.jsonl").unwrap(), Location::File(_)));
        assert!(matches!(Location::parse("./postgres://x").unwrap(), Location::File(_)));
        assert!(matches!(Location::parse("postgres://u@localhost/db").unwrap(), Location::Postgres(_)));
        assert!(matches!(Location::parse("PostgreSQL://u@localhost/db").unwrap(), Location::Postgres(_)));
    }

    #[test]
    fn a_password_is_never_shown() {
        let location = Location::parse("postgres://me:s3cret@db.example:5433/runs?sslmode=require").unwrap();
        let shown = location.display();
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("db.example") && shown.contains("runs"), "{shown}");
    }

    #[test]
    fn a_url_that_cannot_be_used_says_why_when_used_and_never_shows_its_password() {
        let location = Location::parse("postgres://me:s3cret@db.example:bad/runs").unwrap();
        assert!(!location.display().contains("s3cret"), "{}", location.display());
        let error = crate::scan(&location, None, |_| Ok(())).unwrap_err();
        assert!(error.contains("port `bad`"), "{error}");
        assert!(!error.contains("s3cret"), "{error}");
    }
}
