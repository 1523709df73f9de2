//! The parser's contract: pushing any split of a document gives the one-shot value of every
//! prefix, and the best-known values of incomplete strings, numbers, literals and containers.

use super::*;
use serde_json::json;

const SAMPLE: &str = r#"{"path":"src/main.rs","edits":[{"oldText":"a\"b\\n\u00e9","newText":"line1\nline2"}],"n":-12.5e2,"ok":true,"none":null}"#;

/// Exercises more of the grammar: whitespace, nesting, surrogates, numbers, duplicates.
const RICH: &str = concat!(
    " {\n  \"k\\u00e9y\\\"\" : \"v\\ud83d\\ude00\\t\\/\\b\\f\\r😀é\",\n",
    "  \"nums\": [0, -0, 1.0, -1.25E+3, 7e-2, 12345678901234567890, -42, 3],\n",
    "  \"deep\": [[[], {}], {\"x\": [true, false, null]}, \"\"],\n",
    "  \"dup\": 1, \"z\": {\"a\": {\"b\": {\"c\": \"d\"}}}, \"dup\": \"last\" ,\n",
    "  \"empty\": {} , \"t\":true,\"f\":false , \"n\" : null\n}\n"
);

/// Pushes `fragments`, checking after every push that the incremental result equals a
/// one-shot parse of the text so far.
fn run(fragments: &[&str]) -> (PartialJsonParser, Map<String, Value>) {
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    for fragment in fragments {
        parser.push(fragment, &mut target);
        assert_eq!(
            target,
            parse_partial_object(parser.text()),
            "after {:?}",
            parser.text()
        );
    }
    (parser, target)
}

/// Splits `text` into pieces of `next_size()` bytes, moved forward to char boundaries.
fn split_by(text: &str, mut next_size: impl FnMut() -> usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + next_size().max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

/// Deterministic pseudo-random sizes in 1..=7.
fn lcg_sizes(seed: u64) -> impl FnMut() -> usize {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        usize::try_from(state >> 61).unwrap_or(0) % 7 + 1
    }
}

fn assert_final(fragments: &[&str], full: &str) {
    let (parser, target) = run(fragments);
    let expected: Value = serde_json::from_str(full).unwrap();
    assert_eq!(
        Value::Object(target.clone()),
        expected,
        "fragments {fragments:?}"
    );
    let keys: Vec<&String> = target.keys().collect();
    let expected_keys: Vec<&String> = expected.as_object().unwrap().keys().collect();
    assert_eq!(keys, expected_keys);
    assert!(parser.is_complete());
    assert!(!parser.is_broken());
    assert_eq!(parser.text(), full);
}

#[test]
fn one_char_fragments_give_the_full_value() {
    for text in [SAMPLE, RICH] {
        let fragments: Vec<&str> = text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect();
        assert_final(&fragments, text);
    }
}

#[test]
fn two_fragments_at_every_boundary_give_the_full_value() {
    for text in [SAMPLE, RICH] {
        for split in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            assert_final(&[&text[..split], &text[split..]], text);
        }
    }
}

#[test]
fn fixed_and_pseudo_random_chunk_sizes_give_the_full_value() {
    for text in [SAMPLE, RICH] {
        for size in 1..=7 {
            assert_final(&split_by(text, || size), text);
        }
        for seed in 0..20 {
            assert_final(&split_by(text, lcg_sizes(seed)), text);
        }
    }
}

#[test]
fn sample_prefixes_are_best_known_values() {
    let cases = [
        (r#"{"path":"src/ma"#, json!({"path": "src/ma"})),
        (
            r#"{"path":"src/main.rs","edits":[{"oldText":"a\"b\\"#,
            json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\"}]}),
        ),
        (
            r#"{"path":"src/main.rs","edits":[{"oldText":"a\"b\\n\u00"#,
            json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\n"}]}),
        ),
        (
            r#"{"path":"src/main.rs","edits":[{"oldText":""#,
            json!({"path": "src/main.rs", "edits": [{"oldText": ""}]}),
        ),
        (
            r#"{"path":"src/main.rs","edits":[{"oldText""#,
            json!({"path": "src/main.rs", "edits": [{}]}),
        ),
        (
            r#"{"path":"src/main.rs","edits":[{"#,
            json!({"path": "src/main.rs", "edits": [{}]}),
        ),
        (
            &SAMPLE[..SAMPLE.find("-12").unwrap() + 1],
            json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\né", "newText": "line1\nline2"}]}),
        ),
        (
            &SAMPLE[..SAMPLE.find("-12").unwrap() + 4],
            json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\né", "newText": "line1\nline2"}], "n": -12}),
        ),
        (
            &SAMPLE[..SAMPLE.find("-12").unwrap() + 6],
            json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\né", "newText": "line1\nline2"}], "n": -12.5}),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            Value::Object(parse_partial_object(text)),
            expected,
            "{text}"
        );
    }
}

#[test]
fn incomplete_strings_and_keys() {
    let cases = [
        (r#"{"path": "hel"#, json!({"path": "hel"})),
        (r#"{"path": ""#, json!({"path": ""})),
        (r#"{"path""#, json!({})),
        (r#"{"path":"#, json!({})),
        (r#"{"path": "#, json!({})),
        (r#"{"pa"#, json!({})),
        (r#"{""#, json!({})),
        ("{", json!({})),
        ("", json!({})),
        ("   ", json!({})),
        (r#"{"a":"x","b"#, json!({"a": "x"})),
        (r#"{"a":"x","#, json!({"a": "x"})),
    ];
    for (text, expected) in cases {
        assert_eq!(
            Value::Object(parse_partial_object(text)),
            expected,
            "{text}"
        );
    }
}

#[test]
fn incomplete_containers_hold_what_they_have() {
    let cases = [
        (r#"{"a": [1, {"b": "x"#, json!({"a": [1, {"b": "x"}]})),
        (r#"{"edits": ["#, json!({"edits": []})),
        (r#"{"a": {"#, json!({"a": {}})),
        (r#"{"a": [1, -"#, json!({"a": [1]})),
        (r#"{"a": [1,"#, json!({"a": [1]})),
        (r#"{"a": [[["#, json!({"a": [[[]]]})),
        (
            r#"{"a": [{"b": [{"c": tr"#,
            json!({"a": [{"b": [{"c": true}]}]}),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            Value::Object(parse_partial_object(text)),
            expected,
            "{text}"
        );
    }
}

#[test]
fn partial_numbers_use_the_longest_valid_prefix() {
    let cases = [
        (r#"{"n": 12"#, json!({"n": 12})),
        (r#"{"n": -"#, json!({})),
        (r#"{"n": 1."#, json!({"n": 1})),
        (r#"{"n": 1e"#, json!({"n": 1})),
        (r#"{"n": 1.5e-"#, json!({"n": 1.5})),
        (r#"{"n": 1.5e-3"#, json!({"n": 0.0015})),
        (r#"{"n": -0"#, serde_json::from_str(r#"{"n": -0}"#).unwrap()),
        (r#"{"n": 1,"m": -"#, json!({"n": 1})),
    ];
    for (text, expected) in cases {
        assert_eq!(
            Value::Object(parse_partial_object(text)),
            expected,
            "{text}"
        );
    }
}

/// Found by the partial_json fuzz target: a number whose prefix fit (`3e40`) was written,
/// then stayed when more digits made it unrepresentable (`3e402`), where a one-shot parse
/// writes nothing. Now undone: the key goes, an earlier duplicate's value comes back, an
/// array loses the element.
#[test]
fn a_number_growing_past_f64_undoes_what_its_prefix_wrote() {
    for (fragments, expected) in [
        (&[r#"{"":3e40"#, "2"][..], json!({})),
        (&[r#"{"a":1,"b":3e40"#, "2"][..], json!({"a": 1})),
        (&[r#"{"b":"x","b":3e40"#, "2"][..], json!({"b": "x"})),
        (&[r#"{"a":[1,3e40"#, "2"][..], json!({"a": [1]})),
        (&[r#"{"a":[1,3e40"#, "2,5]"][..], json!({"a": [1]})),
        (&[r#"{"a":3e40"#, r#"2,"b":1}"#][..], json!({})),
    ] {
        let (_, target) = run(fragments);
        assert_eq!(Value::Object(target), expected, "{fragments:?}");
    }
}

#[test]
fn finished_numbers_match_serde_json_exactly() {
    let text = r#"{"i":12,"f":1.0,"u":12345678901234567890,"neg":-7,"e":1E+2,"z":-0.0}"#;
    let expected: Map<String, Value> = serde_json::from_str(text).unwrap();
    for size in 1..=4 {
        let (_, target) = run(&split_by(text, || size));
        assert_eq!(target, expected);
        assert!(target["i"].is_i64());
        assert!(target["f"].is_f64());
        assert_eq!(target["f"].to_string(), "1.0");
        assert!(target["u"].is_u64());
        assert!(target["e"].is_f64());
    }
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    parser.push(r#"{"f": 1"#, &mut target);
    assert!(target["f"].is_u64());
    parser.push(".", &mut target);
    assert_eq!(target["f"], json!(1));
    parser.push("0", &mut target);
    assert!(target["f"].is_f64());
    parser.push("}", &mut target);
    assert_eq!(target["f"].to_string(), "1.0");
}

#[test]
fn partial_literals() {
    let cases = [
        (r#"{"a": t"#, json!({"a": true})),
        (r#"{"a": tru"#, json!({"a": true})),
        (r#"{"a": fa"#, json!({"a": false})),
        (r#"{"a": nu"#, json!({"a": null})),
        (r#"{"a": [n"#, json!({"a": [null]})),
        (r#"{"a": false}"#, json!({"a": false})),
    ];
    for (text, expected) in cases {
        assert_eq!(
            Value::Object(parse_partial_object(text)),
            expected,
            "{text}"
        );
    }
}

#[test]
fn escapes_split_across_fragments() {
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    parser.push(r#"{"s": "a\"#, &mut target);
    assert_eq!(target["s"], "a");
    parser.push(r#"nb\u00"#, &mut target);
    assert_eq!(target["s"], "a\nb");
    parser.push("e", &mut target);
    assert_eq!(target["s"], "a\nb");
    parser.push(r#"9\\"#, &mut target);
    assert_eq!(target["s"], "a\nbé\\");
    parser.push(r#"\"#, &mut target);
    assert_eq!(target["s"], "a\nbé\\");
    parser.push(r#""x"}"#, &mut target);
    assert_eq!(target["s"], "a\nbé\\\"x");
    assert!(parser.is_complete());
}

#[test]
fn escapes_in_keys() {
    let text = r#"{"k\"e\u00e9\\y\n": 1}"#;
    assert_eq!(
        Value::Object(parse_partial_object(text)),
        json!({"k\"eé\\y\n": 1})
    );
    for split in 1..text.len() {
        let (_, target) = run(&[&text[..split], &text[split..]]);
        assert_eq!(Value::Object(target), json!({"k\"eé\\y\n": 1}));
    }
}

#[test]
fn surrogate_pairs_split_across_fragments() {
    let text = r#"{"s":"a\ud83d\ude00b"}"#;
    for split in 1..text.len() {
        let (parser, target) = run(&[&text[..split], &text[split..]]);
        assert_eq!(target["s"], "a😀b", "split at {split}");
        assert!(parser.is_complete());
    }
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    parser.push(r#"{"s":"a\ud83d"#, &mut target);
    assert_eq!(target["s"], "a", "a high surrogate waits for its pair");
    parser.push(r#"\ude"#, &mut target);
    assert_eq!(target["s"], "a");
    parser.push(r#"00"#, &mut target);
    assert_eq!(target["s"], "a😀");
}

#[test]
fn lone_surrogates_become_replacement_characters() {
    let cases = [
        (r#"{"s":"\ud83dx"}"#, "\u{FFFD}x"),
        (r#"{"s":"\ude00"}"#, "\u{FFFD}"),
        (r#"{"s":"\ud83d"}"#, "\u{FFFD}"),
        (r#"{"s":"\ud83d\ud83d\ude00"}"#, "\u{FFFD}😀"),
        (r#"{"s":"\ud83d\n"}"#, "\u{FFFD}\n"),
        (r#"{"s":"\ud83d\u0041"}"#, "\u{FFFD}A"),
    ];
    for (text, expected) in cases {
        let parser_result = parse_partial_object(text);
        assert_eq!(parser_result["s"], expected, "{text}");
    }
}

#[test]
fn invalid_escapes_are_kept_literally() {
    let text = r#"{"s":"C:\dir\x\u12g\uZ","t":1}"#;
    let expected = json!({"s": "C:\\dir\\x\\u12g\\uZ", "t": 1});
    assert_eq!(Value::Object(parse_partial_object(text)), expected);
    for split in 1..text.len() {
        let (parser, target) = run(&[&text[..split], &text[split..]]);
        assert_eq!(Value::Object(target), expected, "split at {split}");
        assert!(parser.is_complete());
    }
    assert_eq!(parse_partial_object(r#"{"s":"a\u12"}"#)["s"], "a\\u12");
}

#[test]
fn raw_control_characters_in_strings_are_accepted() {
    let text = "{\"s\": \"line1\nline2\tend\r\"}";
    let (parser, target) = run(&split_by(text, || 3));
    assert_eq!(target["s"], "line1\nline2\tend\r");
    assert!(parser.is_complete());
    assert!(!parser.is_broken());
}

#[test]
fn trailing_input_after_completion_is_ignored() {
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    parser.push(r#"{"a": 1} "#, &mut target);
    assert!(parser.is_complete());
    parser.push(r#"garbage {"b": 2}"#, &mut target);
    assert_eq!(Value::Object(target), json!({"a": 1}));
    assert!(parser.is_complete());
    assert!(!parser.is_broken());
    assert_eq!(parser.text(), r#"{"a": 1} garbage {"b": 2}"#);
    assert_eq!(parse_partial_object(r#"{"a":[1]}]]"#)["a"], json!([1]));
}

#[test]
fn broken_input_keeps_prior_values() {
    let cases = [
        (r#"{"x":"y","a" 1"#, json!({"x": "y"})),
        (r#"{,"#, json!({})),
        (r#"{"a":1]"#, json!({"a": 1})),
        (r#"{"a":tx"#, json!({"a": true})),
        (r#"{"a":12x"#, json!({"a": 12})),
        (r#"{"a":01"#, json!({"a": 0})),
        (r#"{"a":1.}"#, json!({"a": 1})),
        (r#"{"a":1.5.2"#, json!({"a": 1.5})),
        (r#"{"a":"b" "c":1}"#, json!({"a": "b"})),
        (r#"{"a":[1 2]}"#, json!({"a": [1]})),
        (r#"{"a":x}"#, json!({})),
        (r#"{"a":1e400}"#, json!({})),
    ];
    for (text, expected) in cases {
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        parser.push(text, &mut target);
        assert!(parser.is_broken(), "{text}");
        assert!(!parser.is_complete(), "{text}");
        assert_eq!(Value::Object(target.clone()), expected, "{text}");
        parser.push(r#","z":"late"}"#, &mut target);
        assert_eq!(Value::Object(target), expected, "{text}");
        assert!(parser.text().ends_with(r#""late"}"#));
    }
}

#[test]
fn text_before_the_object_or_non_object_top_level_is_broken() {
    for text in [
        "]",
        "abc{\"a\":1}",
        "[1,2]",
        "\"x\"",
        "42",
        "true",
        "\u{feff}{}",
    ] {
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        parser.push(text, &mut target);
        assert!(target.is_empty(), "{text}");
        assert!(parser.is_broken(), "{text}");
        assert!(!parser.is_complete(), "{text}");
        assert!(parse_partial_object(text).is_empty());
    }
}

#[test]
fn parse_partial_object_on_prefixes() {
    let expected_final: Map<String, Value> = serde_json::from_str(SAMPLE).unwrap();
    assert_eq!(parse_partial_object(SAMPLE), expected_final);
    assert_eq!(
        Value::Object(parse_partial_object(&SAMPLE[..=SAMPLE.find('[').unwrap()])),
        json!({"path": "src/main.rs", "edits": []})
    );
    assert_eq!(
        Value::Object(parse_partial_object(
            &SAMPLE[..SAMPLE.find(r"\\n").unwrap()]
        )),
        json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b"}]})
    );
    // Every prefix is a valid object whose keys are a prefix of the final key order.
    let final_keys: Vec<&String> = expected_final.keys().collect();
    for end in 0..=SAMPLE.len() {
        let partial = parse_partial_object(&SAMPLE[..end]);
        let keys: Vec<&String> = partial.keys().collect();
        assert_eq!(keys, final_keys[..keys.len()], "prefix {}", &SAMPLE[..end]);
    }
}

#[test]
fn duplicate_keys_last_wins_in_first_position() {
    let text = r#"{"a":1,"b":2,"a":"x","c":{"d":1},"c":[2]}"#;
    let target = parse_partial_object(text);
    assert_eq!(
        Value::Object(target.clone()),
        json!({"a": "x", "b": 2, "c": [2]})
    );
    assert_eq!(target.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(
        target,
        serde_json::from_str::<Map<String, Value>>(text).unwrap()
    );
    let pending = parse_partial_object(r#"{"a":1,"b":2,"a":-"#);
    assert_eq!(Value::Object(pending), json!({"a": 1, "b": 2}));
}

#[test]
fn keys_keep_source_order() {
    let target = parse_partial_object(r#"{"zeta":1,"alpha":2,"mid":{"y":1,"b":2},"beta":3"#);
    assert_eq!(
        target.keys().collect::<Vec<_>>(),
        ["zeta", "alpha", "mid", "beta"]
    );
    assert_eq!(
        target["mid"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["y", "b"]
    );
}

#[test]
fn whitespace_and_trailing_commas_are_tolerated() {
    let text = " \n\t{ \"a\" :\r [ 1 , 2 , ] , \"b\" : { } , } \n";
    let (parser, target) = run(&split_by(text, || 2));
    assert_eq!(Value::Object(target), json!({"a": [1, 2], "b": {}}));
    assert!(parser.is_complete());
    assert!(!parser.is_broken());
}

#[test]
fn updates_the_callers_map_in_place() {
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    parser.push(r#"{"a":"x"#, &mut target);
    // Values added by the caller outside the parsed paths are left alone.
    target.insert("extra".into(), json!(true));
    parser.push(r#"yz","b":[1"#, &mut target);
    assert_eq!(
        Value::Object(target.clone()),
        json!({"a": "xyz", "extra": true, "b": [1]})
    );
    let clone = parser.clone();
    parser.push("]}", &mut target);
    assert!(parser.is_complete());
    assert!(!clone.is_complete());
    assert_eq!(clone.text(), r#"{"a":"xyz","b":[1"#);
}

/// Builds a JSON document with one large string value, returning it and the decoded value.
fn big_document(target_len: usize) -> (String, String) {
    let pieces: [(&str, &str); 12] = [
        ("fn main() { println!(", "fn main() { println!("),
        (r#"\"hello\""#, "\"hello\""),
        (r#"\n"#, "\n"),
        (r#"\\"#, "\\"),
        (r#"\u00e9"#, "é"),
        (r#"\ud83d\ude00"#, "😀"),
        ("é", "é"),
        ("😀", "😀"),
        (r#"\t"#, "\t"),
        (r#"\/"#, "/"),
        ("    let x = 42; ", "    let x = 42; "),
        ("}", "}"),
    ];
    let mut json_text = String::from(r#"{"path":"src/big.rs","content":""#);
    let mut decoded = String::new();
    let mut next = lcg_sizes(7);
    let mut i = 0;
    while json_text.len() < target_len {
        let (raw, value) = pieces[(next() + i) % pieces.len()];
        json_text.push_str(raw);
        decoded.push_str(value);
        i += 1;
    }
    json_text.push_str(r#"","overwrite":true}"#);
    (json_text, decoded)
}

fn push_big(target_len: usize, fragment_len: usize) {
    let (text, decoded) = big_document(target_len);
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    for fragment in split_by(&text, || fragment_len) {
        parser.push(fragment, &mut target);
    }
    assert!(parser.is_complete());
    assert!(!parser.is_broken());
    assert_eq!(target["content"].as_str(), Some(decoded.as_str()));
    assert_eq!(target["overwrite"], json!(true));
    assert_eq!(
        target,
        serde_json::from_str::<Map<String, Value>>(&text).unwrap()
    );
    assert_eq!(parser.text(), text);
}

#[test]
fn large_string_in_8_byte_fragments() {
    push_big(50 * 1024, 8);
}

#[test]
fn very_large_string_in_7_byte_fragments_stays_linear() {
    push_big(200 * 1024, 7);
}

/// Found by fuzzing: arguments nested 200 deep did not parse back from the message's JSON
/// (serde_json stops at 128 levels). Nesting stops at `MAX_DEPTH`; what came before stays.
#[test]
fn nesting_stops_at_max_depth() {
    let deep = |n: usize| format!("{{\"p\":{}\"x\"{}}}", "[".repeat(n), "]".repeat(n));
    let (parser, target) = run(&[&deep(MAX_DEPTH - 1)]);
    assert!(parser.is_complete() && !parser.is_broken());
    let text = serde_json::to_string(&target).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        Value::Object(target)
    );

    let (parser, target) = run(&[&deep(MAX_DEPTH)]);
    assert!(parser.is_broken());
    // The root object and the outermost array, then one level per first element.
    let mut depth = 2;
    let mut value = &target["p"];
    while let Some(inner) = value.as_array().and_then(|items| items.first()) {
        depth += 1;
        value = inner;
    }
    assert_eq!(depth, MAX_DEPTH);
    let line = json!({"type": "message", "message": {"content": [{"arguments": target}]}});
    let text = serde_json::to_string(&line).unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_ok());
}

/// A stream of a million `[` neither overflows the stack nor grows the tree past the bound.
#[test]
fn a_million_open_brackets_stay_bounded() {
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    parser.push("{\"p\":", &mut target);
    for _ in 0..1000 {
        parser.push(&"[".repeat(1000), &mut target);
    }
    assert!(parser.is_broken());
    assert!(serde_json::to_string(&target).is_ok());
}
