//! Request parity for the built-in catalog's models: one model of each kind (provider, wire
//! API, compat flags, reasoning, headers) with its provider's `baseUrl` pointed at the mock
//! server, run with thinking off and at the highest level it offers through a tool round
//! trip, so that what the catalog's metadata makes each pi send (thinking formats, effort
//! values, token fields, replayed reasoning, cache and affinity headers) is compared.

use mock_llm::{Item, Script};
use serde_json::{Value, json};

use super::RunSetup;
use super::apis::SESSION_ID;
use super::scenarios::{NOTES_FILE, Scenario};

/// One catalog model run against the mock.
#[derive(Debug, Clone)]
pub struct CatalogCase {
    pub provider: String,
    pub model: String,
    /// The model's wire API (the known differences of that API apply).
    pub api: String,
    /// The path of the model's base URL, kept below the mock's root.
    pub base_path: String,
    /// The highest thinking level the model offers (`off` for non-reasoning models).
    pub top_level: &'static str,
}

impl CatalogCase {
    /// The case's key in the fixture: `provider/model`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }

    /// The `models.json`, model and credentials that send this model to `url`.
    pub fn setup(&self, url: &str) -> RunSetup {
        let mut env: Vec<(&'static str, String)> =
            pi_ai::env_keys::api_key_env_vars(&self.provider)
                .first()
                .map(|var| vec![(*var, "sk-parity-catalog".to_owned())])
                .unwrap_or_default();
        match self.provider.as_str() {
            "cloudflare-workers-ai" | "cloudflare-ai-gateway" => {
                env.push(("CLOUDFLARE_ACCOUNT_ID", "parity-account".into()));
                env.push(("CLOUDFLARE_GATEWAY_ID", "parity-gateway".into()));
            }
            "amazon-bedrock" => {
                env.push(("AWS_BEARER_TOKEN_BEDROCK", "sk-parity-catalog".into()));
                env.push(("AWS_REGION", "us-east-1".into()));
                env.push(("AWS_BEDROCK_FORCE_HTTP1", "1".into()));
            }
            "google-vertex" => {
                env.push(("GOOGLE_CLOUD_PROJECT", "parity-project".into()));
                env.push(("GOOGLE_CLOUD_LOCATION", "us-central1".into()));
            }
            _ => {}
        }
        let auth = (self.provider == "openai-codex").then(|| {
            json!({"openai-codex": {"type": "oauth", "refresh": "parity-refresh",
                "expires": 4_102_444_800_000_u64, "accountId": "acct-parity",
                "access": super::apis::codex_token()}})
        });
        RunSetup {
            models_json: json!({"providers": {
                self.provider.clone(): {"baseUrl": format!("{url}{}", self.base_path)}
            }}),
            model: self.key(),
            env,
            auth,
        }
    }

    /// The case's two scenarios: a plain prompt with thinking off, and a tool round trip
    /// at the top level with long cache retention whose first answer thinks before it
    /// calls the tool (so that the second request replays the reasoning as the model's
    /// format wants it).
    pub fn scenarios(&self) -> Vec<Scenario> {
        let run = |level: &str, prompt: &str| {
            vec![
                "--session-id".to_owned(),
                SESSION_ID.to_owned(),
                "--thinking".to_owned(),
                level.to_owned(),
                "-p".to_owned(),
                prompt.to_owned(),
            ]
        };
        vec![
            Scenario {
                name: "off".into(),
                runs: vec![run("off", "Say hello.")],
                model: "",
                scripts: vec![Script::text("Hello.")],
                settings: json!({}),
                env: Vec::new(),
            },
            Scenario {
                name: format!("{}-tool-round-trip", self.top_level),
                runs: vec![run(
                    self.top_level,
                    "Read notes.txt and tell me what it says.",
                )],
                model: "",
                scripts: vec![
                    Script::new(vec![
                        Item::thinking("I should read the file."),
                        Item::tool_call("read", json!({"path": NOTES_FILE})),
                    ]),
                    Script::text("It says: the parity notes."),
                ],
                settings: json!({}),
                // Long cache retention: what each model's compat says about it is sent.
                env: vec![("PI_CACHE_RETENTION", "long")],
            },
        ]
    }
}

/// The path of `url` (what follows `scheme://host`), or empty.
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.find('/').map_or(String::new(), |i| {
        rest[i..].trim_end_matches('/').to_owned()
    })
}

/// The model's metadata that decides what is sent, as one comparable key.
fn kind_of(model: &pi_ai::Model) -> String {
    let value = serde_json::to_value(model).unwrap_or(Value::Null);
    let mut compat = value.get("compat").cloned().unwrap_or(Value::Null);
    if let Some(map) = compat.as_object_mut() {
        // Which models a provider may fall back to changes nothing in a request.
        map.remove("allowedFallbackModels");
    }
    json!([
        model.provider,
        value["api"],
        compat,
        value["reasoning"],
        value["headers"]
    ])
    .to_string()
}

/// The first catalog model of each kind, in catalog order, but for `pi-messages` models.
pub fn cases() -> Vec<CatalogCase> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for provider in pi_ai::get_providers() {
        for model in pi_ai::get_models(&provider) {
            // Radius's `pi-messages` API is left out: the mock does not speak it, and ours
            // has no client for it yet (the virtual models of issue 39).
            if model.api == "pi-messages" || !seen.insert(kind_of(&model)) {
                continue;
            }
            out.push(CatalogCase::of(&model));
        }
    }
    // Models the ledger names whose difference is only their thinking levels (which the
    // kind leaves out): Kimi K2.7 Code cannot turn thinking off (pi 0.79.5).
    for (provider, id) in EXTRA_CASES {
        out.push(CatalogCase::named(provider, id));
    }
    out
}

/// Catalog models compared besides the first of each kind.
const EXTRA_CASES: &[(&str, &str)] = &[("moonshotai-cn", "kimi-k2.7-code")];

impl CatalogCase {
    /// The case of one catalog model.
    pub fn of(model: &pi_ai::Model) -> CatalogCase {
        let top_level = pi_ai::models::supported_thinking_levels(model)
            .last()
            .map_or("off", |level| level.as_str());
        let value = serde_json::to_value(model).unwrap_or(Value::Null);
        CatalogCase {
            provider: model.provider.clone(),
            model: model.id.clone(),
            api: value["api"].as_str().unwrap_or_default().to_owned(),
            base_path: path_of(&model.base_url),
            top_level,
        }
    }

    /// The case of the catalog model `provider`/`id` (a test names only models it has).
    pub fn named(provider: &str, id: &str) -> CatalogCase {
        let model = pi_ai::get_models(provider)
            .into_iter()
            .find(|m| m.id == id)
            .unwrap_or_else(|| panic!("{provider}/{id} is not in the catalog"));
        CatalogCase::of(&model)
    }
}
