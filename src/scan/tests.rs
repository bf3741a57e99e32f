use super::*;
use proptest::prelude::*;
use serde::de::IgnoredAny;

/// Deterministic pseudo-random numbers for the randomized tests (an LCG).
fn rng64(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed
    }
}

fn rng(seed: u64) -> impl FnMut() -> usize {
    let mut next = rng64(seed);
    move || (next() >> 33) as usize
}

fn serde_ok(s: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(s).is_ok()
}

fn agrees(s: &str) {
    if let Some(ok) = is_valid_json(s) {
        assert_eq!(ok, serde_ok(s), "validity of {s:?}");
    }
}

#[test]
fn accepts_what_serde_accepts() {
    for s in [
        r#"{}"#,
        r#" { "a" : [ 1 , -0.5e+3 , true , false , null , "x\"\\\/\b\f\n\r\t\u00e9\uD800" ] } "#,
        r#"[[[[{"a":{}}]]]]"#,
        r#""just a string""#,
        "0",
        "-0",
        "1E5",
        "123.456e-7",
        r#"{"k":"é ü 日本 🎉"}"#,
    ] {
        assert_eq!(is_valid_json(s), Some(true), "{s}");
        assert!(serde_ok(s), "{s}");
    }
}

#[test]
fn rejects_what_serde_rejects() {
    for s in [
        "",
        " ",
        "{",
        "}",
        "[1,]",
        r#"{"a":1,}"#,
        r#"{"a" 1}"#,
        r#"{a:1}"#,
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "tru",
        "nulll",
        "[1 2]",
        r#""\x""#,
        r#""\u12G4""#,
        r#""\u12""#,
        "\"tab\there\"",
        "\"nl\nx\"",
        r#""open"#,
        "{} {}",
        "[}",
        "{]",
        "NaN",
        r#"{"a":1}x"#,
        r#"{"a":[1,2}"#,
    ] {
        assert_eq!(is_valid_json(s), Some(false), "{s:?}");
        assert!(!serde_ok(s), "{s:?}");
    }
    // DEL (0x7f) is not a control character for JSON.
    assert_eq!(is_valid_json("\"\u{7f}\""), Some(true));
    assert!(serde_ok("\"\u{7f}\""));
}

#[test]
fn strings_longer_than_a_vector_are_checked_everywhere() {
    for len in 0..70 {
        for pos in 0..len {
            for bad in [b'\n', 0x01u8, 0x1f] {
                let mut s = vec![b'a'; len];
                s[pos] = bad;
                let text = format!("\"{}\"", String::from_utf8(s).unwrap());
                assert_eq!(is_valid_json(&text), Some(false), "len {len} pos {pos}");
            }
            let mut s = vec![b'a'; len];
            s[pos] = b'"';
            let text = format!("\"{}\"", String::from_utf8(s).unwrap());
            agrees(&text);
        }
    }
}

#[test]
fn the_vector_and_word_masks_flag_exactly_the_special_bytes() {
    let specials = [b'"', b'\\', 0u8, b'\n', 0x1f];
    let plain = [
        b'a', b' ', 0x20, 0x7f, 0x80, 0xff, b'!', b'#', b']', b'^', 0xe0,
    ];
    let mut next = rng(7);
    for _ in 0..20_000 {
        let len = next() % 40;
        let mut b: Vec<u8> = (0..len).map(|_| plain[next() % plain.len()]).collect();
        for _ in 0..next() % 6 {
            if len > 0 {
                let at = next() % len;
                b[at] = specials[next() % specials.len()];
            }
        }
        let expected = |block: usize, i: usize| -> Option<u32> {
            let bytes = b.get(i..i + block)?;
            Some(
                bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| is_special(c))
                    .map(|(k, _)| 1u32 << k)
                    .sum(),
            )
        };
        for i in 0..=len {
            assert_eq!(
                simd::special_mask(&b, i),
                expected(simd::BLOCK, i),
                "{b:?} at {i}"
            );
            assert_eq!(
                swar::special_mask(&b, i),
                expected(swar::BLOCK, i),
                "{b:?} at {i}"
            );
        }
    }
}

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[test]
fn escaped_characters_by_carry_arithmetic_match_the_definition() {
    let mut next = rng64(5);
    for round in 0..200_000 {
        // Dense and sparse backslash masks, long runs included.
        let backslash = match round % 4 {
            0 => next(),
            1 => next() & next(),
            2 => next() | next(),
            _ => (next() >> (next() % 64)) << (next() % 64),
        };
        let carry_in = next() & 1;
        let (mut expected, mut escaping) = (0u64, carry_in == 1);
        for k in 0..64 {
            if escaping {
                expected |= 1 << k;
                escaping = false;
            } else if backslash >> k & 1 == 1 {
                escaping = true;
            }
        }
        let mut carry = carry_in;
        assert_eq!(
            long::escaped(backslash, &mut carry),
            expected,
            "{backslash:064b} carry {carry_in}"
        );
        assert_eq!(carry, escaping as u64, "carry out of {backslash:064b}");
    }
}

#[test]
fn long_strings_get_the_verdict_of_the_block_scan() {
    let pieces: [&str; 14] = [
        "a",
        "bcdefgh",
        "\\\"",
        "\\\\",
        "\\n",
        "\\u00e9",
        "\\uD83D\\uDE00",
        "é",
        "🎉",
        "\"",
        "\\",
        "\\x",
        "\\u12G4",
        "\n",
    ];
    let mut next = rng(9);
    for _ in 0..30_000 {
        let mut t = String::new();
        let target = next() % 400;
        let bad = next().is_multiple_of(3);
        while t.len() < target {
            let p = pieces[next() % if bad { 14 } else { 9 }];
            t.push_str(p);
        }
        t.push_str("\"tail");
        let b = t.as_bytes();
        assert_eq!(long::string(b, 0), string_blocks(b, 0), "{t:?}");
        let start = next() % (b.len() + 1);
        assert_eq!(
            long::string(b, start),
            string_blocks(b, start),
            "{t:?} from {start}"
        );
    }
}

#[test]
fn escapes_across_and_inside_blocks() {
    for pad in 0..40 {
        for esc in [r#"\""#, r"\\", r"\n", r"\u00e9", r"\uD83D\uDE00", r"\/"] {
            let text = format!(
                "\"{}{esc}{}{esc}{esc}\"",
                "a".repeat(pad),
                "b".repeat(pad % 7)
            );
            assert_eq!(is_valid_json(&text), Some(true), "{text}");
            assert!(serde_ok(&text));
            let bad = format!("\"{}{esc}\\x\"", "a".repeat(pad));
            assert_eq!(is_valid_json(&bad), Some(false), "{bad}");
            let torn = format!("\"{}{}", "a".repeat(pad), &esc[..esc.len() - 1]);
            assert_eq!(is_valid_json(&torn), Some(false), "{torn}");
        }
    }
}

#[test]
fn deep_nesting_is_left_to_serde() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(is_valid_json(&deep), None);
    let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert_eq!(is_valid_json(&ok), Some(true));
}

#[test]
fn picks_fields_and_nested_fields() {
    let line = r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m"},"id":"a2"}"#;
    let s = scan_object(
        line,
        &["type", "id", "parentId", "message", "absent"],
        Some((3, &["role", "provider", "model"])),
    )
    .unwrap();
    assert_eq!(
        s.fields,
        vec![
            Some(r#""message""#),
            Some(r#""a2""#),
            Some("null"),
            Some(
                r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m"}"#
            ),
            None
        ]
    );
    assert_eq!(
        s.nested,
        vec![Some(r#""assistant""#), Some(r#""p""#), Some(r#""m""#)]
    );
}

#[test]
fn a_later_non_object_message_clears_the_nested_fields() {
    let s = scan_object(r#"{"m":{"role":"x"},"m":3}"#, &["m"], Some((0, &["role"]))).unwrap();
    assert_eq!(s.fields, vec![Some("3")]);
    assert_eq!(s.nested, vec![None]);
}

#[test]
fn escaped_top_level_keys_and_invalid_lines_are_left_to_serde() {
    assert_eq!(scan_object(r#"{"t\u0079pe":"x"}"#, &["type"], None), None);
    assert_eq!(scan_object(r#"{"type":"x",}"#, &["type"], None), None);
    assert_eq!(scan_object(r#"[1]"#, &["type"], None), None);
    // Inside values, escaped keys are fine.
    assert!(scan_object(r#"{"type":{"t\u0079pe":1}}"#, &["type"], None).is_some());
}

fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| f.to_string()),
        "[ -~é\u{1F389}\\\\\"\n\t\u{1}]{0,40}".prop_map(|s| serde_json::to_string(&s).unwrap()),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("[a-z\\\\\"]{0,6}", inner), 0..6).prop_map(|kv| {
                let body: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("{}:{v}", serde_json::to_string(&k).unwrap()))
                    .collect();
                format!("{{{}}}", body.join(" , "))
            }),
        ]
    })
}

proptest! {
    #[test]
    fn valid_json_is_accepted(s in json_text()) {
        prop_assert_eq!(is_valid_json(&s), Some(true));
    }

    #[test]
    fn mutated_json_gets_the_same_verdict_as_serde(
        s in json_text(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(
            vec!["", "\"", "\\", ",", ":", "{", "}", "[", "]", "0", "-", ".", "e", "\n", "\u{1}", "x", " ", "u", "\\u00"])), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut t = s.clone();
        for (at, what) in edits {
            let mut p = at.index(t.len() + 1);
            while !t.is_char_boundary(p) { p -= 1; }
            t.insert_str(p, what);
        }
        agrees(&t);
        let mut c = cut.index(t.len() + 1);
        while !t.is_char_boundary(c) { c -= 1; }
        agrees(&t[..c]);
    }
}
