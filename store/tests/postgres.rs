//! The database store against a real server: `LITTLE_TEST_POSTGRES_URL` names it (a role
//! that may create databases; `scripts/postgres-server.sh start` makes one). Without it
//! these tests say so and pass, except under CI (`CI=true`), where they fail. Each test
//! works in a database of its own, created and dropped by it, since they run in parallel
//! against one server. Where a behaviour is the file store's too, the test runs on both.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use little_store::postgres::{PgRunLog, Target, connect};
use little_store::{Event, Location, OpenOptions, RunLog, follow, open_run, scan};
use serde_json::{Value, json};

/// The server's URL, or `None` (told) when the tests cannot run here.
fn server() -> Option<String> {
    match std::env::var("LITTLE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "LITTLE_TEST_POSTGRES_URL is unset under CI: .ci/run starts scripts/postgres-server.sh for these tests"
                );
            }
            eprintln!("skipped: LITTLE_TEST_POSTGRES_URL is unset (scripts/postgres-server.sh start prints one)");
            None
        }
    }
}

/// A database of one test's own, dropped when the test ends.
struct Db {
    admin: String,
    name: String,
    url: String,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl Db {
    fn new() -> Option<Db> {
        let admin = server()?;
        let name = format!(
            "little_t_{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst),
            Instant::now().elapsed().subsec_nanos() % 1000
        );
        let mut client = connect(&Target::parse(&admin).unwrap()).unwrap();
        client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let url = with_database(&admin, &name);
        Some(Db { admin, name, url })
    }

    fn target(&self) -> Target {
        Target::parse(&self.url).unwrap()
    }

    fn location(&self) -> Location {
        Location::parse(&self.url).unwrap()
    }

    /// A connection of its own, to look at or change the database behind the store's back.
    fn sql(&self) -> postgres::Client {
        connect(&self.target()).unwrap()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Ok(target) = Target::parse(&self.admin)
            && let Ok(mut client) = connect(&target)
        {
            let _ = client.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
        }
    }
}

/// The URL with another database (and any query kept).
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let scheme_end = base.find("://").unwrap() + 3;
    let host_end = base[scheme_end..].find('/').map_or(base.len(), |i| scheme_end + i);
    let mut out = format!("{}/{name}", &base[..host_end]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// The URL with a parameter added.
fn with_param(url: &str, param: &str) -> String {
    format!("{url}{}{param}", if url.contains('?') { '&' } else { '?' })
}

fn options(lock_wait: Duration, lease: Duration) -> OpenOptions<'static> {
    OpenOptions { lock_wait, lease, on_wait: Box::leak(Box::new(|_: &str| {})), on_lost: None, work_dir: None }
}

fn open(target: &Target, run: &str) -> Result<PgRunLog, String> {
    PgRunLog::open(target, run, options(Duration::ZERO, Duration::from_secs(30)))
}

/// A file store in a folder of its own.
fn file_location() -> (tempfile::TempDir, Location) {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::File(dir.path().join("events.jsonl"));
    (dir, location)
}

/// Both stores, where the server is there; the file store alone otherwise.
fn stores() -> Vec<(Option<Db>, Option<tempfile::TempDir>, Location)> {
    let (dir, file) = file_location();
    let mut all = vec![(None, Some(dir), file)];
    if let Some(db) = Db::new() {
        let location = db.location();
        all.push((Some(db), None, location));
    }
    all
}

/// Payloads whose text a store must keep exactly: keys in the order written, `1.0`, big
/// and small numbers, escapes.
fn tricky_payloads() -> Vec<Value> {
    [
        r#"{"z":1,"a":2,"m":{"y":[1.0,-0.0,2.5e-8],"b":null}}"#,
        r#"{"big":1e300,"huge":123456789012345678901234567890,"small":5e-324,"neg":-9223372036854775808}"#,
        r#"{"text":"é ☃ \" \\ \n \u0001 \ud83d\ude00","empty":{},"list":[]}"#,
        r#"{"u64":18446744073709551615,"one":1.0}"#,
    ]
    .iter()
    .map(|text| serde_json::from_str(text).unwrap())
    .collect()
}

#[test]
fn events_round_trip_byte_exact_in_both_stores() {
    for (db, _dir, location) in stores() {
        let mut log = open_run(&location, "trip", options(Duration::ZERO, Duration::from_secs(30))).unwrap();
        let mut written = Vec::new();
        for payload in tricky_payloads() {
            written.push(log.append("kind.tricky", payload).unwrap().to_text());
        }
        drop(log);
        let mut read = Vec::new();
        scan(&location, Some("trip"), |event| {
            read.push(event.to_text());
            Ok(())
        })
        .unwrap();
        assert_eq!(read, written, "{}", location.display());
        let log = open_run(&location, "trip", options(Duration::ZERO, Duration::from_secs(30))).unwrap();
        assert_eq!(log.events().iter().map(Event::to_text).collect::<Vec<_>>(), written);
        assert_eq!(log.next_seq(), 5);
        drop(log);
        if let Some(db) = db {
            // The database holds exactly the text a file log would hold, as text.
            let rows =
                db.sql().query("SELECT body, kind FROM little.events WHERE run_id = 'trip' ORDER BY seq", &[]).unwrap();
            let bodies: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
            assert_eq!(bodies, written);
            assert!(bodies[0].starts_with(r#"{"runId":"trip","seq":1,"type":"kind.tricky","payload":{"z":1,"a":2"#));
            assert!(bodies[3].contains(r#""one":1.0"#), "{}", bodies[3]);
        }
    }
}

/// The events of `run` as a reader of the store sees them.
fn durable(location: &Location, run: &str) -> Vec<(u64, String)> {
    let mut seen = Vec::new();
    scan(location, Some(run), |event| {
        seen.push((event.seq, event.kind.clone()));
        Ok(())
    })
    .unwrap();
    seen
}

#[test]
fn events_appended_unsynced_are_in_the_store_at_once_and_synced_by_the_next_append() {
    for (_db, _dir, location) in stores() {
        let shown = location.display();
        let mut log = open_run(&location, "ends", options(Duration::ZERO, Duration::from_secs(30))).unwrap();
        log.append("kind.called", json!({})).unwrap();
        log.append_unsynced("kind.answered", json!({ "n": 1 })).unwrap();
        log.append_unsynced("kind.ended", json!({ "n": 2 })).unwrap();
        // A reader sees them at once: the writer's crash would not lose them.
        assert_eq!((log.unsynced(), log.next_seq()), (2, 4), "{shown}");
        let kinds = ["kind.called", "kind.answered", "kind.ended", "kind.called"].map(String::from);
        let expected: Vec<(u64, String)> = (1..).zip(kinds).collect();
        assert_eq!(durable(&location, "ends"), expected[..3], "{shown}");
        log.append("kind.called", json!({})).unwrap();
        assert_eq!(log.unsynced(), 0, "{shown}");
        assert_eq!(durable(&location, "ends"), expected, "{shown}");
        // An unreadable event is refused unsynced as appended, and nothing is added.
        let deep = (0..300).fold(json!(0), |inner, _| json!([inner]));
        assert!(log.append_unsynced("kind.deep", deep).is_err(), "{shown}");
        assert_eq!(log.events().len(), 4, "{shown}");
        log.append_unsynced("kind.answered", json!({ "n": 5 })).unwrap();
        log.sync().unwrap();
        assert_eq!(log.unsynced(), 0, "{shown}");
        log.append_unsynced("kind.ended", json!({ "n": 6 })).unwrap();
        drop(log);
        let log = open_run(&location, "ends", options(Duration::ZERO, Duration::from_secs(30))).unwrap();
        assert_eq!(log.events().iter().map(|e| e.u64("n")).collect::<Vec<_>>()[4..], [Some(5), Some(6)], "{shown}");
    }
}

#[test]
fn an_unsynced_event_the_server_lost_is_written_again_before_the_next() {
    let Some(db) = Db::new() else { return };
    let mut log = open(&db.target(), "lost-end").unwrap();
    log.append("kind.called", json!({})).unwrap();
    let answer = log.append_unsynced("kind.answered", json!({ "n": 2 })).unwrap().to_text();
    // What a server that crashed before flushing that commit comes back with.
    db.sql().execute("DELETE FROM little.events WHERE run_id = 'lost-end' AND seq = 2", &[]).unwrap();
    log.append("kind.called", json!({ "n": 3 })).unwrap();
    let rows =
        db.sql().query("SELECT seq, body FROM little.events WHERE run_id = 'lost-end' ORDER BY seq", &[]).unwrap();
    let seqs: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(seqs, [1, 2, 3], "no gap: the lost answer is written again, exactly");
    assert_eq!(rows[1].get::<_, String>(1), answer);
}

#[test]
fn one_append_takes_little_time() {
    let Some(db) = Db::new() else { return };
    let mut log = open(&db.target(), "timed").unwrap();
    let started = Instant::now();
    for i in 0..200 {
        log.append("kind.timed", json!({ "i": i })).unwrap();
    }
    let each = started.elapsed() / 200;
    eprintln!("one append (a transaction: the fence, the insert, the notify, the commit): {each:?}");
    assert!(each < Duration::from_millis(200), "{each:?}");
}

#[test]
fn a_second_opener_waits_then_is_refused_naming_the_holder() {
    let Some(db) = Db::new() else { return };
    let target = db.target();
    let first = open(&target, "held").unwrap();
    let mut told = Vec::new();
    let started = Instant::now();
    let error = PgRunLog::open(
        &target,
        "held",
        OpenOptions {
            lock_wait: Duration::from_millis(700),
            lease: Duration::from_secs(30),
            on_wait: &mut |m| told.push(m.to_string()),
            on_lost: None,
            work_dir: None,
        },
    )
    .err()
    .expect("refused");
    assert!(started.elapsed() >= Duration::from_millis(700), "it waited");
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(error.contains(&format!("pid {}", std::process::id())), "{error}");
    assert!(error.contains("lease ends at") && error.contains("held"), "{error}");
    // Another run of the same store is not held.
    assert!(open(&target, "other").is_ok());
    drop(first);
}

#[test]
fn the_lease_is_renewed_while_the_run_is_open() {
    let Some(db) = Db::new() else { return };
    let target = db.target();
    let mut log = PgRunLog::open(&target, "renewed", options(Duration::ZERO, Duration::from_secs(2))).unwrap();
    std::thread::sleep(Duration::from_secs(4));
    let error = open(&target, "renewed").err().expect("still held, twice its lease later");
    assert!(error.contains("is being written by"), "{error}");
    log.append("kind.x", json!({})).unwrap();
    assert!(!log.lease().unwrap().lost());
}

#[test]
fn a_clean_close_lets_a_waiting_worker_in_at_once() {
    let Some(db) = Db::new() else { return };
    let target = db.target();
    let mut first = open(&target, "handover").unwrap();
    first.append("kind.first", json!({})).unwrap();
    let waiter_target = target.clone();
    let waiter = std::thread::spawn(move || {
        let log = PgRunLog::open(&waiter_target, "handover", options(Duration::from_secs(20), Duration::from_secs(30)));
        (Instant::now(), log.map(|l| (l.epoch(), l.events().len())))
    });
    std::thread::sleep(Duration::from_millis(500));
    let dropped = Instant::now();
    drop(first);
    let (got_in, opened) = waiter.join().unwrap();
    assert_eq!(opened.unwrap(), (2, 1), "the waiter took the run with the next epoch and replays its event");
    assert!(got_in.duration_since(dropped) < Duration::from_secs(3), "not after the 30 s lease");
}

#[test]
fn a_close_after_a_cut_connection_still_lets_the_next_worker_in() {
    let Some(db) = Db::new() else { return };
    let hostport = host_port(&db);
    let proxy = Proxy::new("127.0.0.1", hostport.parse().unwrap());
    let through = with_param(
        &db.url.replacen(&format!("@{hostport}/"), &format!("@127.0.0.1:{}/", proxy.port), 1),
        "sslmode=disable",
    );
    let first = open(&Target::parse(&through).unwrap(), "cut-close").unwrap();
    proxy.sever(Duration::ZERO);
    std::thread::sleep(Duration::from_millis(100));
    drop(first);
    assert!(open(&db.target(), "cut-close").is_ok(), "released on a new connection, not left for 30 s");
}

#[test]
fn after_expiry_a_takeover_fences_the_old_writer_out() {
    let Some(db) = Db::new() else { return };
    let target = db.target();
    let lost = Arc::new(AtomicBool::new(false));
    let flag = lost.clone();
    let mut old = PgRunLog::open(
        &target,
        "taken",
        OpenOptions {
            lock_wait: Duration::ZERO,
            lease: Duration::from_secs(3),
            on_wait: &mut |_| {},
            on_lost: Some(Box::new(move || flag.store(true, Ordering::SeqCst))),
            work_dir: None,
        },
    )
    .unwrap();
    old.append("kind.a", json!({})).unwrap();
    // The old writer stalls past its lease (as if paused): its expiry is set in the past,
    // and the new worker takes over before the old one's renewer runs again.
    let mut sql = db.sql();
    let new = loop {
        sql.execute("UPDATE little.runs SET lease_until = now() - interval '1 second' WHERE run_id = 'taken'", &[])
            .unwrap();
        if let Ok(new) = open(&target, "taken") {
            break new;
        }
    };
    assert_eq!(new.epoch(), old.epoch() + 1);
    assert_eq!(new.events().len(), 1, "the new writer replays what the old one wrote");
    // The old writer's renewer finds another epoch and says so.
    let started = Instant::now();
    while !old.lease().unwrap().lost() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let lease = old.lease().unwrap();
    assert!(lease.lost(), "the renewer noticed");
    assert!(lost.load(Ordering::SeqCst), "on_lost ran");
    assert!(lease.taken_by().unwrap().contains("epoch 2"), "{:?}", lease.taken_by());
    let error = old.append("kind.b", json!({})).unwrap_err();
    assert!(error.contains("taken over") && error.contains("stops"), "{error}");
    drop(old);
    // The old writer's drop did not release the new writer's lease.
    let until_left: f64 = sql
        .query_one(
            "SELECT extract(epoch FROM lease_until - now())::float8 FROM little.runs WHERE run_id = 'taken'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(until_left > 10.0, "{until_left}");
    let mut events = Vec::new();
    scan(&db.location(), Some("taken"), |e| {
        events.push(e.kind);
        Ok(())
    })
    .unwrap();
    assert_eq!(events, ["kind.a"]);
    drop(new);
}

#[test]
fn an_append_checks_the_epoch_itself_even_before_the_renewer_notices() {
    let Some(db) = Db::new() else { return };
    let target = db.target();
    let mut old = open(&target, "fenced").unwrap();
    // Another worker's epoch, written behind the old writer's back (its renewer runs only
    // every 10 s).
    db.sql()
        .execute("UPDATE little.runs SET epoch = epoch + 1, owner_host = 'elsewhere', owner_pid = 42 WHERE run_id = 'fenced'", &[])
        .unwrap();
    let error = old.append("kind.late", json!({})).unwrap_err();
    assert!(error.contains("`elsewhere` with pid 42"), "{error}");
    assert!(old.lease().unwrap().lost());
    let count: i64 = db.sql().query_one("SELECT count(*) FROM little.events", &[]).unwrap().get(0);
    assert_eq!(count, 0, "the refused append wrote nothing");
}

#[test]
fn eight_workers_at_once_take_turns_and_every_seq_is_written_once() {
    for (db, _dir, location) in stores() {
        let writing = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..8)
            .map(|worker| {
                let (location, writing) = (location.clone(), writing.clone());
                std::thread::spawn(move || {
                    let mut log =
                        open_run(&location, "shared", options(Duration::from_secs(120), Duration::from_secs(30)))
                            .unwrap();
                    assert_eq!(writing.fetch_add(1, Ordering::SeqCst), 0, "two writers at once");
                    for i in 0..5 {
                        log.append("kind.turn", json!({ "worker": worker, "i": i })).unwrap();
                    }
                    writing.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        let mut seqs = Vec::new();
        scan(&location, Some("shared"), |e| {
            seqs.push(e.seq);
            Ok(())
        })
        .unwrap();
        assert_eq!(seqs, (1..=40).collect::<Vec<_>>(), "{}", location.display());
        if let Some(db) = db {
            let epoch: i64 =
                db.sql().query_one("SELECT epoch FROM little.runs WHERE run_id = 'shared'", &[]).unwrap().get(0);
            assert_eq!(epoch, 8, "each worker had an epoch of its own");
        }
    }
}

#[test]
fn fifty_runs_appending_at_once_stay_apart() {
    let Some(db) = Db::new() else { return };
    let target = db.target();
    let workers: Vec<_> = (0..50)
        .map(|run| {
            let target = target.clone();
            std::thread::spawn(move || {
                let mut log = open(&target, &format!("run-{run}")).unwrap();
                for i in 0..10 {
                    log.append("kind.mine", json!({ "run": run, "i": i })).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let mut seen = 0;
    let mut next = std::collections::BTreeMap::new();
    scan(&db.location(), None, |e| {
        assert_eq!(e.run_id, format!("run-{}", e.u64("run").unwrap()), "an event in the wrong run");
        let expected = next.entry(e.run_id.clone()).or_insert(1u64);
        assert_eq!(e.seq, *expected);
        assert_eq!(e.u64("i").unwrap() + 1, e.seq);
        *expected += 1;
        seen += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, 500);
}

#[test]
fn two_migrations_at_once_are_one() {
    let Some(db) = Db::new() else { return };
    let target = db.target();
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let target = target.clone();
            std::thread::spawn(move || open(&target, &format!("m{i}")).map(|_| ()))
        })
        .collect();
    for worker in workers {
        worker.join().unwrap().unwrap();
    }
    let versions: Vec<i32> = db
        .sql()
        .query("SELECT version FROM little.schema_version ORDER BY version", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (1..=little_store::postgres::schema::VERSION).collect::<Vec<_>>());
}

#[test]
fn a_newer_schema_is_refused_naming_both_versions() {
    let Some(db) = Db::new() else { return };
    drop(open(&db.target(), "r").unwrap());
    db.sql().execute("INSERT INTO little.schema_version (version) VALUES (99)", &[]).unwrap();
    let version = little_store::postgres::schema::VERSION;
    let error = open(&db.target(), "r").err().unwrap();
    assert!(error.contains("version 99") && error.contains(&format!("version {version}")), "{error}");
    let error = scan(&db.location(), None, |_| Ok(())).unwrap_err();
    assert!(error.contains("version 99"), "{error}");
}

#[test]
fn a_table_changed_by_someone_else_is_refused_clearly() {
    let Some(db) = Db::new() else { return };
    drop(open(&db.target(), "r").unwrap());
    db.sql().batch_execute("ALTER TABLE little.events DROP COLUMN kind").unwrap();
    let error = open(&db.target(), "r").err().unwrap();
    assert!(error.contains("`little.events` has no column `kind`"), "{error}");
    db.sql()
        .batch_execute("ALTER TABLE little.events ADD COLUMN kind text; ALTER TABLE little.runs ALTER COLUMN owner_pid TYPE bigint")
        .unwrap();
    let error = open(&db.target(), "r").err().unwrap();
    assert!(error.contains("`little.runs.owner_pid` is `bigint` where `integer` was expected"), "{error}");
}

#[test]
fn events_changed_behind_the_store_are_refused_and_the_run_is_not_left_held() {
    let Some(db) = Db::new() else { return };
    let mut log = open(&db.target(), "edited").unwrap();
    for i in 0..3 {
        log.append("kind.x", json!({ "i": i })).unwrap();
    }
    drop(log);
    db.sql().execute("DELETE FROM little.events WHERE run_id = 'edited' AND seq = 2", &[]).unwrap();
    for _ in 0..2 {
        // The second open finds the same problem, not a lease left behind by the first.
        let error = open(&db.target(), "edited").err().unwrap();
        assert!(error.contains("seq 3 where 2 was expected") && error.contains("lost"), "{error}");
    }
    let error = scan(&db.location(), None, |_| Ok(())).unwrap_err();
    assert!(error.contains("seq 3 where 2 was expected"), "{error}");
    db.sql().execute("UPDATE little.events SET body = 'not json' WHERE run_id = 'edited'", &[]).unwrap();
    let error = open(&db.target(), "edited").err().unwrap();
    assert!(error.contains("not an event"), "{error}");
}

#[test]
fn a_database_without_the_schema_has_no_events() {
    let Some(db) = Db::new() else { return };
    let found = scan(&db.location(), None, |_| panic!("no event")).unwrap();
    assert!(!found.exists);
    assert_eq!(found.events, 0);
    let exists: bool = db.sql().query_one("SELECT to_regnamespace('little') IS NOT NULL", &[]).unwrap().get(0);
    assert!(!exists, "reading created nothing");
}

/// The server's `host:port`.
fn host_port(db: &Db) -> String {
    let shown = db.target().display();
    shown["postgres://".len()..].split_once('@').unwrap().1.split('/').next().unwrap().to_string()
}

fn password_of(url: &str) -> String {
    let rest = &url[url.find("://").unwrap() + 3..];
    let userinfo = &rest[..rest.rfind('@').unwrap()];
    userinfo.split_once(':').unwrap().1.to_string()
}

#[test]
fn connection_failures_are_clear_and_never_show_the_password() {
    let Some(db) = Db::new() else { return };
    let password = password_of(&db.url);
    let wrong = db.url.replacen(&format!(":{password}@"), ":n0t-the-pw@", 1);
    let error = open(&Target::parse(&wrong).unwrap(), "r").err().unwrap();
    assert!(error.contains("password authentication failed"), "{error}");
    eprintln!("a wrong password: {error}");
    assert!(error.contains("postgres://little_test@127.0.0.1:"), "{error}");
    assert!(!error.contains("n0t-the-pw"), "{error}");
    // A port where nothing listens.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused = format!("postgres://little_test:{password}@127.0.0.1:{port}/x?sslmode=disable");
    let error = open(&Target::parse(&refused).unwrap(), "r").err().unwrap();
    assert!(error.contains("cannot connect") && error.to_lowercase().contains("refused"), "{error}");
    eprintln!("nothing listening: {error}");
    assert!(!error.contains(&password), "{error}");
    for bad in [
        format!("postgres://little_test:{password}@127.0.0.1:99999/x"),
        format!("postgres://little_test:{password}@127.0.0.1/x?sslmode=maybe"),
    ] {
        let error = Target::parse(&bad).unwrap_err();
        assert!(!error.contains(&password), "{error}");
        // Through `--events`: the store says so when it is used.
        let location = Location::parse(&bad).unwrap();
        assert!(!location.display().contains(&password));
        let error = open_run(&location, "r", options(Duration::ZERO, Duration::from_secs(30))).err().unwrap();
        eprintln!("a bad URL: {error}");
        assert!(error.contains("is not a PostgreSQL URL"), "{error}");
        assert!(!error.contains(&password), "{error}");
    }
}

#[test]
fn the_password_file_and_pg_variables_are_used() {
    use std::os::unix::fs::PermissionsExt;
    let Some(db) = Db::new() else { return };
    let password = password_of(&db.url);
    let without = db.url.replacen(&format!(":{password}@"), "@", 1);
    let dir = tempfile::tempdir().unwrap();
    let pgpass = dir.path().join("pgpass");
    std::fs::write(&pgpass, format!("127.0.0.1:*:{}:little_test:{}\n", db.name, password.replace(':', "\\:"))).unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = pgpass.to_str().unwrap().to_string();
    let target = Target::parse_with(&without, &|name| (name == "PGPASSFILE").then(|| file.clone())).unwrap();
    assert!(open(&target, "r").is_ok(), "the password came from the password file");
    let target = Target::parse_with(&without, &|_| None).unwrap();
    assert!(open(&target, "r2").err().unwrap().contains("password"), "and without it there is none");
    // Everything from the variables.
    let port = db.url.rsplit_once(':').unwrap().1.split('/').next().unwrap().to_string();
    let vars = [
        ("PGHOST", "127.0.0.1".to_string()),
        ("PGPORT", port),
        ("PGUSER", "little_test".to_string()),
        ("PGPASSWORD", password.clone()),
        ("PGDATABASE", db.name.clone()),
    ];
    let target =
        Target::parse_with("postgres://", &|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone()))
            .unwrap();
    assert_eq!(target.display(), db.target().display());
    assert!(open(&target, "r3").is_ok());
}

#[test]
fn tls_as_sslmode_asks() {
    let Some(db) = Db::new() else { return };
    let Ok(ca) = std::env::var("LITTLE_TEST_POSTGRES_CA") else {
        eprintln!("skipped: LITTLE_TEST_POSTGRES_CA is unset (the server has no TLS)");
        return;
    };
    let uses_tls = |url: &str| -> Result<bool, String> {
        let mut client = connect(&Target::parse(url)?)?;
        Ok(client.query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[]).unwrap().get(0))
    };
    assert!(!uses_tls(&with_param(&db.url, "sslmode=disable")).unwrap());
    assert!(uses_tls(&with_param(&db.url, "sslmode=prefer")).unwrap());
    assert!(uses_tls(&with_param(&db.url, "sslmode=require")).unwrap());
    let verified = with_param(&db.url, &format!("sslmode=verify-full&sslrootcert={ca}"));
    assert!(uses_tls(&verified).unwrap());
    assert!(open(&Target::parse(&verified).unwrap(), "tls").is_ok());
    // The certificate names localhost and 127.0.0.1, not 127.0.0.2 (a proxy there):
    // verify-full refuses it, verify-ca does not look at the name.
    let hostport = host_port(&db);
    let proxy = Proxy::new("127.0.0.2", hostport.parse().unwrap());
    let other_name = verified.replacen(&format!("@{hostport}/"), &format!("@127.0.0.2:{}/", proxy.port), 1);
    let error = uses_tls(&other_name).unwrap_err();
    assert!(error.contains("certificate") && error.contains("127.0.0.2"), "{error}");
    eprintln!("verify-full, another name: {error}");
    assert!(uses_tls(&other_name.replace("verify-full", "verify-ca")).unwrap());
    // Not signed by a root this client trusts.
    let error = uses_tls(&with_param(&db.url, "sslmode=verify-full&sslrootcert=system")).unwrap_err();
    eprintln!("verify-full, the system's roots: {error}");
    assert!(error.contains("certificate") || error.contains("UnknownIssuer"), "{error}");
    assert!(!error.contains(&password_of(&db.url)), "{error}");
}

/// A TCP proxy in front of the server whose connections a test can cut, and which refuses
/// new ones for a while after.
struct Proxy {
    port: u16,
    live: Arc<Mutex<Vec<TcpStream>>>,
    refuse_until: Arc<Mutex<Instant>>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// A proxy on `ip` (any of 127.0.0.0/8 is this machine) to `upstream`.
    fn new(ip: &str, upstream: std::net::SocketAddr) -> Proxy {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let live = Arc::new(Mutex::new(Vec::<TcpStream>::new()));
        let refuse_until = Arc::new(Mutex::new(Instant::now()));
        let stop = Arc::new(AtomicBool::new(false));
        let (live2, refuse2, stop2) = (live.clone(), refuse_until.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                if Instant::now() < *refuse2.lock().unwrap() {
                    drop(client);
                    continue;
                }
                client.set_nonblocking(false).unwrap();
                let Ok(server) = TcpStream::connect(upstream) else { continue };
                // Without it, Nagle's algorithm and delayed acknowledgements add 40 ms a message.
                let _ = client.set_nodelay(true).and(server.set_nodelay(true));
                live2.lock().unwrap().extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let mut buffer = [0u8; 16384];
                        loop {
                            match from.read(&mut buffer) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => {
                                    if to.write_all(&buffer[..n]).is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Proxy { port, live, refuse_until, stop }
    }

    /// Cuts every connection, and refuses new ones for `outage`.
    fn sever(&self, outage: Duration) {
        *self.refuse_until.lock().unwrap() = Instant::now() + outage;
        for stream in self.live.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.sever(Duration::ZERO);
    }
}

#[test]
fn appends_survive_a_severed_connection_without_loss_or_doubling() {
    let Some(db) = Db::new() else { return };
    let hostport = host_port(&db);
    let upstream: std::net::SocketAddr = hostport.parse().unwrap();
    let proxy = Arc::new(Proxy::new("127.0.0.1", upstream));
    let through = with_param(
        &db.url.replacen(&format!("@{hostport}/"), &format!("@127.0.0.1:{}/", proxy.port), 1),
        "sslmode=disable",
    );
    let mut log = open(&Target::parse(&through).unwrap(), "cut").unwrap();
    // Eight cuts, a quarter of a second apart, some followed by an outage that refuses
    // new connections, while the writer appends.
    let done = Arc::new(AtomicBool::new(false));
    let cutter = {
        let (done, proxy) = (done.clone(), proxy.clone());
        std::thread::spawn(move || {
            for cut in 0..8 {
                std::thread::sleep(Duration::from_millis(250));
                proxy.sever(Duration::from_millis(if cut % 3 == 0 { 400 } else { 0 }));
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let mut appended = 0u64;
    let cutting = Instant::now();
    // Every third event appended unsynced: a cut may fall on one, or on the append after it.
    while appended < 300 || !done.load(Ordering::SeqCst) {
        if appended % 3 == 1 {
            log.append_unsynced("kind.cut", json!({ "i": appended })).unwrap();
        } else {
            log.append("kind.cut", json!({ "i": appended })).unwrap();
        }
        appended += 1;
    }
    log.sync().unwrap();
    cutter.join().unwrap();
    eprintln!("appended {appended} events through 8 cuts in {:?}", cutting.elapsed());
    let mut seen = Vec::new();
    scan(&db.location(), Some("cut"), |e| {
        seen.push((e.seq, e.u64("i").unwrap()));
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, (0..appended).map(|i| (i + 1, i)).collect::<Vec<_>>(), "every event once, in order");
    // The bound: with nothing to reach, an append fails rather than waiting forever.
    log.set_retry_bound(Duration::from_secs(1));
    drop(db);
    let started = Instant::now();
    let error = log.append("kind.cut", json!({})).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert!(error.contains("append an event"), "{error}");
    eprintln!("with the database gone, an append failed after {:?}: {error}", started.elapsed());
}

#[test]
fn follow_sees_each_event_as_it_is_written_and_returns_at_the_end() {
    for (_db, _dir, location) in stores() {
        let follower = {
            let location = location.clone();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                follow(&location, "followed", &|e| e.kind == "run.ended", &mut |e| {
                    seen.push((e.seq, e.kind, Instant::now()));
                    Ok(())
                })
                .map(|()| seen)
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        let mut log = open_run(&location, "followed", options(Duration::ZERO, Duration::from_secs(30))).unwrap();
        // Another run's events are not followed.
        let mut other = open_run(&location, "other", options(Duration::ZERO, Duration::from_secs(30)));
        if let Ok(other) = other.as_mut() {
            other.append("run.ended", json!({})).unwrap();
        }
        drop(other);
        let mut written = Vec::new();
        for i in 0..4 {
            log.append("kind.step", json!({ "i": i })).unwrap();
            written.push(Instant::now());
            std::thread::sleep(Duration::from_millis(100));
        }
        log.append("run.ended", json!({})).unwrap();
        let seen = follower.join().unwrap().unwrap();
        assert_eq!(
            seen.iter().map(|(s, k, _)| (*s, k.as_str())).collect::<Vec<_>>(),
            [(1, "kind.step"), (2, "kind.step"), (3, "kind.step"), (4, "kind.step"), (5, "run.ended")],
            "{}",
            location.display()
        );
        if matches!(location, Location::Postgres(_)) {
            // Told by the notification, not by the one-second fallback.
            let lag = seen[0].2.duration_since(written[0]);
            assert!(lag < Duration::from_millis(900), "{lag:?}");
        }
    }
}

#[test]
fn follow_goes_on_after_its_connection_is_cut() {
    let Some(db) = Db::new() else { return };
    let hostport = host_port(&db);
    let proxy = Proxy::new("127.0.0.1", hostport.parse().unwrap());
    let through = with_param(
        &db.url.replacen(&format!("@{hostport}/"), &format!("@127.0.0.1:{}/", proxy.port), 1),
        "sslmode=disable",
    );
    let follower = std::thread::spawn(move || {
        let mut seqs = Vec::new();
        follow(&Location::parse(&through).unwrap(), "cut-follow", &|e| e.kind == "run.ended", &mut |e| {
            seqs.push(e.seq);
            Ok(())
        })
        .map(|()| seqs)
    });
    let mut log = open(&db.target(), "cut-follow").unwrap();
    for i in 0..20 {
        log.append("kind.step", json!({ "i": i })).unwrap();
        if i % 5 == 2 {
            proxy.sever(Duration::from_millis(300));
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    log.append("run.ended", json!({})).unwrap();
    assert_eq!(follower.join().unwrap().unwrap(), (1..=21).collect::<Vec<_>>(), "each event once, in order");
}

#[test]
fn blobs_and_memory_files_live_in_the_database() {
    let Some(db) = Db::new() else { return };
    let mut a = open(&db.target(), "a").unwrap();
    let id = a.put_blob(b"contents").unwrap();
    assert_eq!(a.put_blob(b"contents").unwrap(), id, "twice is once");
    let mut b = open(&db.target(), "b").unwrap();
    assert_eq!(b.get_blob(&id).unwrap().as_deref(), Some(&b"contents"[..]));
    assert_eq!(b.get_blob(&little_store::blob_id(b"none")).unwrap(), None);
    assert!(b.get_blob("sha256:../x").unwrap_err().contains("not a blob"));
    use little_store::{FileChange, FileEntry};
    let entry =
        |path: &str, body: &[u8], mode| FileEntry { path: path.to_string(), sha256: little_store::blob_id(body), mode };
    let memory = a.shared_memory().unwrap();
    memory
        .commit("org", &[FileChange::Put(entry("notes.md", b"1", 0o644)), FileChange::Put(entry("x", b"x", 0o600))])
        .unwrap();
    let memory = b.shared_memory().unwrap();
    memory
        .commit("org", &[FileChange::Put(entry("notes.md", b"2", 0o644)), FileChange::Removed("x".to_string())])
        .unwrap();
    assert_eq!(memory.files("org").unwrap(), [entry("notes.md", b"2", 0o644)], "the last writer wins");
    assert!(memory.files("workflow/w").unwrap().is_empty());
    let a_memory = a.shared_memory().unwrap();
    assert_eq!(a_memory.files("org").unwrap(), [entry("notes.md", b"2", 0o644)]);
}

#[test]
fn a_run_dir_is_under_the_working_directory() {
    let Some(db) = Db::new() else { return };
    let log = open(&db.target(), "here").unwrap();
    assert_eq!(log.run_dir(), std::env::current_dir().unwrap().join(".little/runs/here"));
}

#[test]
fn a_long_run_id_is_written_and_read() {
    let Some(db) = Db::new() else { return };
    let run = "r".repeat(10_000);
    let mut log = open(&db.target(), &run).unwrap();
    log.append("kind.x", json!({})).unwrap();
    drop(log);
    let mut seen = 0;
    scan(&db.location(), Some(&run), |e| {
        assert_eq!(e.run_id, run);
        seen += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, 1);
}
