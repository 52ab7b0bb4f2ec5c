//! Schedule triggers: `trigger.invalid_schedule` (`config.cron`), `trigger.invalid_timezone`
//! (`config.timezone`) and `trigger.schedule_too_frequent` (the tenant's `minIntervalMinutes`).
//!
//! # The cron grammar
//!
//! Exactly five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12) and day
//! of week (0-7, where 0 and 7 are Sunday, as in Vixie cron). A field is a comma-separated list
//! of `*`, `N`, `A-B`, `*/S` or `A-B/S`. Month and day-of-week values may also be written as
//! three-letter English names, in any case (`JAN`…`DEC`, `SUN`…`SAT`; `SUN` ending a range is
//! 7, so `FRI-SUN` works). Everything else is rejected here, before the cron crate sees it,
//! because a downstream scheduler need not understand it: seconds and year fields (six or seven
//! fields), `@daily`-style nicknames, and the `croner` extensions `L`, `W`, `#`, `?` and `+`.
//! Also rejected: a reversed range (`5-1`), a step of 0, a step larger than the field's
//! largest value (`*/90` in the minute field would fire only at minute 0: cron cannot say
//! "every 90 minutes"), a step after a single value (`5/15`: write `5-59/15`), and an empty
//! list element (`1,,2`). The expression then goes, with names replaced by numbers, to
//! [`croner`], which evaluates it (its own parse errors, should any remain, are reported with
//! its reason). When both day of month and day of week are restricted, a day matches if
//! either does (Vixie cron's rule, which `croner` follows).
//!
//! An expression that parses but matches no date at all (`0 0 31 2 *`) never fires, and is
//! `trigger.invalid_schedule` too.
//!
//! # Time zones
//!
//! `config.timezone` must be an IANA name exactly as the tz database spells it, including its
//! backward-compatible links (`US/Eastern`, `Asia/Calcutta`): `chrono-tz` accepts those, and
//! its `name()` gives them back unchanged. `chrono-tz`'s `FromStr` is case-sensitive unless
//! its `case-insensitive` feature is on; so that a feature enabled elsewhere in the build
//! cannot widen the language, a parse is accepted only if `Tz::name()` equals the input
//! byte for byte (`europe/berlin` is rejected, with `Europe/Berlin` as the help).
//!
//! # Frequency and daylight saving time
//!
//! The firings are expanded with `croner` in the trigger's zone, starting from a fixed
//! reference instant, 2026-01-01T00:00 local time in that zone (never the wall clock, so the
//! same draft always gets the same answer), and gaps are measured between real instants, so a
//! clock change shortens or lengthens them. Every gap that starts within the following year is
//! considered (its second firing may lie after the year), and at least one gap is, so a
//! schedule that fires only on 29 February still gets its four-year gap.
//!
//! `croner` follows Vixie cron (and the Open Cron Pattern Specification) at clock changes:
//! - a *fixed-time* job (single values in the minute and hour fields) whose wall-clock time is
//!   skipped by a spring-forward runs once, at the first instant after the gap; in a repeated
//!   hour (fall-back) it runs once, at the earlier instant;
//! - any other job skips wall-clock times that do not exist, and runs at both instants of a
//!   repeated wall-clock time.
//!
//! So in Europe/Berlin on 2026-03-29 (02:00 CET becomes 03:00 CEST) `0 2 * * *` fires at
//! 03:00 CEST = 01:00Z, 23 hours before the next day's 02:00 CEST = 00:00Z: that 23-hour gap
//! is its shortest of the year. And `0,40 2 * * *` fires four times on 2026-10-25, the second
//! and third firings (02:40 CEST = 00:40Z and 02:00 CET = 01:00Z) only 20 minutes apart.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};
use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};

/// The year whose firings are expanded: from 00:00 local time on this day, for one year.
pub const REFERENCE_YEAR: i32 = 2026;

/// Checks a `schedule`-semantic trigger's config. `faulty_config` lists JSON pointers the
/// config schema already rejected (skip those fields: no cascade). `min_interval_minutes` is
/// the tenant's policy (None without a context: then no frequency check).
pub fn check(
    node_id: &str,
    at: &Anchor,
    config: &serde_json::Value,
    faulty_config: &[String],
    min_interval_minutes: Option<u64>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let faulty = |pointer: &str| faulty_config.iter().any(|p| p == pointer || pointer.starts_with(&format!("{p}/")));

    // `None`: the field is absent or already reported; the frequency check then cannot run.
    let cron = match config.get("cron") {
        _ if faulty("/cron") => None,
        None => None,
        Some(serde_json::Value::String(text)) => match parse(text) {
            Ok(cron) => Some(cron),
            Err(fault) => {
                findings.push(
                    Finding::new(
                        Code::TriggerInvalidSchedule,
                        at.at("config").at("cron"),
                        format!("node `{node_id}` has an invalid cron expression `{text}`: {}", fault.message),
                    )
                    .node(node_id)
                    .help(fault.help),
                );
                None
            }
        },
        Some(other) => {
            findings.push(
                Finding::new(
                    Code::TriggerInvalidSchedule,
                    at.at("config").at("cron"),
                    format!("node `{node_id}` has a `cron` that is {}, not a cron expression string", kind(other)),
                )
                .node(node_id),
            );
            None
        }
    };

    let timezone = match config.get("timezone") {
        _ if faulty("/timezone") => None,
        None => Some(Tz::UTC),
        Some(serde_json::Value::String(name)) => match parse_timezone(name) {
            Some(tz) => Some(tz),
            None => {
                findings.push(
                    Finding::new(
                        Code::TriggerInvalidTimezone,
                        at.at("config").at("timezone"),
                        format!("node `{node_id}` names time zone `{name}`, which is not an IANA time zone name"),
                    )
                    .node(node_id)
                    .help(timezone_help(name)),
                );
                None
            }
        },
        Some(other) => {
            findings.push(
                Finding::new(
                    Code::TriggerInvalidTimezone,
                    at.at("config").at("timezone"),
                    format!("node `{node_id}` has a `timezone` that is {}, not an IANA time zone name", kind(other)),
                )
                .node(node_id),
            );
            None
        }
    };

    let (Some((text, cron)), Some(tz), Some(policy)) = (cron, timezone, min_interval_minutes) else {
        return findings;
    };
    // The expression was proved to fire when it was parsed, so `gaps` cannot fail here; if it
    // somehow did, there is no frequency to judge.
    if let Ok(Some(gap)) = gaps(&cron, tz, Some(policy))
        && gap.seconds < policy.saturating_mul(60)
    {
        findings.push(
            Finding::new(
                Code::TriggerScheduleTooFrequent,
                at.at("config").at("cron"),
                format!(
                    "node `{node_id}`: schedule `{text}` in {} fires only {} apart (first between {} and {}), but tenant policy requires at least {} between firings",
                    tz.name(),
                    minutes(gap.seconds / 60),
                    stamp(gap.first),
                    stamp(gap.second),
                    minutes(policy),
                ),
            )
            .node(node_id),
        );
    }
    findings
}

/// The shortest gap, in whole minutes of real elapsed time, between two consecutive firings
/// of `cron` in `tz`, with the UTC instant of the first firing of that pair, over the gaps
/// that start in the reference year (see the module docs). `Ok(None)` only if the schedule
/// has fewer than two firings (which a five-field cron never has). Ties go to the earliest
/// gap.
///
/// With `limit_minutes`, the expansion stops at the first gap shorter than the limit and
/// returns that gap, which is then the first violation but not necessarily the shortest gap.
///
/// `Err` carries the same message that `trigger.invalid_schedule` would: an invalid or
/// never-firing expression.
pub fn shortest_gap(cron: &str, tz: Tz, limit_minutes: Option<u64>) -> Result<Option<(u64, DateTime<Utc>)>, String> {
    let (_, cron) = parse(cron).map_err(|fault| fault.message)?;
    Ok(gaps(&cron, tz, limit_minutes)?.map(|gap| (gap.seconds / 60, gap.first)))
}

/// The firings of `cron` in `tz` at or after `from` and before `to`, as UTC instants, with
/// `croner`'s handling of clock changes (see the module docs).
pub fn firings(cron: &str, tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<DateTime<Utc>>, String> {
    let (_, cron) = parse(cron).map_err(|fault| fault.message)?;
    let mut out = Vec::new();
    let mut at = from.with_timezone(&tz);
    let mut inclusive = true;
    while let Ok(next) = cron.find_next_occurrence(&at, inclusive) {
        if next.with_timezone(&Utc) >= to {
            break;
        }
        out.push(next.with_timezone(&Utc));
        at = next;
        inclusive = false;
    }
    Ok(out)
}

/// Two consecutive firings.
struct Gap {
    /// Real elapsed time from `first` to `second`.
    seconds: u64,
    first: DateTime<Utc>,
    second: DateTime<Utc>,
}

/// Expands the firings; see [`shortest_gap`].
fn gaps(cron: &Cron, tz: Tz, limit_minutes: Option<u64>) -> Result<Option<Gap>, String> {
    let start = local_instant(tz, REFERENCE_YEAR);
    let end = local_instant(tz, REFERENCE_YEAR + 1);
    let limit_seconds = limit_minutes.map(|m| m.saturating_mul(60));
    let next = |after: &DateTime<Tz>, inclusive: bool| match cron.find_next_occurrence(after, inclusive) {
        Ok(t) => Ok(Some(t)),
        Err(CronError::TimeSearchLimitExceeded) => Ok(None),
        Err(e) => Err(e.to_string()),
    };
    let Some(mut previous) = next(&start, true)? else { return Err(NEVER_FIRES.to_string()) };
    let mut best: Option<Gap> = None;
    while previous < end || best.is_none() {
        let Some(current) = next(&previous, false)? else { break };
        // Firings are distinct instants, at least a second apart; in a zone whose offset is
        // not whole minutes a gap can be a fraction of a minute longer than reported.
        let seconds = (current - previous).num_seconds().max(0) as u64;
        if best.as_ref().is_none_or(|shortest| seconds < shortest.seconds) {
            best = Some(Gap { seconds, first: previous.with_timezone(&Utc), second: current.with_timezone(&Utc) });
            if limit_seconds.is_some_and(|limit| seconds < limit) {
                break;
            }
        }
        previous = current;
    }
    Ok(best)
}

/// 00:00 local time on 1 January of `year` in `tz`: the earlier instant if that time is
/// repeated, the first instant after it if it is skipped.
fn local_instant(tz: Tz, year: i32) -> DateTime<Tz> {
    let midnight: NaiveDateTime =
        NaiveDate::from_ymd_opt(year, 1, 1).unwrap_or_default().and_hms_opt(0, 0, 0).unwrap_or_default();
    (0..=24 * 60)
        .find_map(|m| tz.from_local_datetime(&(midnight + chrono::TimeDelta::minutes(m))).earliest())
        .unwrap_or_else(|| tz.from_utc_datetime(&midnight))
}

const NEVER_FIRES: &str = "it never fires: no date matches its day-of-month, month and day-of-week fields";

/// Why an expression is rejected.
struct Fault {
    message: String,
    help: Option<String>,
}

impl Fault {
    fn new(message: impl Into<String>) -> Fault {
        Fault { message: message.into(), help: None }
    }
}

/// One of the five fields.
struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    /// Names for `min`, `min + 1`, …
    names: &'static [&'static str],
    range_note: &'static str,
}

const FIELDS: [Field; 5] = [
    Field { name: "minute", min: 0, max: 59, names: &[], range_note: "" },
    Field { name: "hour", min: 0, max: 23, names: &[], range_note: "" },
    Field { name: "day-of-month", min: 1, max: 31, names: &[], range_note: "" },
    Field {
        name: "month",
        min: 1,
        max: 12,
        names: &["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"],
        range_note: " (or JAN-DEC)",
    },
    Field {
        name: "day-of-week",
        min: 0,
        max: 7,
        names: &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
        range_note: " (0 and 7 are Sunday; or SUN-SAT)",
    },
];

/// Parses and validates a five-field expression, and proves that it fires.
fn parse(text: &str) -> Result<(String, Cron), Fault> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    if parts.len() != FIELDS.len() {
        let mut fault = Fault::new(format!(
            "expected 5 fields (minute hour day-of-month month day-of-week), found {}",
            parts.len()
        ));
        fault.help = match parts.as_slice() {
            [nickname] if nickname.starts_with('@') => nickname_help(nickname),
            _ if parts.len() == 6 || parts.len() == 7 => {
                Some("schedules are read to the minute: drop the seconds field (and any year field)".to_string())
            }
            _ => None,
        };
        return Err(fault);
    }
    let mut normalized = Vec::with_capacity(FIELDS.len());
    for (field, part) in FIELDS.iter().zip(&parts) {
        normalized.push(
            normalize(field, part).map_err(|reason| Fault::new(format!("{} field `{part}`: {reason}", field.name)))?,
        );
    }
    let parser = CronParser::builder().seconds(Seconds::Disallowed).year(Year::Disallowed).build();
    let cron = parser.parse(&normalized.join(" ")).map_err(|e| Fault::new(e.to_string()))?;
    // Whether an expression fires at all does not depend on the zone (every zone has every
    // date in some year), so this asks in UTC; `croner` searches to the year 5000.
    let start = Utc.with_ymd_and_hms(REFERENCE_YEAR, 1, 1, 0, 0, 0).single().unwrap_or_default();
    match cron.find_next_occurrence(&start, true) {
        Ok(_) => Ok((text.to_string(), cron)),
        Err(CronError::TimeSearchLimitExceeded) => Err(Fault::new(NEVER_FIRES)),
        Err(e) => Err(Fault::new(e.to_string())),
    }
}

/// One field, validated, with names replaced by numbers.
fn normalize(field: &Field, text: &str) -> Result<String, String> {
    let mut items = Vec::new();
    for item in text.split(',') {
        if item.is_empty() {
            return Err("a list has an empty element".to_string());
        }
        let (base, step) = match item.split_once('/') {
            Some((base, step)) => (base, Some(step)),
            None => (item, None),
        };
        let step = match step {
            None => None,
            Some(step) => {
                let n = number(step).ok_or_else(|| format!("step `{step}` is not a number"))?;
                if n == 0 {
                    return Err("a step must be at least 1".to_string());
                }
                if n > field.max {
                    return Err(format!(
                        "step {n} is larger than the largest {} ({}), so it would select only the first value",
                        field.name, field.max
                    ));
                }
                Some(n)
            }
        };
        let base = if base == "*" {
            "*".to_string()
        } else if let Some((from, to)) = base.split_once('-') {
            let from = value(field, from, false)?;
            let to = value(field, to, true)?;
            if from > to {
                return Err(format!("range {from}-{to} runs backwards"));
            }
            format!("{from}-{to}")
        } else {
            let single = value(field, base, false)?;
            if let Some(step) = step {
                return Err(format!(
                    "a step applies to `*` or a range, not to a single value: write `{single}-{}/{step}`",
                    field.max
                ));
            }
            single.to_string()
        };
        items.push(match step {
            Some(step) => format!("{base}/{step}"),
            None => base,
        });
    }
    Ok(items.join(","))
}

/// A value of `field`: a number in its range, or one of its names. `SUN` ending a range is 7.
fn value(field: &Field, text: &str, range_end: bool) -> Result<u32, String> {
    let n = if let Some(n) = number(text) {
        n
    } else if let Some(i) = field.names.iter().position(|name| name.eq_ignore_ascii_case(text)) {
        let n = field.min + i as u32;
        if range_end && field.name == "day-of-week" && n == 0 { 7 } else { n }
    } else if text.is_empty() {
        return Err("a range is missing a value".to_string());
    } else {
        return Err(format!(
            "`{text}` is not a {} value: expected a number {}-{}{}",
            field.name, field.min, field.max, field.range_note
        ));
    };
    if n < field.min || n > field.max {
        return Err(format!("{n} is out of range {}-{}{}", field.min, field.max, field.range_note));
    }
    Ok(n)
}

/// A decimal number; `None` unless all ASCII digits. Too large a number saturates, so it is
/// reported as out of range.
fn number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(text.parse::<u32>().unwrap_or(u32::MAX))
}

fn nickname_help(nickname: &str) -> Option<String> {
    let equivalent = match nickname.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => return None,
    };
    Some(format!("write `{equivalent}` for `{nickname}`"))
}

/// A zone, if `name` is an IANA name exactly as spelled in the tz database.
fn parse_timezone(name: &str) -> Option<Tz> {
    Tz::from_str(name).ok().filter(|tz| tz.name() == name)
}

/// The zone that `name` spells in another case; else a typo's nearest zone name; else the one
/// zone whose last segment is the name (`Berlin`, `new york`, `Sao_Paulo`).
fn timezone_help(name: &str) -> Option<String> {
    let names = || chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name());
    let city = name.trim().replace(' ', "_");
    let last_segment = |zone: &str| zone.rsplit_once('/').is_some_and(|(_, last)| last.eq_ignore_ascii_case(&city));
    only_one(names().filter(|zone| zone.eq_ignore_ascii_case(&city)))
        .map(|zone| format!("did you mean `{zone}`?"))
        .or_else(|| suggest::did_you_mean(name, names()))
        .or_else(|| only_one(names().filter(|zone| last_segment(zone))).map(|zone| format!("did you mean `{zone}`?")))
}

/// The single item of `items`, if there is exactly one.
fn only_one<T>(mut items: impl Iterator<Item = T>) -> Option<T> {
    let first = items.next()?;
    items.next().is_none().then_some(first)
}

fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn minutes(n: u64) -> String {
    if n == 1 { "1 minute".to_string() } else { format!("{n} minutes") }
}

fn stamp(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%MZ").to_string()
}
