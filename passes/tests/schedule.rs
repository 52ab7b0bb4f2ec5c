//! The schedule-trigger check: cron grammar, time zones, and the tenant's minimum interval,
//! with firings measured in real time across daylight-saving changes.
//!
//! Europe/Berlin in 2026: CET (UTC+1) until 2026-03-29 01:00Z, when 02:00 CET becomes
//! 03:00 CEST (UTC+2); CEST until 2026-10-25 01:00Z, when 03:00 CEST becomes 02:00 CET, so
//! 02:00-02:59 happens twice.

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};
use little_passes::checks::schedule::{check, firings, shortest_gap};
use serde_json::json;

const BERLIN: Tz = chrono_tz::Europe::Berlin;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

fn run(config: serde_json::Value, policy: Option<u64>) -> Vec<Finding> {
    check("weekly", &Anchor::node("weekly", 0), &config, &[], policy)
}

fn codes(findings: &[Finding]) -> Vec<Code> {
    findings.iter().map(|f| f.diagnostic.code).collect()
}

/// The one finding of a config, which must have `code`.
fn only(config: serde_json::Value, policy: Option<u64>, code: Code) -> Finding {
    let findings = run(config, policy);
    assert_eq!(codes(&findings), vec![code], "{findings:#?}");
    let finding = findings.into_iter().next().unwrap();
    assert_eq!(finding.diagnostic.node_id.as_deref(), Some("weekly"));
    finding
}

fn cron_anchor() -> Anchor {
    Anchor::node("weekly", 0).at("config").at("cron")
}

fn invalid_cron(cron: &str) -> Finding {
    let finding = only(json!({ "cron": cron, "timezone": "Europe/Berlin" }), Some(15), Code::TriggerInvalidSchedule);
    assert_eq!(finding.at, cron_anchor());
    finding
}

// ---- the grammar ----

#[test]
fn valid_expressions_have_no_findings() {
    for cron in [
        "0 6 * * 1",
        "*/15 * * * *",
        "0 0 1 1 *",
        "0-30/10 8-18 * * 1-5",
        "5,35 */2 1,15 */3 0,6",
        "0 0 * * 7",
        "00 06 * * *",
        "0 6 * jan-mar mon-fri",
        "0 6 * * FRI-SUN",
        "0 0 29 2 *",
        "  0   6 * *\t1 ",
        "59 23 31 12 *",
    ] {
        assert_eq!(codes(&run(json!({ "cron": cron, "timezone": "Europe/Berlin" }), None)), vec![], "{cron}");
        assert!(shortest_gap(cron, BERLIN, None).unwrap().is_some(), "{cron}");
    }
}

#[test]
fn six_and_seven_fields_are_rejected() {
    let finding = invalid_cron("0 0 6 * * 1");
    assert_eq!(
        finding.diagnostic.message,
        "node `weekly` has an invalid cron expression `0 0 6 * * 1`: expected 5 fields (minute hour day-of-month month day-of-week), found 6"
    );
    assert!(finding.diagnostic.help.as_deref().unwrap().contains("seconds"));
    assert!(invalid_cron("0 0 6 * * 1 2026").diagnostic.message.ends_with("found 7"));
    assert!(invalid_cron("0 6 * *").diagnostic.message.ends_with("found 4"));
    assert!(invalid_cron("").diagnostic.message.ends_with("found 0"));
    assert_eq!(
        shortest_gap("*/10 * * * * *", chrono_tz::UTC, None).unwrap_err(),
        "expected 5 fields (minute hour day-of-month month day-of-week), found 6"
    );
}

#[test]
fn nicknames_are_rejected_with_their_five_fields_as_help() {
    let finding = invalid_cron("@daily");
    assert!(finding.diagnostic.message.ends_with("found 1"));
    assert_eq!(finding.diagnostic.help.as_deref(), Some("write `0 0 * * *` for `@daily`"));
}

#[test]
fn values_out_of_range_are_rejected_naming_the_field() {
    assert_eq!(
        invalid_cron("61 * * * *").diagnostic.message,
        "node `weekly` has an invalid cron expression `61 * * * *`: minute field `61`: 61 is out of range 0-59"
    );
    assert!(invalid_cron("0 24 * * 1").diagnostic.message.ends_with("hour field `24`: 24 is out of range 0-23"));
    assert!(invalid_cron("0 0 0 * *").diagnostic.message.ends_with("day-of-month field `0`: 0 is out of range 1-31"));
    assert!(invalid_cron("0 0 * 13 *").diagnostic.message.contains("month field `13`: 13 is out of range 1-12"));
    assert!(invalid_cron("0 0 * * 8").diagnostic.message.contains("day-of-week field `8`: 8 is out of range 0-7"));
    assert!(invalid_cron("0 0 * * 1-9").diagnostic.message.contains("9 is out of range 0-7"));
    assert!(invalid_cron("99999999999 * * * *").diagnostic.message.contains("is out of range 0-59"));
}

#[test]
fn malformed_fields_are_rejected() {
    let reason = |cron: &str| {
        let message = invalid_cron(cron).diagnostic.message;
        message.split_once(": ").unwrap().1.to_string()
    };
    assert_eq!(reason("5-1 * * * *"), "minute field `5-1`: range 5-1 runs backwards");
    assert_eq!(reason("*/0 * * * *"), "minute field `*/0`: a step must be at least 1");
    assert_eq!(
        reason("*/90 * * * *"),
        "minute field `*/90`: step 90 is larger than the largest minute (59), so it would select only the first value"
    );
    assert_eq!(
        reason("5/15 * * * *"),
        "minute field `5/15`: a step applies to `*` or a range, not to a single value: write `5-59/15`"
    );
    assert_eq!(reason("1,,2 * * * *"), "minute field `1,,2`: a list has an empty element");
    assert_eq!(reason("1- * * * *"), "minute field `1-`: a range is missing a value");
    assert!(reason("*/x * * * *").contains("step `x` is not a number"));
    assert!(reason("1-2-3 * * * *").contains("`2-3` is not a minute value"));
}

#[test]
fn names_only_in_month_and_day_of_week_and_no_croner_extensions() {
    // `croner` would read `JAN` in the minute field as 1; here it is not a minute.
    assert!(invalid_cron("JAN * * * *").diagnostic.message.contains("minute field `JAN`: `JAN` is not a minute value"));
    assert!(invalid_cron("0 0 * * MONDAY").diagnostic.message.contains("`MONDAY` is not a day-of-week value"));
    for cron in ["0 0 L * *", "0 0 15W * *", "0 0 * * 1#2", "0 0 * * 5L", "0 0 ? * 1", "0 0 1 * +1"] {
        invalid_cron(cron);
    }
}

#[test]
fn an_expression_that_never_fires_is_invalid() {
    for cron in ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"] {
        assert_eq!(
            invalid_cron(cron).diagnostic.message,
            format!(
                "node `weekly` has an invalid cron expression `{cron}`: it never fires: no date matches its day-of-month, month and day-of-week fields"
            )
        );
    }
    // Restricting the day of week too makes either match (Vixie cron's rule): it fires.
    assert_eq!(codes(&run(json!({ "cron": "0 0 31 2 1" }), None)), vec![]);
}

#[test]
fn an_invalid_cron_is_not_checked_against_the_policy() {
    invalid_cron("* * * * * *");
    // `0 24 * * 1` with a policy: only the invalid schedule.
    only(json!({ "cron": "0 24 * * 1" }), Some(100_000), Code::TriggerInvalidSchedule);
}

#[test]
fn a_missing_cron_or_one_the_schema_rejected_is_skipped() {
    assert_eq!(codes(&run(json!({ "timezone": "UTC" }), Some(15))), vec![]);
    let config = json!({ "cron": 5, "timezone": "Nowhere/Atlantis" });
    let at = Anchor::node("weekly", 0);
    let faulty = ["/cron".to_string(), "/timezone".to_string()];
    assert_eq!(codes(&check("weekly", &at, &config, &faulty, Some(15))), vec![]);
    // The config as a whole was rejected.
    assert_eq!(codes(&check("weekly", &at, &json!({ "cron": "* * * * *" }), &[String::new()], Some(15))), vec![]);
    // Not rejected by a schema (a catalog without one): reported here, once.
    let finding = only(json!({ "cron": 5 }), Some(15), Code::TriggerInvalidSchedule);
    assert!(finding.diagnostic.message.contains("is a number, not a cron expression string"));
}

// ---- time zones ----

#[test]
fn timezone_typo_gets_a_suggestion() {
    let finding =
        only(json!({ "cron": "0 6 * * 1", "timezone": "Europe/Berln" }), Some(15), Code::TriggerInvalidTimezone);
    assert_eq!(finding.at, Anchor::node("weekly", 0).at("config").at("timezone"));
    assert_eq!(
        finding.diagnostic.message,
        "node `weekly` names time zone `Europe/Berln`, which is not an IANA time zone name"
    );
    assert_eq!(finding.diagnostic.help.as_deref(), Some("did you mean `Europe/Berlin`?"));
}

#[test]
fn a_city_or_wrong_case_is_not_an_iana_name() {
    let help = |tz: &str| {
        only(json!({ "cron": "0 6 * * 1", "timezone": tz }), None, Code::TriggerInvalidTimezone).diagnostic.help
    };
    // The explanation page's example: a bare city name.
    assert_eq!(help("Berlin").as_deref(), Some("did you mean `Europe/Berlin`?"));
    assert_eq!(help("new york").as_deref(), Some("did you mean `America/New_York`?"));
    assert_eq!(help("europe/berlin").as_deref(), Some("did you mean `Europe/Berlin`?"));
    assert_eq!(help("utc").as_deref(), Some("did you mean `UTC`?"));
    for tz in ["+02:00", "CEST", "", " Europe/Berlin"] {
        help(tz);
    }
    let finding = only(json!({ "cron": "0 6 * * 1", "timezone": 2 }), None, Code::TriggerInvalidTimezone);
    assert!(finding.diagnostic.message.contains("is a number"));
}

#[test]
fn iana_names_and_links_are_accepted_and_utc_is_the_default() {
    for tz in ["Europe/Berlin", "America/New_York", "UTC", "Etc/UTC", "US/Eastern", "Asia/Calcutta", "Asia/Kolkata"] {
        assert_eq!(codes(&run(json!({ "cron": "0 6 * * 1", "timezone": tz }), Some(15))), vec![], "{tz}");
    }
    // Without a zone the schedule is read in UTC.
    let finding = only(json!({ "cron": "*/5 * * * *" }), Some(15), Code::TriggerScheduleTooFrequent);
    assert!(finding.diagnostic.message.contains("in UTC"));
}

#[test]
fn an_invalid_timezone_skips_the_frequency_check_but_not_the_cron_check() {
    only(json!({ "cron": "* * * * *", "timezone": "Mars/Olympus" }), Some(15), Code::TriggerInvalidTimezone);
    let findings = run(json!({ "cron": "61 * * * *", "timezone": "Mars/Olympus" }), Some(15));
    assert_eq!(codes(&findings), vec![Code::TriggerInvalidSchedule, Code::TriggerInvalidTimezone]);
}

// ---- frequency ----

#[test]
fn every_five_minutes_against_a_fifteen_minute_policy() {
    let finding = only(json!({ "cron": "*/5 * * * *", "timezone": "UTC" }), Some(15), Code::TriggerScheduleTooFrequent);
    assert_eq!(finding.at, cron_anchor());
    assert_eq!(
        finding.diagnostic.message,
        "node `weekly`: schedule `*/5 * * * *` in UTC fires only 5 minutes apart (first between 2026-01-01T00:00Z and 2026-01-01T00:05Z), but tenant policy requires at least 15 minutes between firings"
    );
    assert_eq!(shortest_gap("*/5 * * * *", chrono_tz::UTC, Some(15)).unwrap(), Some((5, utc(2026, 1, 1, 0, 0))));
}

#[test]
fn a_gap_equal_to_the_policy_is_allowed() {
    assert_eq!(codes(&run(json!({ "cron": "*/15 * * * *", "timezone": "UTC" }), Some(15))), vec![]);
    assert_eq!(codes(&run(json!({ "cron": "*/15 * * * *", "timezone": "Europe/Berlin" }), Some(15))), vec![]);
    assert_eq!(shortest_gap("*/15 * * * *", chrono_tz::UTC, None).unwrap(), Some((15, utc(2026, 1, 1, 0, 0))));
    // No context, no policy: never too frequent.
    assert_eq!(codes(&run(json!({ "cron": "* * * * *" }), None)), vec![]);
    assert_eq!(codes(&run(json!({ "cron": "* * * * *" }), Some(0))), vec![]);
    assert_eq!(codes(&run(json!({ "cron": "* * * * *" }), Some(1))), vec![]);
}

#[test]
fn hourly_against_a_sixty_one_minute_policy() {
    let finding = only(json!({ "cron": "0 * * * *" }), Some(61), Code::TriggerScheduleTooFrequent);
    assert!(
        finding
            .diagnostic
            .message
            .contains("fires only 60 minutes apart (first between 2026-01-01T00:00Z and 2026-01-01T01:00Z)")
    );
    assert!(finding.diagnostic.message.ends_with("requires at least 61 minutes between firings"));
    assert_eq!(codes(&run(json!({ "cron": "0 * * * *" }), Some(60))), vec![]);
}

#[test]
fn spacing_counts_not_only_the_rate() {
    // Twice an hour, but 10 minutes apart.
    assert_eq!(shortest_gap("0,10 * * * *", chrono_tz::UTC, None).unwrap(), Some((10, utc(2026, 1, 1, 0, 0))));
    only(json!({ "cron": "0,10 * * * *" }), Some(15), Code::TriggerScheduleTooFrequent);
}

#[test]
fn the_shortest_gap_can_occur_once_a_year_in_utc() {
    // 2026-01-01 -> 2026-03-01 is 59 days; 2026-03-01 -> 2027-01-01 is 306 days.
    assert_eq!(shortest_gap("0 0 1 1,3 *", chrono_tz::UTC, None).unwrap(), Some((59 * 1440, utc(2026, 1, 1, 0, 0))));
    // 2026-03-01 -> 2026-05-01 is 61 days, 2026-05-01 -> 2027-03-01 is 304: once, in March.
    assert_eq!(shortest_gap("0 0 1 3,5 *", chrono_tz::UTC, None).unwrap(), Some((61 * 1440, utc(2026, 3, 1, 0, 0))));
    // A yearly schedule: its one gap (2026 is not a leap year) ends after the reference year.
    assert_eq!(shortest_gap("0 0 1 1 *", chrono_tz::UTC, None).unwrap(), Some((365 * 1440, utc(2026, 1, 1, 0, 0))));
    // 29 February: no firing in 2026, so the first gap counts, 2028-02-29 -> 2032-02-29.
    assert_eq!(shortest_gap("0 0 29 2 *", chrono_tz::UTC, None).unwrap(), Some((1461 * 1440, utc(2028, 2, 29, 0, 0))));
    let finding = only(json!({ "cron": "0 0 1 1,3 *" }), Some(60 * 1440), Code::TriggerScheduleTooFrequent);
    assert!(
        finding
            .diagnostic
            .message
            .contains("fires only 84960 minutes apart (first between 2026-01-01T00:00Z and 2026-03-01T00:00Z)")
    );
}

#[test]
fn with_a_limit_the_first_violating_gap_is_reported() {
    // `0,40 1,3 * * *` in Berlin: 40-minute gaps every day, 20 minutes once (spring forward).
    // A 41-minute policy stops at the first 40-minute gap, on the first day.
    assert_eq!(shortest_gap("0,40 1,3 * * *", BERLIN, Some(41)).unwrap(), Some((40, utc(2026, 1, 1, 0, 0))));
    assert_eq!(shortest_gap("0,40 1,3 * * *", BERLIN, Some(21)).unwrap(), Some((20, utc(2026, 3, 29, 0, 40))));
    // No gap below the limit: the shortest gap.
    assert_eq!(shortest_gap("0,40 1,3 * * *", BERLIN, Some(20)).unwrap(), Some((20, utc(2026, 3, 29, 0, 40))));
}

// ---- daylight saving time (Europe/Berlin) ----

#[test]
fn every_twenty_minutes_from_one_to_three_across_both_clock_changes() {
    let cron = "*/20 1-3 * * *";
    // Spring forward, 2026-03-29: 01:00, 01:20, 01:40 CET, then 02:00-02:59 does not exist
    // and this interval job skips it, then 03:00, 03:20, 03:40 CEST. 01:40 CET -> 03:00 CEST is
    // 80 minutes on the wall clock but 20 real minutes.
    assert_eq!(
        firings(cron, BERLIN, utc(2026, 3, 28, 23, 0), utc(2026, 3, 29, 12, 0)).unwrap(),
        [utc(2026, 3, 29, 0, 0), utc(2026, 3, 29, 0, 20), utc(2026, 3, 29, 0, 40)]
            .into_iter()
            .chain([utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 20), utc(2026, 3, 29, 1, 40)])
            .collect::<Vec<_>>()
    );
    // Fall back, 2026-10-25: 02:00-02:40 run in CEST and again in CET; twelve firings, all 20
    // minutes apart, from 01:00 CEST (2026-10-24T23:00Z) to 03:40 CET (02:40Z).
    let fall = firings(cron, BERLIN, utc(2026, 10, 24, 12, 0), utc(2026, 10, 25, 12, 0)).unwrap();
    let expected: Vec<_> = (0..12).map(|i| utc(2026, 10, 24, 23, 0) + chrono::TimeDelta::minutes(20 * i)).collect();
    assert_eq!(fall, expected);
    // So neither change makes a gap shorter than the everyday 20 minutes: the shortest gap is
    // 20 minutes, first on 2026-01-01 01:00 CET.
    assert_eq!(shortest_gap(cron, BERLIN, None).unwrap(), Some((20, utc(2026, 1, 1, 0, 0))));
    let config = json!({ "cron": cron, "timezone": "Europe/Berlin" });
    assert_eq!(codes(&run(config.clone(), Some(19))), vec![]);
    assert_eq!(codes(&run(config.clone(), Some(20))), vec![]);
    let finding = only(config, Some(21), Code::TriggerScheduleTooFrequent);
    assert!(
        finding.diagnostic.message.contains(
            "in Europe/Berlin fires only 20 minutes apart (first between 2026-01-01T00:00Z and 2026-01-01T00:20Z)"
        ),
        "{}",
        finding.diagnostic.message
    );
}

#[test]
fn spring_forward_brings_two_firings_closer() {
    // 01:00, 01:40, 03:00, 03:40: gaps of 40, 80, 40 minutes, except on 2026-03-29, where
    // 01:40 CET (00:40Z) -> 03:00 CEST (01:00Z) is 20 real minutes, once a year.
    let cron = "0,40 1,3 * * *";
    assert_eq!(shortest_gap(cron, BERLIN, None).unwrap(), Some((20, utc(2026, 3, 29, 0, 40))));
    let config = json!({ "cron": cron, "timezone": "Europe/Berlin" });
    assert_eq!(codes(&run(config.clone(), Some(19))), vec![]);
    assert_eq!(codes(&run(config.clone(), Some(20))), vec![]);
    let finding = only(config, Some(21), Code::TriggerScheduleTooFrequent);
    assert!(
        finding
            .diagnostic
            .message
            .contains("fires only 20 minutes apart (first between 2026-03-29T00:40Z and 2026-03-29T01:00Z)")
    );
    // In UTC the same expression is never closer than 40 minutes.
    assert_eq!(shortest_gap(cron, chrono_tz::UTC, None).unwrap(), Some((40, utc(2026, 1, 1, 1, 0))));
}

#[test]
fn fall_back_brings_two_firings_closer() {
    // 02:00, 02:40: a 40-minute gap every day. On 2026-10-25 both run twice: 02:00 CEST
    // (00:00Z), 02:40 CEST (00:40Z), 02:00 CET (01:00Z), 02:40 CET (01:40Z): 40, 20, 40. On
    // 2026-03-29 neither exists, and this interval job does not run that day at all.
    let cron = "0,40 2 * * *";
    assert_eq!(
        firings(cron, BERLIN, utc(2026, 10, 24, 12, 0), utc(2026, 10, 25, 12, 0)).unwrap(),
        vec![utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 0, 40), utc(2026, 10, 25, 1, 0), utc(2026, 10, 25, 1, 40)]
    );
    assert_eq!(
        firings(cron, BERLIN, utc(2026, 3, 28, 12, 0), utc(2026, 3, 30, 12, 0)).unwrap(),
        vec![utc(2026, 3, 30, 0, 0), utc(2026, 3, 30, 0, 40)]
    );
    assert_eq!(shortest_gap(cron, BERLIN, None).unwrap(), Some((20, utc(2026, 10, 25, 0, 40))));
    let config = json!({ "cron": cron, "timezone": "Europe/Berlin" });
    assert_eq!(codes(&run(config.clone(), Some(20))), vec![]);
    let finding = only(config, Some(21), Code::TriggerScheduleTooFrequent);
    assert!(finding.diagnostic.message.contains("(first between 2026-10-25T00:40Z and 2026-10-25T01:00Z)"));
}

#[test]
fn a_daily_job_in_the_skipped_hour_runs_when_the_gap_ends() {
    // `0 2 * * *` is a fixed-time job: on 2026-03-29 02:00 does not exist, and it runs at the
    // first instant after the gap, 03:00 CEST = 01:00Z, as on the CET day before (02:00 CET =
    // 01:00Z: 24 hours). The next day it runs at 02:00 CEST = 00:00Z: 23 hours, the only such
    // gap of the year. In the fall it runs once, at the earlier 02:00 (CEST, 00:00Z); the day
    // after at 02:00 CET = 01:00Z: 25 hours.
    let cron = "0 2 * * *";
    assert_eq!(
        firings(cron, BERLIN, utc(2026, 3, 27, 12, 0), utc(2026, 3, 31, 12, 0)).unwrap(),
        vec![utc(2026, 3, 28, 1, 0), utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 0), utc(2026, 3, 31, 0, 0)]
    );
    assert_eq!(
        firings(cron, BERLIN, utc(2026, 10, 24, 12, 0), utc(2026, 10, 26, 12, 0)).unwrap(),
        vec![utc(2026, 10, 25, 0, 0), utc(2026, 10, 26, 1, 0)]
    );
    assert_eq!(shortest_gap(cron, BERLIN, None).unwrap(), Some((23 * 60, utc(2026, 3, 29, 1, 0))));
    let config = json!({ "cron": cron, "timezone": "Europe/Berlin" });
    assert_eq!(codes(&run(config.clone(), Some(1380))), vec![]);
    let finding = only(config, Some(1381), Code::TriggerScheduleTooFrequent);
    assert!(
        finding
            .diagnostic
            .message
            .contains("fires only 1380 minutes apart (first between 2026-03-29T01:00Z and 2026-03-30T00:00Z)")
    );

    // `30 2 * * *`: 02:30 CET (01:30Z) on the 28th, 03:00 CEST (01:00Z) on the 29th, 02:30
    // CEST (00:30Z) on the 30th: two 23.5-hour gaps in a row; ties go to the earlier.
    assert_eq!(shortest_gap("30 2 * * *", BERLIN, None).unwrap(), Some((1410, utc(2026, 3, 28, 1, 30))));
    // Outside the skipped hour a daily job only sees the 23-hour day: 01:30 CET (00:30Z) on the
    // 28th, 01:30 CET (00:30Z) on the 29th, 01:30 CEST (23:30Z) on the 29th.
    assert_eq!(shortest_gap("30 1 * * *", BERLIN, None).unwrap(), Some((1380, utc(2026, 3, 29, 0, 30))));
}

#[test]
fn the_reference_year_starts_at_local_midnight() {
    // 00:00 on 2026-01-01 in Berlin is 2025-12-31T23:00Z: the first firing of `0 0 * * *`.
    assert_eq!(
        firings("0 0 * * *", BERLIN, utc(2025, 12, 31, 0, 0), utc(2026, 1, 2, 0, 0)).unwrap(),
        vec![utc(2025, 12, 31, 23, 0), utc(2026, 1, 1, 23, 0)]
    );
    assert_eq!(shortest_gap("0 0 * * *", BERLIN, None).unwrap(), Some((1380, utc(2026, 3, 28, 23, 0))));
}

// ---- performance ----

#[test]
fn a_violation_stops_the_expansion_early_and_a_compliant_year_is_fast() {
    let started = std::time::Instant::now();
    assert_eq!(shortest_gap("* * * * *", BERLIN, Some(15)).unwrap(), Some((1, utc(2025, 12, 31, 23, 0))));
    let early = started.elapsed();
    let started = std::time::Instant::now();
    assert_eq!(shortest_gap("*/15 * * * *", BERLIN, Some(15)).unwrap(), Some((15, utc(2025, 12, 31, 23, 0))));
    let year = started.elapsed();
    eprintln!("`* * * * *` with a violation: {early:?}; `*/15 * * * *` over a year (35,040 firings): {year:?}");
    // Generous bounds: this also runs unoptimized.
    assert!(early.as_millis() < 50, "{early:?}");
    assert!(year.as_secs() < 5, "{year:?}");
}

#[test]
fn a_half_hour_clock_change() {
    // Australia/Lord_Howe moves its clock by 30 minutes: on 2026-10-04 02:00 LHST (UTC+10:30)
    // becomes 02:30 LHDT (UTC+11). `0 2 * * *` runs at 02:30 LHDT that day (15:30Z on the 3rd,
    // 24 hours after the day before), then at 02:00 LHDT (15:00Z on the 4th): 23.5 hours.
    let tz = chrono_tz::Australia::Lord_Howe;
    assert_eq!(
        firings("0 2 * * *", tz, utc(2026, 10, 2, 12, 0), utc(2026, 10, 5, 12, 0)).unwrap(),
        vec![utc(2026, 10, 2, 15, 30), utc(2026, 10, 3, 15, 30), utc(2026, 10, 4, 15, 0)]
    );
    assert_eq!(shortest_gap("0 2 * * *", tz, None).unwrap(), Some((1410, utc(2026, 10, 3, 15, 30))));
}

#[test]
fn the_shortest_gap_agrees_with_the_expanded_firings() {
    for (cron, tz) in [
        ("*/20 1-3 * * *", BERLIN),
        ("0,40 1,3 * * *", BERLIN),
        ("0,40 2 * * *", BERLIN),
        ("30 2 * * *", BERLIN),
        ("15 1,2,3 * * 0", chrono_tz::America::New_York),
        ("0 0 1,15 * *", chrono_tz::UTC),
    ] {
        // From local midnight on 2026-01-01 (at most 14 hours either side of UTC midnight) to
        // well past the year's end.
        let all = firings(cron, tz, utc(2025, 12, 31, 0, 0), utc(2027, 3, 1, 0, 0)).unwrap();
        let start = tz.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).earliest().unwrap().with_timezone(&Utc);
        let end = tz.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).earliest().unwrap().with_timezone(&Utc);
        let brute = all
            .windows(2)
            .filter(|pair| pair[0] >= start && pair[0] < end)
            .map(|pair| ((pair[1] - pair[0]).num_minutes() as u64, pair[0]))
            .min_by_key(|&(gap, at)| (gap, at));
        assert_eq!(shortest_gap(cron, tz, None).unwrap(), brute, "{cron} in {}", tz.name());
    }
}
