//! The scenarios each pi runs against the mock server: what a user does (the pi command
//! lines, in order) and what the model answers (the mock's scripts, in order). Every
//! request the runs make is compared.

use mock_llm::{Item, Script};
use serde_json::{Value, json};

use super::apis::{SESSION_ID, SMALL_MODEL};

/// The text file the tool round trip reads.
pub const NOTES_FILE: &str = "notes.txt";
/// What it holds.
pub const NOTES_TEXT: &str = "The parity notes: one line.\n";
/// The image the image scenario attaches.
pub const IMAGE_FILE: &str = "pixel.png";

/// A 1×1 PNG (red), small enough that no pi resizes it.
pub const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// One scenario.
#[derive(Clone)]
pub struct Scenario {
    /// Its name (the key in the fixture files).
    pub name: String,
    /// The pi runs, one after the other: the arguments after `--model`.
    pub runs: Vec<Vec<String>>,
    /// The model the runs use (`parity/<model>`).
    pub model: &'static str,
    /// What the mock answers, one script a request.
    pub scripts: Vec<Script>,
    /// The agent's settings.json.
    pub settings: Value,
    /// Environment the runs get on top of the setup's.
    pub env: Vec<(&'static str, &'static str)>,
}

/// Arguments of a print-mode run in the fixed session.
pub fn print(extra: &[&str], prompts: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec!["--session-id".into(), SESSION_ID.into()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.push("-p".into());
    args.extend(prompts.iter().map(|s| (*s).to_owned()));
    args
}

/// A scenario on the main model with default settings.
pub fn scenario(name: &str, runs: Vec<Vec<String>>, scripts: Vec<Script>) -> Scenario {
    Scenario {
        name: name.into(),
        runs,
        model: super::apis::MODEL,
        scripts,
        settings: json!({}),
        env: Vec::new(),
    }
}

/// The thinking levels a user can pick (`--thinking`).
pub const THINKING_LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Every scenario, in the order the fixtures list them.
pub fn all() -> Vec<Scenario> {
    let mut all = vec![scenario(
        "plain",
        vec![print(&[], &["Say hello."])],
        vec![Script::text("Hello.")],
    )];
    for level in THINKING_LEVELS {
        all.push(scenario(
            &format!("thinking-{level}"),
            vec![print(&["--thinking", level], &["Think, then say hello."])],
            vec![Script::thinking_then_text("Thinking it over.", "Hello.")],
        ));
    }
    all.push(scenario(
        "image",
        vec![print(
            &[],
            &[&format!("@{IMAGE_FILE}"), "What colour is this image?"],
        )],
        vec![Script::text("Red.")],
    ));
    all.push(scenario(
        "tool-round-trip",
        vec![print(&[], &["Read notes.txt and tell me what it says."])],
        vec![
            Script::tool_call("read", json!({"path": NOTES_FILE})),
            Script::text("It says: the parity notes."),
        ],
    ));
    all.push(scenario(
        "system-prompt",
        vec![print(
            &["--system-prompt", "You are the parity tester."],
            &["Who are you?"],
        )],
        vec![Script::text("The parity tester.")],
    ));
    all.push(scenario(
        "append-system-prompt",
        vec![print(
            &["--append-system-prompt", "Always answer in one word."],
            &["Who are you?"],
        )],
        vec![Script::text("pi.")],
    ));
    all.push(near_compaction());
    all.push(scenario(
        "resumed-session",
        vec![
            print(&[], &["Remember the word apple."]),
            vec!["-c".into(), "-p".into(), "Which word?".into()],
        ],
        vec![
            Script::thinking_then_text("The user wants me to remember.", "Remembered."),
            Script::text("apple"),
        ],
    ));
    all
}

/// A long first prompt on a small window (pi 1.6.0 fits `max_tokens` into the context
/// left), then a reply whose reported usage passes the compaction threshold (window 24000
/// less the 16384 reserved), so the next prompt is preceded by a summary request and sent
/// with the summary.
fn near_compaction() -> Scenario {
    let long = format!(
        "Here is a long text to keep in mind.\n{}",
        "The quick brown fox jumps over the lazy dog. ".repeat(400)
    );
    Scenario {
        name: "near-compaction".into(),
        runs: vec![print(
            &[],
            &[&long, "And now a short one.", "The last one."],
        )],
        model: SMALL_MODEL,
        scripts: vec![
            Script::text("Noted.").with_usage(6_000, 10),
            Script::text("Short noted.").with_usage(8_000, 10),
            Script::new(vec![Item::text("## Goal\nThe user shared a long text.")]),
            Script::text("Last noted.").with_usage(1_000, 10),
        ],
        // Keeping 5 tokens cuts at the last prompt: one summary request (a split turn would
        // make two, sent concurrently, in no fixed order).
        settings: json!({"compaction": {"keepRecentTokens": 5}}),
        env: Vec::new(),
    }
}
