//! Request parity for behaviour the upstream ledger names row by row: custom models'
//! compat and sampling settings of pi 1.x (`models.json`), switching models in a session,
//! and the transcript a compaction summarizes. Each case is a scenario on one wire API with
//! the `parity` provider's models changed as the case says.

use mock_llm::Script;
use serde_json::{Value, json};

use super::RunSetup;
use super::apis::{SMALL_MODEL, WireApi, wire_api};
use super::scenarios::{NOTES_FILE, Scenario, print, scenario};

/// One ledger case.
pub struct RowCase {
    /// The fixture key.
    pub name: &'static str,
    /// Its wire API.
    pub api: WireApi,
    /// Fields merged into every model of the `parity` provider (`compat` merges by key).
    pub model_fields: Value,
    /// Replaces the provider's base URL path (below the mock's root).
    pub base_path: Option<&'static str>,
    pub scenario: Scenario,
}

impl RowCase {
    /// The `models.json` and model of this case on the mock at `url`.
    pub fn setup(&self, url: &str) -> RunSetup {
        let mut models_json = self.api.models_json(url);
        let provider = &mut models_json["providers"]["parity"];
        if let Some(path) = self.base_path {
            provider["baseUrl"] = Value::from(format!("{url}{path}"));
        }
        if let (Some(models), Value::Object(fields)) =
            (provider["models"].as_array_mut(), &self.model_fields)
        {
            for model in models {
                for (key, value) in fields {
                    model[key] = value.clone();
                }
            }
        }
        RunSetup {
            models_json,
            model: format!("parity/{}", self.scenario.model),
            env: self.api.env(),
            auth: None,
        }
    }
}

/// A tool round trip at thinking level `high`: the model thinks, reads a file, answers.
fn tool_round_trip(name: &str) -> Scenario {
    scenario(
        name,
        vec![print(
            &["--thinking", "high"],
            &["Read notes.txt and tell me what it says."],
        )],
        vec![
            Script::new(vec![
                mock_llm::Item::thinking("I should read the file."),
                mock_llm::Item::tool_call("read", json!({"path": NOTES_FILE})),
            ]),
            Script::text("It says: the parity notes."),
        ],
    )
}

/// A session whose second run switches to another model (pi 1.3: the first model's
/// thinking is not shown to the second).
fn model_switch() -> Scenario {
    let other = format!("parity/{SMALL_MODEL}");
    scenario(
        "model-switch",
        vec![
            print(&["--thinking", "high"], &["Think about apples."]),
            vec![
                "-c".into(),
                "--model".into(),
                other,
                "-p".into(),
                "And now?".into(),
            ],
        ],
        vec![
            Script::thinking_then_text("Apples grow on trees.", "Apples."),
            Script::text("Still apples."),
        ],
    )
}

/// A compaction after a reply that thought: the summary request's transcript leaves the
/// thinking out (pi 1.2) and its output cap is the model's, not a share of
/// `reserveTokens` (pi 1.4).
fn summary() -> Scenario {
    Scenario {
        // Keeping 8 tokens keeps the second answer (about 5) and cuts at the second
        // question, a turn's start: one summary request (a split turn makes two, sent at
        // once, in no fixed order).
        settings: json!({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 8}}),
        ..scenario(
            "summary-of-thinking-turns",
            vec![print(
                &["--thinking", "high"],
                &["First question.", "Second question.", "Third question."],
            )],
            vec![
                Script::thinking_then_text("Pondering the first.", "First answer.")
                    .with_usage(1_000, 10),
                Script::thinking_then_text("Pondering.", "Second.").with_usage(127_000, 10),
                Script::text("## Goal\nThree questions."),
                Script::text("Third answer."),
            ],
        )
    }
}

/// A compaction that cuts inside a turn (keeping 5 tokens cuts at the last answer): the
/// history and the turn's opening are summarized one after the other (pi 1.6), in that
/// order.
fn split_turn_summary() -> Scenario {
    let mut case = summary();
    case.name = "split-turn-summary".into();
    case.settings = json!({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 5}});
    case.scripts
        .insert(3, Script::text("## Original Request\nThe second question."));
    case
}

/// A tool round trip, then a run with every tool off (pi 1.5: `"tools": []` only where
/// the server asks for it).
fn tools_off_after_use(name: &str) -> Scenario {
    let mut case = tool_round_trip(name);
    case.runs.push(vec![
        "-c".into(),
        "--no-tools".into(),
        "-p".into(),
        "Thanks.".into(),
    ]);
    case.scripts.push(Script::text("You are welcome."));
    case
}

/// A bash call whose whole output is a line break (pi 1.4: whitespace-only tool output is
/// sent as none, which OpenAI and Google accept).
fn blank_tool_output() -> Scenario {
    scenario(
        "blank-tool-output",
        vec![print(&[], &["Print a blank line."])],
        vec![
            Script::tool_call("bash", json!({"command": "printf '\\r\\n'"})),
            Script::text("Done."),
        ],
    )
}

/// An extension tool's result with an image that a `tool_result` handler marks as an error
/// (pi 1.3: Claude gets the images after the turn's tool results).
fn error_result_image() -> Scenario {
    let extension = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/extensions/error-image.ts"
    );
    scenario(
        "error-result-image",
        vec![print(&["-e", extension], &["Take a screenshot."])],
        vec![
            Script::tool_call("shot", json!({})),
            Script::text("It failed."),
        ],
    )
}

/// A tool round trip at `high`, then the session continued at `low`, then with thinking
/// off (pi 0.85: with mid-conversation effort each reply's effort goes back with it).
fn effort_change() -> Scenario {
    let mut case = tool_round_trip("effort-change");
    for (level, prompt) in [("low", "And now?"), ("off", "Once more.")] {
        case.runs.push(vec![
            "-c".into(),
            "--thinking".into(),
            level.into(),
            "-p".into(),
            prompt.into(),
        ]);
    }
    case.scripts.push(Script::text("Still the notes."));
    case.scripts.push(Script::text("The notes again."));
    case
}

/// The Anthropic cases of the ledger's Claude rows: strict tools, mid-conversation effort
/// and server-side fallbacks (pi 0.82–0.86).
fn anthropic_cases() -> Vec<RowCase> {
    let anthropic = wire_api("anthropic-messages");
    let case = |name: &'static str, model_fields: Value, scenario: Scenario| RowCase {
        name,
        api: anthropic,
        model_fields,
        base_path: None,
        scenario,
    };
    let fallback = json!({"provider": "parity", "model": "parity-fallback",
                          "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}});
    vec![
        case(
            "anthropic supportsStrictTools",
            json!({"compat": {"supportsStrictTools": true}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "anthropic supportsMidConvoEffort adaptive",
            json!({"compat": {"supportsMidConvoEffort": true, "forceAdaptiveThinking": true}}),
            effort_change(),
        ),
        case(
            "anthropic supportsMidConvoEffort",
            json!({"compat": {"supportsMidConvoEffort": true}}),
            effort_change(),
        ),
        case(
            "anthropic allowedFallbackModels",
            json!({"compat": {"allowedFallbackModels": [fallback]}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "anthropic explicit affinity and tool fields",
            json!({"compat": {"sendSessionAffinityHeaders": true,
                              "supportsCacheControlOnTools": false,
                              "supportsEagerToolInputStreaming": false}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "anthropic openrouter affinity format",
            json!({"compat": {"sendSessionAffinityHeaders": true,
                              "sessionAffinityFormat": "openrouter"}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "anthropic allowedFallbackModels empty",
            json!({"compat": {"allowedFallbackModels": []}}),
            tool_round_trip("tool-round-trip"),
        ),
    ]
}

/// Every case, in the fixture's order.
pub fn cases() -> Vec<RowCase> {
    let completions = wire_api("openai-completions");
    let case = |name: &'static str, model_fields: Value, scenario: Scenario| RowCase {
        name,
        api: completions,
        model_fields,
        base_path: None,
        scenario,
    };
    vec![
        case("completions model-switch", json!({}), model_switch()),
        RowCase {
            name: "anthropic model-switch",
            api: wire_api("anthropic-messages"),
            model_fields: json!({}),
            base_path: None,
            scenario: model_switch(),
        },
        case("completions summary", json!({}), summary()),
        case(
            "completions split-turn summary",
            json!({}),
            split_turn_summary(),
        ),
        case(
            "completions tools-off",
            json!({}),
            tools_off_after_use("tools-off"),
        ),
        case(
            "completions requiresToolsWithToolHistory",
            json!({"compat": {"requiresToolsWithToolHistory": true}}),
            tools_off_after_use("tools-off"),
        ),
        case(
            "completions requiresNonNullAssistantContent",
            json!({"compat": {"requiresNonNullAssistantContent": true}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions thinkingTokenBudgetField and vllmPriority",
            json!({"compat": {"thinkingTokenBudgetField": "thinking_budget", "vllmPriority": -2}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions supportsThinkingTokenBudget",
            json!({"compat": {"supportsThinkingTokenBudget": true}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions samplingParams",
            json!({
                "samplingParams": {"temperature": 0.6, "top_p": 0.9, "min_p": 0.05},
                "samplingParamsByThinkingLevel": {"high": {"top_p": 0.95, "top_k": 20}}
            }),
            tool_round_trip("tool-round-trip"),
        ),
        RowCase {
            name: "responses samplingParams",
            api: wire_api("openai-responses"),
            model_fields: json!({
                "samplingParams": {"temperature": 0.6, "top_p": 0.9, "store": true},
                "samplingParamsByThinkingLevel": {"high": {"top_p": 0.95, "top_logprobs": 2}}
            }),
            base_path: None,
            scenario: tool_round_trip("tool-round-trip"),
        },
        RowCase {
            name: "azure samplingParams",
            api: wire_api("azure-openai-responses"),
            model_fields: json!({
                "samplingParams": {"top_p": 0.8, "truncation": "auto"}
            }),
            base_path: None,
            scenario: tool_round_trip("tool-round-trip"),
        },
        case(
            "completions promptCacheKeyMode enabled",
            json!({"compat": {"promptCacheKeyMode": "enabled"}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions chat-template thinking",
            json!({
                "thinkingLevelMap": {"high": "deep"},
                "compat": {"thinkingFormat": "chat-template", "chatTemplateKwargs": {
                    "enable_thinking": {"$var": "thinking.enabled"},
                    "thinking_budget": {"$var": "thinking.budget"},
                    "reasoning_mode": {"$var": "thinking.effort", "omitWhenOff": true},
                    "fixed": "yes"
                }}
            }),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions session affinity openai-nosession",
            json!({"compat": {"sendSessionAffinityHeaders": true,
                              "sessionAffinityFormat": "openai-nosession"}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions cacheControlFormat anthropic",
            json!({"compat": {"cacheControlFormat": "anthropic"}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions zai thinking",
            json!({"compat": {"thinkingFormat": "zai", "supportsReasoningEffort": true}}),
            tool_round_trip("tool-round-trip"),
        ),
        case(
            "completions qwen thinking",
            json!({"thinkingLevelMap": {"high": null},
                   "compat": {"thinkingFormat": "qwen"}}),
            tool_round_trip("tool-round-trip"),
        ),
        RowCase {
            name: "completions DeepSeek in capitals",
            api: completions,
            model_fields: json!({}),
            base_path: Some("/API.DeepSeek.com/v1"),
            scenario: tool_round_trip("tool-round-trip"),
        },
        case(
            "completions blank tool output",
            json!({}),
            blank_tool_output(),
        ),
        RowCase {
            name: "responses blank tool output",
            api: wire_api("openai-responses"),
            model_fields: json!({}),
            base_path: None,
            scenario: blank_tool_output(),
        },
        RowCase {
            name: "google blank tool output",
            api: wire_api("google-generative-ai"),
            model_fields: json!({}),
            base_path: None,
            scenario: blank_tool_output(),
        },
        RowCase {
            name: "anthropic error-result image",
            api: wire_api("anthropic-messages"),
            model_fields: json!({}),
            base_path: None,
            scenario: error_result_image(),
        },
        RowCase {
            name: "bedrock error-result image",
            api: wire_api("bedrock-converse-stream"),
            // A name with "claude" makes it a Claude model for Bedrock.
            model_fields: json!({"name": "Parity Claude"}),
            base_path: None,
            scenario: error_result_image(),
        },
        RowCase {
            name: "google thinking-level map",
            api: wire_api("google-generative-ai"),
            model_fields: json!({"thinkingLevelMap": {"high": "LOW", "minimal": null}}),
            base_path: None,
            scenario: tool_round_trip("tool-round-trip"),
        },
        RowCase {
            name: "mistral thinking-level map",
            api: wire_api("mistral-conversations"),
            model_fields: json!({"thinkingLevelMap": {"high": "high", "off": "none"}}),
            base_path: None,
            scenario: tool_round_trip("tool-round-trip"),
        },
    ]
    .into_iter()
    .chain(anthropic_cases())
    .collect()
}
