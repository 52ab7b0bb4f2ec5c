//! The schema `little` that the store creates and migrates itself: a version table, and
//! each migration applied once, all of them in one transaction under an advisory lock so
//! that two processes migrating at once take turns. A schema newer than this binary, or a
//! table changed by someone else, is refused before anything is written.

use postgres::Client;

use super::connect::describe;
use super::target::Target;

/// The advisory lock key of migrations (`little` in ASCII, as a number).
const MIGRATION_LOCK: i64 = 0x6c69_7474_6c65;

/// The migrations, in order; the schema's version is how many were applied.
const MIGRATIONS: &[&str] = &[
    // 1: runs with their writer's lease, events as their text, blobs, memory files.
    "CREATE TABLE little.runs (
        run_id text PRIMARY KEY,
        epoch bigint NOT NULL,
        owner_host text NOT NULL,
        owner_pid integer NOT NULL,
        lease_until timestamptz NOT NULL
    );
    CREATE TABLE little.events (
        id bigserial PRIMARY KEY,
        run_id text NOT NULL,
        seq bigint NOT NULL,
        kind text NOT NULL,
        body text NOT NULL,
        UNIQUE (run_id, seq)
    );
    CREATE TABLE little.blobs (
        sha256 text PRIMARY KEY,
        bytes bytea NOT NULL
    );
    CREATE TABLE little.memory_files (
        store text NOT NULL,
        path text NOT NULL,
        sha256 text NOT NULL,
        mode integer NOT NULL,
        PRIMARY KEY (store, path)
    );",
];

/// The version this binary writes.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// The columns every table must have, with their types as `information_schema` names them.
const COLUMNS: &[(&str, &str, &str)] = &[
    ("runs", "run_id", "text"),
    ("runs", "epoch", "bigint"),
    ("runs", "owner_host", "text"),
    ("runs", "owner_pid", "integer"),
    ("runs", "lease_until", "timestamp with time zone"),
    ("events", "id", "bigint"),
    ("events", "run_id", "text"),
    ("events", "seq", "bigint"),
    ("events", "kind", "text"),
    ("events", "body", "text"),
    ("blobs", "sha256", "text"),
    ("blobs", "bytes", "bytea"),
    ("memory_files", "store", "text"),
    ("memory_files", "path", "text"),
    ("memory_files", "sha256", "text"),
    ("memory_files", "mode", "integer"),
];

/// The schema's version, `None` when there is no schema `little` (or no version in it).
pub fn version(client: &mut Client, target: &Target) -> Result<Option<i32>, String> {
    let cannot = |e: postgres::Error| format!("cannot read the event store `{}`: {}", target.display(), describe(&e));
    let exists: bool =
        client.query_one("SELECT to_regclass('little.schema_version') IS NOT NULL", &[]).map_err(cannot)?.get(0);
    if !exists {
        return Ok(None);
    }
    let row = client.query_opt("SELECT max(version) FROM little.schema_version", &[]).map_err(cannot)?;
    Ok(row.and_then(|row| row.get::<_, Option<i32>>(0)))
}

/// Refuses a schema newer than this binary.
fn check_not_newer(found: i32, target: &Target) -> Result<(), String> {
    if found > VERSION {
        return Err(format!(
            "the event store `{}` has version {found} of the `little` schema, newer than this `little` knows \
             (version {VERSION}): use a newer `little` with it",
            target.display()
        ));
    }
    Ok(())
}

/// Brings the schema to this binary's version (creating it), then checks its tables.
pub fn migrate(client: &mut Client, target: &Target) -> Result<(), String> {
    let cannot = |e: postgres::Error| {
        format!(
            "cannot create or migrate the `little` schema in the event store `{}`: {}",
            target.display(),
            describe(&e)
        )
    };
    let current = version(client, target)?;
    if let Some(found) = current {
        check_not_newer(found, target)?;
    }
    if current != Some(VERSION) {
        let mut tx = client.transaction().map_err(cannot)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(cannot)?;
        // Another process may have migrated while this one waited for the lock.
        tx.batch_execute(
            "CREATE SCHEMA IF NOT EXISTS little;
             CREATE TABLE IF NOT EXISTS little.schema_version (version integer NOT NULL)",
        )
        .map_err(cannot)?;
        let found: Option<i32> =
            tx.query_one("SELECT max(version) FROM little.schema_version", &[]).map_err(cannot)?.get(0);
        let found = found.unwrap_or(0);
        check_not_newer(found, target)?;
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            tx.batch_execute(migration).map_err(cannot)?;
            let applied = index as i32 + 1;
            tx.execute("INSERT INTO little.schema_version (version) VALUES ($1)", &[&applied]).map_err(cannot)?;
        }
        tx.commit().map_err(cannot)?;
    }
    check_tables(client, target)
}

/// Refuses tables whose columns are missing or of another type than the schema's.
pub fn check_tables(client: &mut Client, target: &Target) -> Result<(), String> {
    let rows = client
        .query(
            "SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns \
             WHERE table_schema = 'little'",
            &[],
        )
        .map_err(|e| format!("cannot read the event store `{}`: {}", target.display(), describe(&e)))?;
    let found: std::collections::BTreeMap<(String, String), String> =
        rows.iter().map(|row| ((row.get(0), row.get(1)), row.get(2))).collect();
    let mut wrong = Vec::new();
    for (table, column, kind) in COLUMNS {
        match found.get(&(table.to_string(), column.to_string())) {
            None => wrong.push(format!("`little.{table}` has no column `{column}`")),
            Some(other) if other != kind => {
                wrong.push(format!("`little.{table}.{column}` is `{other}` where `{kind}` was expected"))
            }
            Some(_) => {}
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the `little` schema in the event store `{}` was changed by something other than `little`: {}; \
             it was left as it is",
            target.display(),
            wrong.join("; ")
        ))
    }
}
