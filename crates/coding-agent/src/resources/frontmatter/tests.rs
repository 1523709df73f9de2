//! Unit tests of the frontmatter parser (through its public `parse`).

use super::*;

fn fm(doc: &str) -> Frontmatter {
    parse(doc).unwrap().frontmatter
}

#[test]
fn no_frontmatter_keeps_the_whole_text_untrimmed() {
    let p = parse("  hello\r\nworld\n").unwrap();
    assert!(p.frontmatter.fields.is_empty());
    assert_eq!(p.body, "  hello\nworld\n");
    // An opening line without a closing one is no frontmatter either.
    let p = parse("---\nname: x\nbody").unwrap();
    assert!(p.frontmatter.fields.is_empty());
    assert_eq!(p.body, "---\nname: x\nbody");
}

#[test]
fn simple_keys_and_trimmed_body() {
    let p = parse("---\nname: my-skill\ndescription: Does things.\n---\n\n# Title\n\n").unwrap();
    assert_eq!(p.frontmatter.get_str("name"), Some("my-skill"));
    assert_eq!(p.frontmatter.get_str("description"), Some("Does things."));
    assert_eq!(p.body, "# Title");
    let p = parse("---\n---\nbody").unwrap();
    assert!(p.frontmatter.fields.is_empty());
    assert_eq!(p.body, "body");
}

#[test]
fn scalar_types() {
    let f = fm(
        "---\na: true\nb: False\nc: 42\nd: ~\ne:\nf: 'it''s'\ng: \"tab\\tnew\\nline \\u00e9\"\nh: yes\ni: 1.5e3\n---\n",
    );
    assert_eq!(f.get_bool("a"), Some(true));
    assert_eq!(f.get_bool("b"), Some(false));
    assert_eq!(f.get("c"), Some(&Value::Number("42".into())));
    assert_eq!(f.get("d"), Some(&Value::Null));
    assert_eq!(f.get("e"), Some(&Value::Null));
    assert_eq!(f.get_str("f"), Some("it's"));
    assert_eq!(f.get_str("g"), Some("tab\tnew\nline é"));
    assert_eq!(f.get_str("h"), Some("yes"));
    assert_eq!(f.get("i"), Some(&Value::Number("1.5e3".into())));
}

#[test]
fn comments_and_quoted_keys() {
    let f = fm("---\n# leading\nname: x # trailing\n\"argument-hint\": \"<url>\" # c\n---\n");
    assert_eq!(f.get_str("name"), Some("x"));
    assert_eq!(f.get_str("argument-hint"), Some("<url>"));
    let f = fm("---\nurl: http://example.com/a#b\n---\n");
    assert_eq!(f.get_str("url"), Some("http://example.com/a#b"));
}

#[test]
fn block_scalars() {
    let f = fm("---\nd: |\n  line one\n  line two\n\nnext: x\n---\n");
    assert_eq!(f.get_str("d"), Some("line one\nline two\n"));
    assert_eq!(f.get_str("next"), Some("x"));
    let f = fm("---\nd: >-\n  folded\n  text\n\n  para\n---\n");
    assert_eq!(f.get_str("d"), Some("folded text\npara"));
    let f = fm("---\nd: |+\n  keep\n\n---\n");
    assert_eq!(f.get_str("d"), Some("keep\n"));
    let f = fm("---\nd: |+\n  keep\n\n\nx: 1\n---\n");
    assert_eq!(f.get_str("d"), Some("keep\n\n\n"));
    let f = fm("---\nd: &a !!str  anchored\n---\n");
    assert_eq!(f.get_str("d"), Some("anchored"));
    let f = fm("---\nd: >\n  a\n    indented\n  b\n---\n");
    assert_eq!(f.get_str("d"), Some("a\n  indented\nb\n"));
}

#[test]
fn multi_line_plain_and_quoted() {
    let f = fm("---\ndescription: first part\n  second part\n\n  new para\nname: n\n---\n");
    assert_eq!(
        f.get_str("description"),
        Some("first part second part\nnew para")
    );
    assert_eq!(f.get_str("name"), Some("n"));
    let f = fm("---\nd: \"one\n  two\\\n  three\"\ne: 'a\n  b'\n---\n");
    assert_eq!(f.get_str("d"), Some("one twothree"));
    assert_eq!(f.get_str("e"), Some("a b"));
}

#[test]
fn values_may_start_on_the_next_line() {
    let f = fm(
        "---\ndescription:\n  A long\n  description.\nquoted:\n  \"q\"\nlist:\n  - a\nempty:\n# c\nname: n\n---\n",
    );
    assert_eq!(f.get_str("description"), Some("A long description."));
    assert_eq!(f.get_str("quoted"), Some("q"));
    assert_eq!(f.get("list"), Some(&Value::Other));
    assert_eq!(f.get("empty"), Some(&Value::Null));
    assert_eq!(f.get_str("name"), Some("n"));
    // A document that is a plain scalar or a list has no fields.
    assert!(fm("---\njust text\n---\nbody").fields.is_empty());
    assert!(fm("---\n- a\n- b\n---\nbody").fields.is_empty());
    assert_eq!(
        fm("---\n  name: x\n  d: |\n    t\n---\n").get_str("d"),
        Some("t\n")
    );
}

#[test]
fn nested_values_are_other() {
    let f = fm(
        "---\nmetadata:\n  author: me\n  version: 1\ntags:\n- a\n- b\nallowed-tools: [read, \"bash\"]\nm: {a: 1,\n  b: 2}\nname: z\n---\n",
    );
    assert_eq!(f.get("metadata"), Some(&Value::Other));
    assert_eq!(f.get("tags"), Some(&Value::Other));
    assert_eq!(f.get("allowed-tools"), Some(&Value::Other));
    assert_eq!(f.get("m"), Some(&Value::Other));
    assert_eq!(f.get_str("name"), Some("z"));
}

#[test]
fn errors() {
    for bad in [
        "---\ndescription: Use when: asked\n---\n",
        "---\nd: \"open\n---\n",
        "---\nname: a\nname: b\n---\n",
        "---\njust text\nname: x\n---\n",
        "---\nname: x\n  indented: x\n---\n",
        "---\n  name: x\n bad: y\n---\n",
        "---\nd: @at\n---\n",
        "---\nd: - item\n---\n",
        "---\nd: ? what\n---\n",
        "---\nd: *alias\n---\n",
        "---\nd: 'x' trailing\n---\n",
    ] {
        assert!(parse(bad).is_err(), "{bad:?} should fail");
    }
    assert!(strip("---\nd: 'x' trailing\n---\nbody").is_err());
    assert_eq!(strip("---\nd: x\n---\n body \n").unwrap(), "body");
}

/// Found by the frontmatter fuzz target: after a tag or an anchor, the value was cut from
/// the line counting back from its end, which is off by the whitespace trimmed after the
/// value (a vertical tab, an ideographic space): the value lost its start, or the cut fell
/// inside a character and panicked.
#[test]
fn a_tagged_value_with_whitespace_after_it() {
    assert_eq!(fm("---\nk: !tag x\u{b}\n---\n").get_str("k"), Some("x"));
    assert_eq!(
        fm("---\nk: &a 【x\u{3000}\n---\n").get_str("k"),
        Some("【x")
    );
    assert!(parse("---f\0: !【\u{b}\n---").is_ok());
}
