//! The fast member order agrees with sorting by UTF-16 code units, which RFC 8785 asks for.

use std::cmp::Ordering;

use little_hashing::utf16_order;
use proptest::prelude::*;

fn reference(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Characters from the ranges where byte and UTF-16 order disagree, and their neighbours.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        Just('a'),
        Just('\u{7f}'),
        Just('\u{e9}'),
        Just('\u{d7ff}'),
        Just('\u{e000}'),
        Just('\u{fb01}'),
        Just('\u{ffff}'),
        Just('\u{10000}'),
        Just('\u{1f600}'),
        Just('\u{10ffff}'),
        any::<char>(),
    ]
}

proptest! {
    #[test]
    fn agrees_with_utf16_code_units(
        prefix in proptest::collection::vec(tricky_char(), 0..3),
        a in proptest::collection::vec(tricky_char(), 0..4),
        b in proptest::collection::vec(tricky_char(), 0..4),
    ) {
        let p: String = prefix.into_iter().collect();
        let a = format!("{p}{}", a.into_iter().collect::<String>());
        let b = format!("{p}{}", b.into_iter().collect::<String>());
        prop_assert_eq!(utf16_order(&a, &b), reference(&a, &b), "{:?} vs {:?}", a, b);
    }
}

#[test]
fn a_supplementary_character_sorts_before_the_end_of_the_basic_plane() {
    assert_eq!(utf16_order("\u{1f600}", "\u{fb01}"), Ordering::Less);
    assert_eq!(utf16_order("x\u{ffff}", "x\u{10000}"), Ordering::Greater);
    assert_eq!(utf16_order("ab", "abc"), Ordering::Less);
    assert_eq!(utf16_order("b", "ab"), Ordering::Greater);
}
