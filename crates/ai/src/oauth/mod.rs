//! Subscription logins (pi-ai's `oauth`): each provider's sign-in flow, token refresh and
//! how its stored credentials become a request key. Storage is the caller's; the file lock
//! it shares with the TypeScript pi is here.

mod anthropic;
mod browser_flow;
mod callback;
mod device;
mod endpoints;
mod file_lock;
mod github_copilot;
pub mod github_copilot_models;
mod google;
mod http;
mod interaction;
mod kimi_coding;
mod meta;
mod openai_chatgpt;
mod openai_codex;
mod openrouter;
mod pkce;
mod xai;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use callback::{CallbackCode, CallbackOptions, CallbackServer};
pub use endpoints::{BASE_URL_ENV, endpoint};
pub use file_lock::FileLock;
pub use github_copilot::copilot_base_url;
pub use interaction::{LoginInteraction, LoginNotice, LoginPrompt, SelectOption};
pub use pkce::{Pkce, challenge_of, random_bytes};

/// Stored OAuth credentials as auth.json holds them (after `"type": "oauth"`): the access
/// token, the refresh token, the expiry in epoch milliseconds and provider extras
/// (`accountId`, `projectId`, `enterpriseUrl`, `email`) kept as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuthCredentials {
    #[serde(default)]
    pub refresh: String,
    #[serde(default)]
    pub access: String,
    #[serde(default)]
    pub expires: i64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl OAuthCredentials {
    /// Whether the access token expires within `margin_ms` from now.
    pub fn expires_within(&self, margin_ms: i64) -> bool {
        now_ms().saturating_add(margin_ms) >= self.expires
    }

    /// A string extra such as `projectId`.
    pub fn extra_str(&self, key: &str) -> Option<&str> {
        self.extra
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
}

/// Why a login or a refresh failed; messages never carry a token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("Login cancelled")]
    Cancelled,
    #[error("{0}")]
    Failed(String),
    /// The refresh token was refused: only a new login helps.
    #[error("{0}")]
    Revoked(String),
}

/// The providers pi can sign in to with an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthProvider {
    Anthropic,
    OpenAiCodex,
    GithubCopilot,
    GoogleGeminiCli,
    GoogleAntigravity,
    KimiCoding,
    Meta,
    OpenAiChatGpt,
    OpenRouter,
    Xai,
}

impl OAuthProvider {
    /// Every provider one can sign in to, in the order `/login` lists them.
    pub const ALL: [OAuthProvider; 8] = [
        OAuthProvider::Anthropic,
        OAuthProvider::GithubCopilot,
        OAuthProvider::KimiCoding,
        OAuthProvider::Meta,
        OAuthProvider::OpenAiChatGpt,
        OAuthProvider::OpenAiCodex,
        OAuthProvider::OpenRouter,
        OAuthProvider::Xai,
    ];

    /// Logins pi no longer offers (Google Gemini CLI and Antigravity, removed in pi 0.71);
    /// a stored one still refreshes.
    const RETIRED: [OAuthProvider; 2] = [
        OAuthProvider::GoogleGeminiCli,
        OAuthProvider::GoogleAntigravity,
    ];

    /// The provider by its id (`anthropic`, `openai-codex`, ...), retired ones included.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .chain(Self::RETIRED)
            .find(|p| p.id() == id)
    }

    /// Whether `/login` and `pi auth login` offer this sign-in.
    pub fn is_offered(self) -> bool {
        Self::ALL.contains(&self)
    }

    /// The provider id models and auth.json use.
    pub fn id(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAiCodex => "openai-codex",
            Self::GithubCopilot => "github-copilot",
            Self::GoogleGeminiCli => "google-gemini-cli",
            Self::GoogleAntigravity => "google-antigravity",
            Self::KimiCoding => "kimi-coding",
            Self::Meta => "meta",
            Self::OpenAiChatGpt => "openai",
            Self::OpenRouter => "openrouter",
            Self::Xai => "xai",
        }
    }

    /// The name shown when signing in.
    pub fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "Anthropic (Claude Pro/Max)",
            Self::OpenAiCodex => "OpenAI (ChatGPT Plus/Pro)",
            Self::GithubCopilot => "GitHub Copilot",
            Self::GoogleGeminiCli => "Google Cloud Code Assist (Gemini CLI)",
            Self::GoogleAntigravity => "Antigravity (Gemini 3, Claude, GPT-OSS)",
            Self::KimiCoding => "Kimi Code (subscription)",
            Self::Meta => "Meta (Muse subscription)",
            Self::OpenAiChatGpt => "OpenAI (ChatGPT subscription)",
            Self::OpenRouter => "OpenRouter OAuth",
            Self::Xai => "xAI (Grok/X subscription)",
        }
    }

    /// The sign-in's name where a provider offers it beside an API key (pi 1.6.0's
    /// `loginLabel`); `None` for the older sign-ins, which `/login` starts directly.
    pub fn login_label(self) -> Option<&'static str> {
        match self {
            Self::KimiCoding => Some("Sign in with Kimi Code"),
            Self::Meta => Some("Sign in with Meta"),
            Self::OpenAiChatGpt => Some("Sign in with ChatGPT"),
            Self::OpenRouter => Some("Sign in with OpenRouter"),
            Self::Xai => Some("Sign in with SuperGrok or X Premium"),
            _ => None,
        }
    }

    /// Whether the provider also takes an API key (`pi auth login --api-key`, `/login`'s key list).
    pub fn has_api_key_login(self) -> bool {
        matches!(
            self,
            Self::Anthropic
                | Self::KimiCoding
                | Self::Meta
                | Self::OpenAiChatGpt
                | Self::OpenRouter
                | Self::Xai
        )
    }

    /// Runs the sign-in flow; the interaction shows URLs and codes and asks for input.
    pub async fn login(self, ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
        let cancel = ui.cancel_token();
        let flow = async {
            match self {
                Self::Anthropic => anthropic::login(ui).await,
                Self::OpenAiCodex => openai_codex::login(ui).await,
                Self::GithubCopilot => github_copilot::login(ui).await,
                Self::GoogleGeminiCli => google::login(google::GEMINI_CLI, ui).await,
                Self::GoogleAntigravity => google::login(google::ANTIGRAVITY, ui).await,
                Self::KimiCoding => kimi_coding::login(ui).await,
                Self::Meta => meta::login(ui).await,
                Self::OpenAiChatGpt => openai_chatgpt::login(ui).await,
                Self::OpenRouter => openrouter::login(ui).await,
                Self::Xai => xai::login(ui).await,
            }
        };
        tokio::select! {
            result = flow => result,
            () = cancel.cancelled() => Err(OAuthError::Cancelled),
        }
    }

    /// Exchanges the refresh token for new credentials (extras carried over).
    pub async fn refresh(
        self,
        credentials: &OAuthCredentials,
    ) -> Result<OAuthCredentials, OAuthError> {
        match self {
            Self::Anthropic => anthropic::refresh(credentials).await,
            Self::OpenAiCodex => openai_codex::refresh(credentials).await,
            Self::GithubCopilot => github_copilot::refresh(credentials).await,
            Self::GoogleGeminiCli => google::refresh(google::GEMINI_CLI, credentials).await,
            Self::GoogleAntigravity => google::refresh(google::ANTIGRAVITY, credentials).await,
            Self::KimiCoding => kimi_coding::refresh(credentials).await,
            Self::Meta => meta::refresh(credentials).await,
            Self::OpenAiChatGpt => openai_chatgpt::refresh(credentials).await,
            // The minted key does not expire: there is nothing to refresh.
            Self::OpenRouter => Ok(credentials.clone()),
            Self::Xai => xai::refresh(credentials).await,
        }
    }

    /// The key requests use: the access token, or for Google the `{token, projectId}` JSON
    /// the Cloud Code Assist provider reads.
    pub fn api_key(self, credentials: &OAuthCredentials) -> String {
        match self {
            Self::GoogleGeminiCli | Self::GoogleAntigravity => serde_json::json!({
                "token": credentials.access,
                "projectId": credentials.extra_str("projectId").unwrap_or_default(),
            })
            .to_string(),
            _ => credentials.access.clone(),
        }
    }

    /// The base URL the provider's models should use with these credentials (Copilot's
    /// token names its API host).
    pub fn base_url(self, credentials: &OAuthCredentials) -> Option<String> {
        match self {
            Self::GithubCopilot => Some(copilot_base_url(
                &credentials.access,
                credentials.extra_str("enterpriseUrl"),
            )),
            _ => None,
        }
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// An expiry `expires_in` seconds from now, less the five minutes pi keeps in hand.
pub(crate) fn expiry_from(expires_in: f64) -> i64 {
    now_ms() + (expires_in * 1000.0) as i64 - 5 * 60 * 1000
}
