//! The differences from pi 1.6.0's requests that stay, each with its reason. An entry
//! takes a part out of both sides before they are compared: fields (JSON pointers into the
//! normalized request, `*` matching every key or index), descriptions, or whole requests.
//! Texts in our own wording (the default system prompt's own sections, the summarization
//! prompts) are replaced by placeholders on both sides first, so that their layout and
//! what surrounds them are still compared.

use serde_json::Value;

/// What an entry leaves out.
pub enum Part {
    /// A field, by JSON pointer (`*` for any key or index).
    Field(&'static str),
    /// Several fields.
    Fields(&'static [&'static str]),
    /// Every request whose `METHOD path` is this.
    Request(&'static str),
    /// Every `description` at or below this pointer (`*` for any key or index).
    Descriptions(&'static str),
    /// Fields kept but their values left out, by JSON pointer (no `*`): that they are sent
    /// is compared, not what they hold.
    Values(&'static [&'static str]),
}

/// One difference that stays.
pub struct Known {
    /// The API it is about (`*`: all).
    pub api: &'static str,
    /// The scenario it is about (`*`: all; a trailing `*` matches a prefix).
    pub scenario: &'static str,
    /// The scenario's request it is about, by index (`None`: all).
    pub request: Option<usize>,
    pub part: Part,
    pub reason: &'static str,
}

/// The differences that stay.
pub const KNOWN_DIFFERENCES: &[Known] = &[
    Known {
        api: "*",
        scenario: "*",
        request: None,
        part: Part::Descriptions("/body/tools"),
        reason: OWN_WORDING,
    },
    Known {
        api: "*",
        scenario: "*",
        request: None,
        part: Part::Descriptions("/body/toolConfig"),
        reason: OWN_WORDING,
    },
    Known {
        api: "openai-codex-responses",
        scenario: "*",
        request: None,
        part: Part::Request("GET /codex/responses"),
        reason: "both pis first try the WebSocket transport (transport \"auto\"), which the \
            mock refuses unless a test turns it on, then fall back to SSE; the upgrade carries \
            each WebSocket client's own handshake headers (key, user agent), compared in \
            codex_ws_16.rs",
    },
    Known {
        api: "bedrock-converse-stream",
        scenario: "*",
        request: None,
        part: Part::Field("/headers/accept"),
        reason: "the AWS SDK sends no accept header; reqwest adds `*/*` when a request has none",
    },
    Known {
        api: "bedrock-converse-stream",
        scenario: "*",
        request: None,
        part: Part::Field("/headers/accept-encoding"),
        reason: "the AWS SDK asks for no compression; our HTTP layer asks every provider for \
            `gzip, deflate` as pi 1.6.0's fetch does, and decodes either answer",
    },
    Known {
        api: "*",
        scenario: "near-compaction",
        request: Some(0),
        part: Part::Fields(OUTPUT_CAPS),
        reason: ESTIMATED_CAP,
    },
    Known {
        api: "*",
        scenario: "near-compaction",
        request: Some(2),
        part: Part::Fields(OUTPUT_CAPS),
        reason: ESTIMATED_CAP,
    },
    Known {
        api: "google-gemini-cli",
        scenario: "*",
        request: None,
        part: Part::Fields(&[
            "/body/sessionId",
            "/body/systemInstruction/role",
            "/body/generationConfig/thinkingConfig",
            "/body/generationConfig/maxOutputTokens",
        ]),
        reason: "pi 1.6.0 has no google-gemini-cli to compare with: ours sends pi-ai 0.70's Cloud \
            Code Assist request, whose inner body names the session, gives the system \
            instruction the user role, asks for its own thinking budgets and no output cap \
            fitted to the window; the rest of the body is 1.6.0's Gemini one",
    },
];

/// Where each API carries the output cap.
const OUTPUT_CAPS: &[&str] = &[
    "/body/max_tokens",
    "/body/max_completion_tokens",
    "/body/max_output_tokens",
    "/body/generationConfig/maxOutputTokens",
    "/body/inferenceConfig/maxTokens",
    "/body/thinking/budget_tokens",
];

/// Why the output cap differs where no reply has reported usage yet.
const ESTIMATED_CAP: &str = "the output cap is fitted into what the window leaves after an \
    estimate of the input (pi-ai 1.6's clampMaxTokensToContext, which ours follows); with no \
    reply's usage to go by, the estimate counts the system prompt and the tools, whose own \
    wording differs, so a cap near the window differs by that much (the request after a reply \
    is compared, and matches)";

/// Why the tool descriptions and the default system prompt's own sections differ.
const OWN_WORDING: &str = "the tool descriptions, the default system prompt's preamble, \
    tools, rules and docs sections, and the summarization prompts are our own wording (the \
    project writes every line itself); their layout, the sections a user adds \
    (--append-system-prompt, context files, skills), the cwd and the summarized transcript \
    are compared";

/// How the default system prompt starts: pi 1.6.0's, then ours.
const DEFAULT_PROMPT_OPENINGS: [&str; 2] = [
    "You are a coding assistant running inside pi, a coding agent harness.",
    "You are an expert coding assistant working inside pi, a coding agent harness.",
];

/// The sections that follow the own-wording ones, whose text is compared.
const COMPARED_SECTIONS: [&str; 4] = ["<addendum>", "<project_context>", "<skills>", "<cwd>"];

/// A string holding the default system prompt with its own-wording part (from the opening
/// to the first compared section) replaced by `<default prompt>`.
fn default_prompt_replaced(text: &str) -> Option<String> {
    let start = DEFAULT_PROMPT_OPENINGS
        .iter()
        .filter_map(|opening| text.find(opening))
        .min()?;
    let end = COMPARED_SECTIONS
        .iter()
        .filter_map(|section| text[start..].find(section).map(|at| start + at))
        .min()
        .unwrap_or(text.len());
    Some(format!(
        "{}<default prompt>\n\n{}",
        &text[..start],
        &text[end..]
    ))
}

/// How the summarization requests' system prompt starts: pi 1.6.0's, then ours.
const SUMMARIZER_OPENINGS: [&str; 2] = [
    "You are a context summarization assistant.",
    "You condense conversations between a user and an AI assistant.",
];

/// Where a summarization request's own-wording instructions start: after the transcript
/// (and the previous summary), or after a split turn's `# Instructions` heading.
const INSTRUCTIONS_AFTER: [&str; 3] = [
    "</previous-summary>\n\n",
    "</conversation>\n\n",
    "\n\n# Instructions\n",
];

/// A summarization request's text with its own wording (the system prompt, the
/// instructions after the transcript) replaced by placeholders; the transcript and the
/// layout around it are kept.
fn summarization_replaced(text: &str) -> Option<String> {
    if SUMMARIZER_OPENINGS.iter().any(|o| text.starts_with(o)) {
        return Some("<summarization system prompt>".into());
    }
    if !(text.starts_with("<conversation>\n") || text.starts_with("# Conversation\n")) {
        return None;
    }
    let end = INSTRUCTIONS_AFTER
        .iter()
        .find_map(|marker| text.rfind(marker).map(|at| at + marker.len()))?;
    Some(format!("{}<summary instructions>", &text[..end]))
}

/// `value` with every own-wording text replaced (see [`default_prompt_replaced`] and
/// [`summarization_replaced`]).
fn replace_own_wording(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Some(replaced) =
                summarization_replaced(text).or_else(|| default_prompt_replaced(text))
            {
                *text = replaced;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(replace_own_wording),
        Value::Object(map) => map.values_mut().for_each(replace_own_wording),
        _ => {}
    }
}

/// Removes every `description` key in `value`.
fn remove_descriptions(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(remove_descriptions),
        Value::Object(map) => {
            map.remove("description");
            map.values_mut().for_each(remove_descriptions);
        }
        _ => {}
    }
}

/// `*` alone matches all; a trailing `*` a prefix, a leading one a suffix, both a part.
fn matches(pattern: &str, name: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(rest), Some(_)) => name.contains(rest.trim_end_matches('*')),
        (Some(suffix), None) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        (None, None) => pattern == name,
    }
}

/// `requests` without the parts the entries for `api` and `scenario` leave out.
pub fn without_known(api: &str, scenario: &str, requests: &[Value]) -> Vec<Value> {
    without_known_in(KNOWN_DIFFERENCES, api, scenario, requests)
}

/// `requests` without the parts `known`'s entries for `api` (or another key its entries
/// name, such as a catalog model's `provider/id`) and `scenario` leave out.
pub fn without_known_in(
    known: &[Known],
    api: &str,
    scenario: &str,
    requests: &[Value],
) -> Vec<Value> {
    let entries: Vec<&Known> = known
        .iter()
        .filter(|k| matches(k.api, api) && matches(k.scenario, scenario))
        .collect();
    requests
        .iter()
        .filter(|request| {
            let line = format!("{} {}", request["method"], request["path"]).replace('"', "");
            !entries
                .iter()
                .any(|k| matches!(k.part, Part::Request(r) if r == line))
        })
        .enumerate()
        .map(|(index, request)| {
            let mut request = request.clone();
            replace_own_wording(&mut request);
            for entry in entries
                .iter()
                .filter(|k| k.request.is_none_or(|r| r == index))
            {
                match entry.part {
                    Part::Field(pointer) => {
                        let segments: Vec<&str> = pointer.split('/').skip(1).collect();
                        remove(&mut request, &segments);
                    }
                    Part::Fields(pointers) => {
                        for pointer in pointers {
                            let segments: Vec<&str> = pointer.split('/').skip(1).collect();
                            remove(&mut request, &segments);
                        }
                    }
                    Part::Descriptions(pointer) => {
                        let segments: Vec<&str> = pointer.split('/').skip(1).collect();
                        visit(&mut request, &segments, &mut remove_descriptions);
                    }
                    Part::Values(pointers) => {
                        for pointer in pointers {
                            if let Some(value) = request.pointer_mut(pointer) {
                                *value = Value::String("<value>".into());
                            }
                        }
                    }
                    Part::Request(_) => {}
                }
            }
            request
        })
        .collect()
}

/// Calls `f` on what `segments` point at (`*` for every key or index).
fn visit(value: &mut Value, segments: &[&str], f: &mut dyn FnMut(&mut Value)) {
    let [first, rest @ ..] = segments else {
        f(value);
        return;
    };
    let key = first.replace("~1", "/").replace("~0", "~");
    match value {
        Value::Object(map) if key == "*" => map.values_mut().for_each(|v| visit(v, rest, f)),
        Value::Object(map) => {
            if let Some(v) = map.get_mut(&key) {
                visit(v, rest, f);
            }
        }
        Value::Array(items) if key == "*" => items.iter_mut().for_each(|v| visit(v, rest, f)),
        Value::Array(items) => {
            if let Some(v) = key.parse::<usize>().ok().and_then(|n| items.get_mut(n)) {
                visit(v, rest, f);
            }
        }
        _ => {}
    }
}

/// Removes what `segments` point at (`*` for every key or index).
fn remove(value: &mut Value, segments: &[&str]) {
    let [first, rest @ ..] = segments else {
        return;
    };
    let key = first.replace("~1", "/").replace("~0", "~");
    if rest.is_empty() {
        match value {
            Value::Object(map) if key == "*" => map.clear(),
            Value::Object(map) => {
                map.remove(&key);
            }
            _ => {}
        }
        return;
    }
    match value {
        Value::Object(map) if key == "*" => map.values_mut().for_each(|v| remove(v, rest)),
        Value::Object(map) => {
            if let Some(v) = map.get_mut(&key) {
                remove(v, rest);
            }
        }
        Value::Array(items) if key == "*" => items.iter_mut().for_each(|v| remove(v, rest)),
        Value::Array(items) => {
            if let Some(v) = key.parse::<usize>().ok().and_then(|n| items.get_mut(n)) {
                remove(v, rest);
            }
        }
        _ => {}
    }
}

#[test]
fn removal_follows_wildcards() {
    let mut v =
        serde_json::json!({"body": {"tools": [{"a": 1, "strict": false}, {"strict": true}]}});
    remove(&mut v, &["body", "tools", "*", "strict"]);
    assert_eq!(v, serde_json::json!({"body": {"tools": [{"a": 1}, {}]}}));
}

#[test]
fn the_default_prompt_keeps_its_compared_sections() {
    let text = "You are a coding assistant running inside pi, a coding agent harness. Help.\n\n<rules>\n- x\n</rules>\n\n<addendum>\nA.\n</addendum>\n\n<cwd>\n/w\n</cwd>";
    assert_eq!(
        default_prompt_replaced(text).unwrap(),
        "<default prompt>\n\n<addendum>\nA.\n</addendum>\n\n<cwd>\n/w\n</cwd>"
    );
    assert_eq!(default_prompt_replaced("You are the tester."), None);
}

#[test]
fn summarization_texts_keep_their_transcript() {
    assert_eq!(
        summarization_replaced("<conversation>\n[User]: hi\n</conversation>\n\nSummarize.")
            .unwrap(),
        "<conversation>\n[User]: hi\n</conversation>\n\n<summary instructions>"
    );
    assert_eq!(
        summarization_replaced("# Conversation\n[User]: hi\n\n# Instructions\nDo.").unwrap(),
        "# Conversation\n[User]: hi\n\n# Instructions\n<summary instructions>"
    );
    assert_eq!(summarization_replaced("Hello."), None);
}
