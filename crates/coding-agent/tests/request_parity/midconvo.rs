//! Request parity for what changes in the middle of a conversation (pi 0.86–1.6): the
//! system prompt and the tools changed between runs of one session, and the thinking level
//! changed on models that keep the prompt cache across it. Each case is a scenario on one
//! wire API with the `parity` provider's models given the case's compat flags.

use mock_llm::{Item, Script};
use serde_json::{Value, json};

use super::apis::wire_api;
use super::rows::RowCase;
use super::scenarios::{NOTES_FILE, Scenario, print, scenario};

/// An extension fixture's path.
fn extension(name: &str) -> String {
    format!(
        "{}/tests/fixtures/extensions/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A continued run of the session with `extra` arguments.
fn continued(extra: &[&str], prompt: &str) -> Vec<String> {
    let mut args: Vec<String> = vec!["-c".into()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.push("-p".into());
    args.push(prompt.into());
    args
}

/// A tool round trip at `high` with the tools of midconvo-tools-a.ts; then a run whose
/// extension redefines one tool, drops one and adds one and whose system prompt gains an
/// appended section; then a run with nothing changed.
fn prompt_and_tools() -> Scenario {
    let first = extension("midconvo-tools-a.ts");
    let later = extension("midconvo-tools-b.ts");
    scenario(
        "prompt-and-tools",
        vec![
            print(
                &["--thinking", "high", "-e", &first],
                &["Read notes.txt and tell me what it says."],
            ),
            continued(
                &[
                    "--thinking",
                    "high",
                    "-e",
                    &later,
                    "--append-system-prompt",
                    "Answer in French.",
                ],
                "And now?",
            ),
            continued(
                &[
                    "--thinking",
                    "high",
                    "-e",
                    &later,
                    "--append-system-prompt",
                    "Answer in French.",
                ],
                "Once more.",
            ),
        ],
        vec![
            Script::new(vec![
                Item::thinking("I should read the file."),
                Item::tool_call("read", json!({"path": NOTES_FILE})),
            ]),
            Script::text("It says: the parity notes."),
            Script::thinking_then_text("In French.", "Les notes."),
            Script::text("Encore les notes."),
        ],
    )
}

/// A tool round trip at `high`, then the session continued at `low`, then at `high` again
/// (pi 1.3: GPT-6 keeps the prompt cache across these).
fn thinking_changes() -> Scenario {
    scenario(
        "thinking-changes",
        vec![
            print(
                &["--thinking", "high"],
                &["Read notes.txt and tell me what it says."],
            ),
            continued(&["--thinking", "low"], "And now?"),
            continued(&["--thinking", "high"], "Once more."),
        ],
        vec![
            Script::new(vec![
                Item::thinking("I should read the file."),
                Item::tool_call("read", json!({"path": NOTES_FILE})),
            ]),
            Script::text("It says: the parity notes."),
            Script::text("Still the notes."),
            Script::thinking_then_text("Again.", "The notes again."),
        ],
    )
}

/// Every case, in the fixture's order.
pub fn cases() -> Vec<RowCase> {
    let case = |name: &'static str, api: &str, model_fields: Value, scenario: Scenario| RowCase {
        name,
        api: wire_api(api),
        model_fields,
        base_path: None,
        scenario,
    };
    let system = json!({"compat": {"supportsMidConvoSystemMessages": true}});
    vec![
        case(
            "anthropic folded",
            "anthropic-messages",
            json!({}),
            prompt_and_tools(),
        ),
        case(
            "anthropic supportsMidConvoSystemMessages",
            "anthropic-messages",
            system.clone(),
            prompt_and_tools(),
        ),
        case(
            "anthropic supportsMidConvoToolChanges",
            "anthropic-messages",
            json!({"compat": {"supportsMidConvoSystemMessages": true,
                              "supportsMidConvoToolChanges": true}}),
            prompt_and_tools(),
        ),
        case(
            "anthropic Claude 5 controls",
            "anthropic-messages",
            json!({"compat": {"supportsMidConvoSystemMessages": true,
                              "supportsMidConvoToolChanges": true,
                              "supportsMidConvoEffort": true,
                              "forceAdaptiveThinking": true}}),
            prompt_and_tools(),
        ),
        case(
            "completions folded",
            "openai-completions",
            json!({}),
            prompt_and_tools(),
        ),
        case(
            "completions supportsMidConvoSystemMessages",
            "openai-completions",
            system.clone(),
            prompt_and_tools(),
        ),
        case(
            "responses folded",
            "openai-responses",
            json!({}),
            prompt_and_tools(),
        ),
        case(
            "responses supportsMidConvoSystemMessages",
            "openai-responses",
            system.clone(),
            prompt_and_tools(),
        ),
        case(
            "codex supportsMidConvoSystemMessages",
            "openai-codex-responses",
            system,
            prompt_and_tools(),
        ),
        case(
            "responses supportsMidConvoEffort",
            "openai-responses",
            json!({"compat": {"supportsMidConvoEffort": true}}),
            thinking_changes(),
        ),
        case(
            "codex supportsMidConvoEffort",
            "openai-codex-responses",
            json!({"compat": {"supportsMidConvoEffort": true}}),
            thinking_changes(),
        ),
        case(
            "responses thinking changes",
            "openai-responses",
            json!({}),
            thinking_changes(),
        ),
    ]
}
