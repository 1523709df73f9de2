//! Request parity for the upstream ledger's rows about the OpenAI-family providers: named
//! catalog models whose requests a row is about (OpenRouter's Kimi models), and custom
//! `models.json` providers that set what a row changed (the Responses developer role,
//! routing preferences behind a proxy, long session ids as prompt cache keys, Codex header
//! overrides, default output caps on small windows, blank tool output).

use mock_llm::{Item, Script};
use serde_json::{Value, json};

use super::RunSetup;
use super::apis::{MODEL, wire_api};
use super::catalog::CatalogCase;
use super::scenarios::{NOTES_FILE, Scenario, print, scenario};
use super::streams::{self, ResponsesShape};

/// A session id over OpenAI's 64-character `prompt_cache_key` limit.
pub const LONG_SESSION_ID: &str =
    "parity.session-0123456789-0123456789-0123456789-0123456789-0123456789_end";

/// One ledger case: a model set up on the mock and what is run on it.
pub struct ProviderRow {
    /// The fixture key.
    pub name: String,
    /// The wire API whose known differences apply.
    pub api: String,
    /// A catalog model's `provider/id`, whose own known differences apply as well.
    pub catalog: Option<String>,
    /// The `models.json`, model and credentials on the mock at a URL.
    pub setup: Box<dyn Fn(&str) -> RunSetup>,
    pub scenario: Scenario,
}

/// The catalog model `provider`/`id` through its scenarios (thinking off; a tool round
/// trip at its top level), one case each.
fn catalog(provider: &str, id: &str) -> Vec<ProviderRow> {
    let case = CatalogCase::named(provider, id);
    case.scenarios()
        .into_iter()
        .map(|scenario| {
            let setup_case = case.clone();
            ProviderRow {
                name: format!("{} {}", case.key(), scenario.name),
                api: case.api.clone(),
                catalog: Some(case.key()),
                setup: Box::new(move |url| setup_case.setup(url)),
                scenario,
            }
        })
        .collect()
}

/// A custom `parity` provider on `api` whose models `edit` changes.
fn custom_with(
    name: &str,
    api: &'static str,
    edit: impl Fn(&mut Value) + 'static,
    scenario: Scenario,
) -> ProviderRow {
    let wire = wire_api(api);
    ProviderRow {
        name: name.to_owned(),
        api: api.to_owned(),
        catalog: None,
        setup: Box::new(move |url| {
            let mut models_json = wire.models_json(url);
            if let Some(models) = models_json["providers"]["parity"]["models"].as_array_mut() {
                models.iter_mut().for_each(&edit);
            }
            RunSetup {
                models_json,
                model: format!("parity/{MODEL}"),
                env: wire.env(),
                auth: None,
            }
        }),
        scenario,
    }
}

/// A custom `parity` provider on `api` whose models get `model_fields`.
fn custom(name: &str, api: &'static str, model_fields: Value, scenario: Scenario) -> ProviderRow {
    custom_with(
        name,
        api,
        move |model| {
            if let (Some(model), Some(fields)) = (model.as_object_mut(), model_fields.as_object()) {
                model.extend(fields.clone());
            }
        },
        scenario,
    )
}

/// The model thinks, calls `tool` with `arguments`, then answers, at thinking `high`.
fn tool_then_answer(name: &str, tool: &str, arguments: Value) -> Scenario {
    scenario(
        name,
        vec![print(
            &["--thinking", "high"],
            &["Use the tool, then answer."],
        )],
        vec![
            Script::new(vec![
                Item::thinking("I should use the tool."),
                Item::tool_call(tool, arguments),
            ]),
            Script::text("Done."),
        ],
    )
}

/// A catalog model through one scenario of the test's.
fn catalog_with(provider: &str, id: &str, scenario: Scenario) -> ProviderRow {
    let case = CatalogCase::named(provider, id);
    let key = case.key();
    ProviderRow {
        name: format!("{key} {}", scenario.name),
        api: case.api.clone(),
        catalog: Some(key),
        setup: Box::new(move |url| case.setup(url)),
        scenario,
    }
}

/// The model answers with `first` (a stream that calls `read`), then with text; the
/// second request shows what ours made of the first stream.
fn replayed(name: &str, first: Script) -> Scenario {
    scenario(
        name,
        vec![print(&["--thinking", "high"], &["Read notes.txt."])],
        vec![first, Script::text("It says: the parity notes.")],
    )
}

/// A tool round trip at thinking `high` in a session whose id is over 64 characters.
fn long_session() -> Scenario {
    let mut case = tool_then_answer("long-session-id", "read", json!({"path": NOTES_FILE}));
    case.runs = vec![
        ["--session-id", LONG_SESSION_ID, "--thinking", "high", "-p"]
            .iter()
            .map(|s| (*s).to_owned())
            .chain(["Read notes.txt.".to_owned()])
            .collect(),
    ];
    case
}

/// A tool whose output is whitespace only (a bare `\r\n`), then an empty file read.
fn blank_tool_output() -> Scenario {
    scenario(
        "blank-tool-output",
        vec![print(&["--thinking", "high"], &["Run the commands."])],
        vec![
            Script::tool_call("bash", json!({"command": "printf '\\r\\n'; : > empty.txt"})),
            Script::tool_call("read", json!({"path": "empty.txt"})),
            Script::text("Done."),
        ],
    )
}

/// Every case, in the fixture's order.
pub fn cases() -> Vec<ProviderRow> {
    let mut out = Vec::new();
    // pi 0.78: OpenRouter's Kimi K2.6 takes `system`, not `developer`, and its thinking is
    // replayed as `reasoning_content`; reasoning-mandatory models get no `effort: "none"`.
    out.extend(catalog("openrouter", "moonshotai/kimi-k2.6"));
    out.extend(catalog("openrouter", "moonshotai/kimi-k2-thinking"));
    out.extend(catalog("openrouter", "moonshotai/kimi-k3"));
    let round_trip = || tool_then_answer("tool-round-trip", "read", json!({"path": NOTES_FILE}));
    // pi 0.79: `compat.supportsDeveloperRole: false` on a Responses custom provider.
    out.push(custom(
        "responses supportsDeveloperRole false",
        "openai-responses",
        json!({"compat": {"supportsDeveloperRole": false}}),
        round_trip(),
    ));
    out.push(custom(
        "responses promptCacheKeyMode disabled",
        "openai-responses",
        json!({"compat": {"promptCacheKeyMode": "disabled"}}),
        round_trip(),
    ));
    // pi 0.79: routing preferences whatever the base URL (a proxy in front of OpenRouter).
    out.push(custom(
        "completions routing behind a proxy",
        "openai-completions",
        json!({"compat": {
            "openRouterRouting": {"order": ["moonshotai"], "allow_fallbacks": false},
            "vercelGatewayRouting": {"only": ["anthropic"], "order": ["anthropic"]}
        }}),
        round_trip(),
    ));
    // pi 0.75 / 0.80: prompt cache keys (and Codex's session headers) within 64 characters.
    for (api, fields) in [
        ("openai-responses", json!({})),
        ("azure-openai-responses", json!({})),
        ("openai-codex-responses", json!({})),
        (
            "openai-completions",
            json!({"compat": {"promptCacheKeyMode": "enabled"}}),
        ),
    ] {
        out.push(custom(
            &format!("{api} long session id"),
            api,
            fields,
            long_session(),
        ));
    }
    // pi 1.1: `models.json` headers replace Codex's `originator` (and user agent).
    out.push(custom(
        "codex model headers",
        "openai-codex-responses",
        json!({"headers": {"originator": "parity-app", "x-parity": "1"}}),
        round_trip(),
    ));
    // pi 0.75: a custom model without `maxTokens` on a small window asks for what fits
    // (with a system prompt of the test's and no tools, so that both pis estimate the
    // same prompt).
    let small_window = scenario(
        "small-window-default-cap",
        vec![print(
            &[
                "--no-tools",
                "--system-prompt",
                "You are the parity tester.",
            ],
            &["Say hello."],
        )],
        vec![Script::text("Hello.")],
    );
    for api in ["openai-completions", "openai-responses"] {
        out.push(custom_with(
            &format!("{api} default cap on a small window"),
            api,
            |model| {
                model["contextWindow"] = json!(16_384);
                if let Some(model) = model.as_object_mut() {
                    model.remove("maxTokens");
                }
            },
            small_window.clone(),
        ));
    }
    // pi 0.80.4: a Responses output cap below OpenAI's minimum (16) is raised to it.
    for api in ["openai-responses", "azure-openai-responses"] {
        out.push(custom(
            &format!("{api} output cap below the minimum"),
            api,
            json!({"maxTokens": 8}),
            small_window.clone(),
        ));
    }
    // pi 0.80 / 1.4: tool output that is blank (whitespace only, or empty without an
    // image) is sent as `(no tool output)`.
    for api in ["openai-completions", "openai-responses"] {
        out.push(custom(
            &format!("{api} blank tool output"),
            api,
            json!({}),
            blank_tool_output(),
        ));
    }
    streamed(&mut out);
    out
}

/// The decoder rows: streams in the shapes the rows name, replayed in the next request.
fn streamed(out: &mut Vec<ProviderRow>) {
    let openrouter_format = || json!({"compat": {"thinkingFormat": "openrouter"}});
    out.push(custom(
        "completions early encrypted reasoning_details",
        "openai-completions",
        openrouter_format(),
        replayed(
            "early-details",
            streams::completions_early_encrypted_details(),
        ),
    ));
    out.push(custom(
        "completions split reasoning_details",
        "openai-completions",
        openrouter_format(),
        replayed("split-details", streams::completions_split_details()),
    ));
    // pi 0.75.1: OpenCode Go thinking streamed as `reasoning` is replayed as
    // `reasoning_content` (OpenCode Zen's keeps the field it came in).
    for provider in ["opencode-go", "opencode"] {
        let mut scenario = replayed(
            "reasoning-field",
            Script::new(vec![
                Item::thinking("I should read the file."),
                Item::tool_call("read", json!({"path": NOTES_FILE})),
            ])
            .with_reasoning_field("reasoning"),
        );
        scenario.runs = vec![print(&["--thinking", "max"], &["Read notes.txt."])];
        out.push(catalog_with(provider, "kimi-k3", scenario));
    }
    for (api, shape, name) in [
        (
            "azure-openai-responses",
            ResponsesShape::EncryptedAtCompletion,
            "encrypted-at-completion",
        ),
        (
            "openai-responses",
            ResponsesShape::OutOfOrder,
            "out-of-order",
        ),
        (
            "openai-responses",
            ResponsesShape::NoOutputIndex,
            "no-output-index",
        ),
    ] {
        out.push(custom(
            &format!("{api} {name}"),
            api,
            json!({}),
            replayed(name, streams::responses_reasoning_then_call(shape)),
        ));
    }
}
