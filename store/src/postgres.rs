//! The store in a PostgreSQL database (not built yet: every call says so).

use std::path::PathBuf;

use crate::{Event, Lease, OpenOptions, RunLog, Scan, SharedMemory};

/// A database named by a URL.
#[derive(Clone, Debug)]
pub struct Target {
    shown: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, String> {
        let shown = match (url.find("://"), url.rfind('@')) {
            (Some(scheme), Some(at)) if at > scheme => format!("{}{}", &url[..scheme + 3], &url[at + 1..]),
            _ => url.to_string(),
        };
        Ok(Target { shown })
    }

    pub fn display(&self) -> String {
        self.shown.clone()
    }
}

fn unbuilt() -> String {
    "the PostgreSQL store is not built yet".to_string()
}

pub struct PgRunLog {
    never: std::convert::Infallible,
}

impl PgRunLog {
    pub fn open(_target: &Target, _run_id: &str, _options: OpenOptions<'_>) -> Result<PgRunLog, String> {
        Err(unbuilt())
    }
}

impl RunLog for PgRunLog {
    fn display(&self) -> &str {
        match self.never {}
    }
    fn run_id(&self) -> &str {
        match self.never {}
    }
    fn events(&self) -> &[Event] {
        match self.never {}
    }
    fn run_dir(&self) -> PathBuf {
        match self.never {}
    }
    fn append_if_recordable(&mut self, _: &str, _: serde_json::Value) -> Result<Result<(), String>, String> {
        match self.never {}
    }
    fn put_blob(&mut self, _: &[u8]) -> Result<String, String> {
        match self.never {}
    }
    fn get_blob(&mut self, _: &str) -> Result<Option<Vec<u8>>, String> {
        match self.never {}
    }
    fn shared_memory(&mut self) -> Option<&mut dyn SharedMemory> {
        match self.never {}
    }
    fn lease(&self) -> Option<Lease> {
        match self.never {}
    }
    fn notes(&self) -> &[String] {
        match self.never {}
    }
}

pub fn scan(_: &Target, _: Option<&str>, _: &mut dyn FnMut(Event) -> Result<(), String>) -> Result<Scan, String> {
    Err(unbuilt())
}

pub fn follow(
    _: &Target,
    _: &str,
    _: &dyn Fn(&Event) -> bool,
    _: &mut dyn FnMut(Event) -> Result<(), String>,
) -> Result<(), String> {
    Err(unbuilt())
}
