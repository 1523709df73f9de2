//! The ten wire APIs as the parity runs set them up: a `parity` provider in `models.json`
//! pointing at the mock server, with the key and environment each pi needs to reach it.

use base64::Engine;
use serde_json::{Value, json};

/// The session id every run is started with (`--session-id`), so that both pis send the
/// same one wherever they send it.
pub const SESSION_ID: &str = "019a0000-0000-7000-8000-0000000000a1";

/// One wire API of pi-ai.
#[derive(Debug, Clone, Copy)]
pub struct WireApi {
    /// The `api` value in `models.json`.
    pub api: &'static str,
    /// The base URL's path below the mock's root (each API appends its own endpoint).
    pub base_path: &'static str,
}

/// The ten APIs of `pi_ai::types::model::api`.
pub const APIS: [WireApi; 10] = [
    WireApi {
        api: "openai-completions",
        base_path: "/v1",
    },
    WireApi {
        api: "openai-responses",
        base_path: "/v1",
    },
    WireApi {
        api: "azure-openai-responses",
        base_path: "/openai/v1",
    },
    WireApi {
        api: "openai-codex-responses",
        base_path: "",
    },
    WireApi {
        api: "anthropic-messages",
        base_path: "",
    },
    WireApi {
        api: "bedrock-converse-stream",
        base_path: "",
    },
    WireApi {
        api: "google-generative-ai",
        base_path: "/v1beta",
    },
    WireApi {
        api: "google-gemini-cli",
        base_path: "",
    },
    WireApi {
        api: "google-vertex",
        base_path: "/v1",
    },
    WireApi {
        api: "mistral-conversations",
        base_path: "/mistral",
    },
];

/// The API named `api`.
pub fn wire_api(api: &str) -> WireApi {
    APIS.into_iter()
        .find(|w| w.api == api)
        .unwrap_or_else(|| panic!("unknown API {api}"))
}

impl WireApi {
    /// The key in `models.json`: a made-up one of the shape the API's client accepts.
    pub fn api_key(&self) -> String {
        match self.api {
            // The Codex backend reads the ChatGPT account id out of the OAuth token.
            "openai-codex-responses" => codex_token(),
            // Cloud Code Assist keys are the OAuth token with the Cloud project.
            "google-gemini-cli" => {
                json!({"token": "parity-oauth-token", "projectId": "parity-project"}).to_string()
            }
            other => format!("sk-parity-{other}"),
        }
    }

    /// Environment both pis get for this API (Bedrock: a bearer token and a region, so
    /// that no SigV4 signature, which dates every request, is made).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        match self.api {
            "bedrock-converse-stream" => vec![
                ("AWS_BEARER_TOKEN_BEDROCK", self.api_key()),
                ("AWS_REGION", "us-east-1".into()),
                // pi 1.6.0's AWS client speaks HTTP/2 unless told otherwise; the mock
                // serves both, and HTTP/1.1 keeps the recorded headers alike.
                ("AWS_BEDROCK_FORCE_HTTP1", "1".into()),
            ],
            _ => Vec::new(),
        }
    }

    /// The `models.json` with the `parity` provider on the mock at `url`: a reasoning
    /// model taking images, and a small one for the run near compaction.
    pub fn models_json(&self, url: &str) -> Value {
        let model = |id: &str, context_window: u64, max_tokens: u64| {
            json!({"id": id, "name": id, "reasoning": true, "input": ["text", "image"],
                   "contextWindow": context_window, "maxTokens": max_tokens,
                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
        };
        json!({"providers": {"parity": {
            "baseUrl": format!("{url}{}", self.base_path),
            "api": self.api,
            "apiKey": self.api_key(),
            "models": [model(MODEL, 128_000, 16_384), model(SMALL_MODEL, 24_000, 16_384)],
        }}})
    }
}

/// The model most scenarios run on.
pub const MODEL: &str = "parity-model";
/// The model with a small context window.
pub const SMALL_MODEL: &str = "parity-small";

/// A ChatGPT-style OAuth token carrying an account id, as the Codex backend needs.
pub fn codex_token() -> String {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-parity"}});
    format!(
        "{}.{}.signature",
        engine.encode(r#"{"alg":"none"}"#),
        engine.encode(payload.to_string())
    )
}
