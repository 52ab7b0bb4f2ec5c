//! JCS number serialization (RFC 8785 §3.2.2.3) with the project's exact-integer rule.

use std::borrow::Cow;

use crate::CanonicalError;

/// Formats a double as ECMAScript `Number.prototype.toString` does, which is what
/// JCS requires. `None` for NaN and ±infinity (JSON has no spelling for them);
/// `-0` becomes `"0"`.
pub fn format_es6_number(x: f64) -> Option<String> {
    // ryu-js implements the ES shortest-round-trip algorithm and the ES choice between
    // fixed and exponent notation; the es6-numbers vectors check it line by line.
    x.is_finite().then(|| ryu_js::Buffer::new().format_finite(x).to_owned())
}

/// The canonical text of a JSON number lexeme.
///
/// An integer lexeme (optional `-`, digits, no fraction or exponent) whose magnitude is
/// beyond 2^53 keeps its exact digits: rounding it to a double would let two different
/// documents share a hash. Every other lexeme is read as the nearest IEEE double and
/// written in ES6 form; a lexeme that is not a JSON number, or whose value overflows
/// to infinity, is an error.
pub fn canonical_number(lexeme: &str) -> Result<Cow<'_, str>, CanonicalError> {
    let shape = number_shape(lexeme).ok_or_else(|| CanonicalError::new(format!("`{lexeme}` is not a JSON number")))?;
    if shape == Shape::Integer {
        // The grammar forbids leading zeros, so an integer's lexeme is already minimal:
        // below 2^53 it is exactly what ES6 prints (no exponent before 1e21), and beyond
        // it the lexeme is kept. Only negative zero prints differently.
        return Ok(if lexeme == "-0" { Cow::Borrowed("0") } else { Cow::Borrowed(lexeme) });
    }
    // Rust's float parser is correctly rounded and accepts every JSON number lexeme.
    let x: f64 = lexeme.parse().map_err(|_| CanonicalError::new(format!("`{lexeme}` is not a JSON number")))?;
    format_es6_number(x)
        .map(Cow::Owned)
        .ok_or_else(|| CanonicalError::new(format!("`{lexeme}` is outside the range of IEEE-754 doubles")))
}

/// Whether a JSON number lexeme has a canonical form, i.e. lies within the range of
/// doubles. Without an exponent, a lexeme of up to 300 characters is below 1e300 and so
/// in range: only the rest (rare) is parsed, where formatting every number was most of
/// the cost of looking for the one that overflows.
pub fn has_canonical_form(lexeme: &str) -> bool {
    let may_overflow = lexeme.len() > 300 || lexeme.bytes().any(|b| b == b'e' || b == b'E');
    (!may_overflow && number_shape(lexeme).is_some()) || canonical_number(lexeme).is_ok()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Integer,
    Other,
}

/// Checks the RFC 8259 number grammar:
/// `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`.
/// Needed because `f64::from_str` also accepts `inf`, `NaN`, `+1`, `.5`, `1.` and so on.
fn number_shape(lexeme: &str) -> Option<Shape> {
    let bytes = lexeme.as_bytes();
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();

    let int_len = digits(i);
    if int_len == 0 || (int_len > 1 && bytes[i] == b'0') {
        return None;
    }
    i += int_len;
    let mut shape = Shape::Integer;

    if bytes.get(i) == Some(&b'.') {
        let frac_len = digits(i + 1);
        if frac_len == 0 {
            return None;
        }
        i += 1 + frac_len;
        shape = Shape::Other;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_len = digits(i);
        if exp_len == 0 {
            return None;
        }
        i += exp_len;
        shape = Shape::Other;
    }
    (i == bytes.len()).then_some(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(lexeme: &str) -> String {
        canonical_number(lexeme).unwrap().into_owned()
    }

    #[test]
    fn es6_formatting_basics() {
        assert_eq!(format_es6_number(-0.0).as_deref(), Some("0"));
        assert_eq!(format_es6_number(1.0).as_deref(), Some("1"));
        assert_eq!(format_es6_number(1e21).as_deref(), Some("1e+21"));
        assert_eq!(format_es6_number(1e20).as_deref(), Some("100000000000000000000"));
        assert_eq!(format_es6_number(1e-7).as_deref(), Some("1e-7"));
        assert_eq!(format_es6_number(0.000001).as_deref(), Some("0.000001"));
        assert_eq!(format_es6_number(f64::NAN), None);
        assert_eq!(format_es6_number(f64::INFINITY), None);
        assert_eq!(format_es6_number(f64::NEG_INFINITY), None);
    }

    #[test]
    fn doubles_are_normalized() {
        assert_eq!(canon("-0"), "0");
        assert_eq!(canon("-0.0e5"), "0");
        assert_eq!(canon("1.0"), "1");
        assert_eq!(canon("1E2"), "100");
        assert_eq!(canon("4.50"), "4.5");
        assert_eq!(canon("2e-3"), "0.002");
        assert_eq!(canon("1E30"), "1e+30");
        assert_eq!(canon("333333333.33333329"), "333333333.3333333");
        // Underflow is not an error: JavaScript reads it as zero too.
        assert_eq!(canon("1e-400"), "0");
    }

    #[test]
    fn big_integers_keep_their_digits() {
        assert_eq!(canon("9007199254740993"), "9007199254740993");
        assert_eq!(canon("-123456789012345678901234567890"), "-123456789012345678901234567890");
        // Exactly 2^53 (and below) is safe: the double has the same digits.
        assert_eq!(canon("9007199254740992"), "9007199254740992");
        assert_eq!(canon("-9007199254740992"), "-9007199254740992");
        // A fraction or exponent makes it an ordinary double, rounded.
        assert_eq!(canon("9007199254740993.0"), "9007199254740992");
        assert_eq!(canon("9007199254740993e0"), "9007199254740992");
        assert_eq!(canon("123456789012345678901234567890e0"), "1.2345678901234568e+29");
    }

    /// The quick answer agrees with the canonical form, on both sides of every shortcut.
    #[test]
    fn has_canonical_form_is_canonical_number_succeeding() {
        let long_integer = "9".repeat(310);
        let long_decimal = format!("{}.5", "9".repeat(299));
        let too_long_decimal = format!("{}.5", "9".repeat(320));
        for lexeme in [
            "0",
            "-0",
            "1.5",
            "-2.25e-3",
            "1e308",
            "1.7976931348623157e308",
            "1.8e308",
            "1e400",
            "-1E400",
            "1e-400",
            "NaN",
            "1.",
            ".5",
            "",
            &long_integer,
            &long_decimal,
            &too_long_decimal,
        ] {
            assert_eq!(has_canonical_form(lexeme), canonical_number(lexeme).is_ok(), "{lexeme}");
        }
    }

    #[test]
    fn infinite_and_malformed_lexemes_are_errors() {
        for bad in [
            "1e400",
            "-1e400",
            "NaN",
            "Infinity",
            "-Infinity",
            "inf",
            "",
            "-",
            "+1",
            ".5",
            "1.",
            "01",
            "-01",
            "1e",
            "1e+",
            "0x10",
            " 1",
            "1 ",
            "1.5.5",
            "--1",
        ] {
            assert!(canonical_number(bad).is_err(), "{bad:?} should be rejected");
        }
        let message = canonical_number("1e400").unwrap_err().message;
        assert!(message.contains("1e400"), "{message}");
    }
}
