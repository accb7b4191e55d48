//! Every timestamp and duration accessor against the definitions of the CEL language
//! definition ("Date/Time Functions"): the examples it gives, with and without a time zone
//! (UTC, fixed offsets, IANA zones with daylight saving), across day, month and year
//! boundaries, before the epoch and at both ends of CEL's timestamp range. Durations convert to
//! whole hours, minutes and seconds, except `getMilliseconds`, which is the milliseconds
//! *portion* of the duration.

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::eval::{Activation, Limits, Program, Value};
use ozcheck_analyzer::{Options, compile};

fn eval(source: &str) -> Result<Value, String> {
    let checked = compile(source, &Env::general(), &Options::default())
        .map_err(|d| format!("{source}: {}", d[0].message))?;
    let program = Program::from_checked(&checked).map_err(|d| d[0].message.clone())?;
    program
        .eval(&Activation::new(), &Limits::default())
        .map(|e| e.value)
        .map_err(|e| e.to_string())
}

fn int(source: &str) -> i64 {
    match eval(source) {
        Ok(Value::Int(i)) => i,
        other => panic!("{source}: {other:?}"),
    }
}

#[test]
fn the_examples_of_the_language_definition_hold() {
    let cases = [
        ("timestamp('2023-12-25T00:00:00Z').getDate()", 25),
        (
            "timestamp('2023-12-25T00:00:00Z').getDate('America/Los_Angeles')",
            24,
        ),
        ("timestamp('2023-12-25T00:00:00Z').getDayOfMonth()", 24),
        (
            "timestamp('2023-12-25T00:00:00Z').getDayOfMonth('America/Los_Angeles')",
            23,
        ),
        ("timestamp('2023-12-25T12:00:00Z').getDayOfWeek()", 1),
        ("timestamp('2023-12-25T12:00:00Z').getDayOfYear()", 358),
        ("timestamp('2023-12-25T12:00:00Z').getFullYear()", 2023),
        ("timestamp('2023-12-25T12:00:00Z').getHours()", 12),
        ("duration('3h').getHours()", 3),
        (
            "timestamp('2023-12-25T12:00:00.500Z').getMilliseconds()",
            500,
        ),
        ("duration('1.234s').getMilliseconds()", 234),
        ("timestamp('2023-12-25T12:30:00Z').getMinutes()", 30),
        ("duration('1h30m').getMinutes()", 90),
        ("timestamp('2023-12-25T12:00:00Z').getMonth()", 11),
        ("timestamp('2023-12-25T12:30:30Z').getSeconds()", 30),
        ("duration('1m30s').getSeconds()", 90),
    ];
    for (source, want) in cases {
        assert_eq!(int(source), want, "{source}");
    }
}

#[test]
fn durations_convert_whole_units_but_give_the_milliseconds_portion() {
    let cases = [
        // cel-spec's `duration_converters`: 123.321456789s has 321 ms in its fraction.
        ("duration('123.321456789s').getMilliseconds()", 321),
        ("duration('123.321456789s').getSeconds()", 123),
        ("duration('10000s').getHours()", 2),
        ("duration('3730s').getMinutes()", 62),
        ("duration('3730s').getSeconds()", 3730),
        ("duration('2h0.999s').getMilliseconds()", 999),
        ("duration('59m59.999s').getHours()", 0),
        // Negative durations truncate toward zero and keep their sign.
        ("duration('-1.5s').getSeconds()", -1),
        ("duration('-1.5s').getMilliseconds()", -500),
        ("duration('-90m').getHours()", -1),
        ("duration('-90m').getMinutes()", -90),
        ("duration('0s').getMilliseconds()", 0),
        ("duration('999us').getMilliseconds()", 0),
    ];
    for (source, want) in cases {
        assert_eq!(int(source), want, "{source}");
    }
}

#[test]
fn time_zones_move_every_calendar_field() {
    let t = "timestamp('2023-01-01T02:00:00.250Z')";
    let cases = [
        // Five hours west, the instant is still 2022-12-31 (a Saturday, day 364).
        ("getFullYear('-05:00')", 2022),
        ("getMonth('-05:00')", 11),
        ("getDate('-05:00')", 31),
        ("getDayOfMonth('-05:00')", 30),
        ("getDayOfWeek('-05:00')", 6),
        ("getDayOfYear('-05:00')", 364),
        ("getHours('-05:00')", 21),
        ("getMinutes('+05:30')", 30),
        ("getHours('+05:30')", 7),
        ("getMilliseconds('-05:00')", 250),
        ("getSeconds('Asia/Kolkata')", 0),
        ("getHours('UTC')", 2),
        ("getFullYear()", 2023),
        ("getDayOfWeek()", 0),
        ("getDayOfYear()", 0),
    ];
    for (accessor, want) in cases {
        let source = format!("{t}.{accessor}");
        assert_eq!(int(&source), want, "{source}");
    }
    // Daylight saving time: Paris is one hour ahead of UTC in winter, two in summer.
    assert_eq!(
        int("timestamp('2023-01-15T12:00:00Z').getHours('Europe/Paris')"),
        13
    );
    assert_eq!(
        int("timestamp('2023-07-15T12:00:00Z').getHours('Europe/Paris')"),
        14
    );
    assert!(eval("timestamp('2023-01-15T12:00:00Z').getHours('Mars/Olympus')").is_err());
}

#[test]
fn the_calendar_holds_before_the_epoch_and_at_the_ends_of_the_range() {
    let cases = [
        (
            "timestamp('1969-12-31T23:59:59.999Z').getMilliseconds()",
            999,
        ),
        ("timestamp('1969-12-31T23:59:59.999Z').getSeconds()", 59),
        ("timestamp('1969-12-31T23:59:59.999Z').getFullYear()", 1969),
        ("timestamp('1969-12-31T23:59:59.999Z').getDayOfWeek()", 3),
        ("timestamp('2024-02-29T12:00:00Z').getDayOfYear()", 59),
        ("timestamp('2024-02-29T12:00:00Z').getDate()", 29),
        ("timestamp('2023-03-01T00:00:00Z').getDayOfYear()", 59),
        ("timestamp('0001-01-01T00:00:00Z').getFullYear()", 1),
        ("timestamp('0001-01-01T00:00:00Z').getDayOfWeek()", 1),
        (
            "timestamp('9999-12-31T23:59:59.999999999Z').getMilliseconds()",
            999,
        ),
        (
            "timestamp('9999-12-31T23:59:59.999999999Z').getDayOfYear()",
            364,
        ),
        // An offset may carry the last instant into year 10000.
        (
            "timestamp('9999-12-31T23:59:59Z').getFullYear('+01:00')",
            10000,
        ),
        ("timestamp('0001-01-01T00:00:00Z').getFullYear('-01:00')", 0),
    ];
    for (source, want) in cases {
        assert_eq!(int(source), want, "{source}");
    }
    assert!(eval("timestamp('2023-02-29T00:00:00Z')").is_err());
}
