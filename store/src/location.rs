//! What `--events` names: a JSON Lines file (a path), or a PostgreSQL database (a
//! `postgres://` or `postgresql://` URL), and how it is shown to a person.

use std::path::PathBuf;

use crate::postgres::Target;

/// The store of a run's history.
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
            Ok(Location::Postgres(Target::parse(text)?))
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
}
