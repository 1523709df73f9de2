//! `google-gemini-cli`: Gemini through Cloud Code Assist (`v1internal:streamGenerateContent`),
//! the endpoint of the Gemini CLI's Google sign-in. The key is the JSON `{"token", "projectId"}`
//! that `/login` stores; the request is wrapped as `{project, model, request}`.

use serde::{Deserialize, Serialize};

use super::shared::{
    self, Content, GenerationConfig, GoogleThinking, Part, SchemaForm, ToolConfig, ToolDeclarations,
};
use crate::http::HttpRequest;
use crate::providers::common;
use crate::types::{Context, Model, StreamOptions, ThinkingBudgets, ThinkingLevel};

/// Cloud Code Assist's production endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://cloudcode-pa.googleapis.com";
const USER_AGENT: &str = "google-cloud-sdk vscode_cloudshelleditor/0.1";
const API_CLIENT: &str = "gl-node/22.17.0";
const CLIENT_METADATA: &str =
    r#"{"ideType":"IDE_UNSPECIFIED","platform":"PLATFORM_UNSPECIFIED","pluginType":"GEMINI"}"#;

/// The OAuth access token and Google Cloud project of a signed-in user.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Credentials {
    #[serde(default)]
    pub token: String,
    #[serde(default)]
    pub project_id: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("token", &"<redacted>")
            .field("project_id", &self.project_id)
            .finish()
    }
}

/// Parses the stored key, with the TypeScript pi's messages for each problem.
pub fn parse_credentials(api_key: Option<&str>) -> Result<Credentials, String> {
    let raw = api_key.filter(|k| !k.is_empty()).ok_or(
        "Google Cloud Code Assist requires OAuth authentication. Use /login to authenticate.",
    )?;
    let credentials: Credentials = serde_json::from_str(raw).map_err(|_| {
        "Invalid Google Cloud Code Assist credentials. Use /login to re-authenticate.".to_owned()
    })?;
    if credentials.token.is_empty() || credentials.project_id.is_empty() {
        return Err(
            "Missing token or projectId in Google Cloud credentials. Use /login to re-authenticate."
                .to_owned(),
        );
    }
    Ok(credentials)
}

/// The inner `request`: a `GenerateContentRequest` plus the session id.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InnerRequest<'a> {
    pub contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_config: Option<GenerationConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolDeclarations<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig>,
}

/// The Cloud Code Assist request body.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Body<'a> {
    pub project: &'a str,
    pub model: &'a str,
    pub request: InnerRequest<'a>,
    pub user_agent: &'static str,
    pub request_id: &'a str,
}

/// `pi-<ms>-<9 base-36 characters>`, as the TypeScript pi names requests.
fn request_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut seed = u64::from(now.subsec_nanos()) ^ (now.as_secs().rotate_left(32));
    let mut suffix = String::with_capacity(9);
    for _ in 0..9 {
        // xorshift: enough to make ids distinct, not a secret.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let digit = (seed % 36) as u32;
        suffix.push(char::from_digit(digit, 36).unwrap_or('0'));
    }
    format!("pi-{}-{suffix}", now.as_millis())
}

/// Builds the body for `messages` (the transformed conversation of `context`).
pub fn build_body<'a>(
    model: &'a Model,
    context: &'a Context,
    messages: &'a [crate::types::Message],
    options: &'a StreamOptions,
    thinking: Option<&GoogleThinking>,
    project: &'a str,
    request_id: &'a str,
) -> Body<'a> {
    let generation_config = shared::generation_config(
        model,
        options.temperature,
        options.max_tokens,
        thinking,
        false,
    );
    let system_instruction = context
        .system_prompt
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(|prompt| Content {
            role: None,
            parts: vec![Part {
                text: Some(prompt.into()),
                ..Part::default()
            }],
        });
    // Claude behind Cloud Code Assist needs the OpenAPI `parameters` form (translated to
    // Anthropic's `input_schema`).
    let form = if model.id.starts_with("claude-") {
        SchemaForm::OpenApi
    } else {
        SchemaForm::JsonSchema
    };
    let tools = shared::convert_tools(&context.tools, form, false);
    let tool_config = tools
        .as_ref()
        .and(options.tool_choice.as_ref())
        .map(shared::tool_config);
    Body {
        project,
        model: &model.id,
        request: InnerRequest {
            contents: shared::convert_messages(model, messages),
            session_id: options.session_id.as_deref(),
            system_instruction,
            generation_config,
            tools,
            tool_config,
        },
        user_agent: "pi-coding-agent",
        request_id,
    }
}

/// The request: URL (`baseUrl` or the production endpoint), headers and body.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    thinking: Option<&GoogleThinking>,
    credentials: &Credentials,
) -> Result<HttpRequest, String> {
    // Built once: the body is written twice (measured, then sent) and must not change.
    let parts = (
        model.clone(),
        common::frame_of(context),
        shared::prepare_messages(model, &context.messages),
        options.clone(),
        thinking.copied(),
        credentials.project_id.clone(),
        request_id(),
    );
    let body = common::written_body(model, options, parts, |parts, out| {
        let (model, context, messages, options, thinking, project, id) = parts;
        let body = build_body(
            model,
            context,
            messages,
            options,
            thinking.as_ref(),
            project,
            id,
        );
        serde_json::to_writer(out, &body)
    })?;
    let endpoint = match model.base_url.trim() {
        "" => DEFAULT_ENDPOINT,
        base => base,
    };
    let mut request = HttpRequest {
        url: format!(
            "{}/v1internal:streamGenerateContent?alt=sse",
            endpoint.trim_end_matches('/')
        ),
        headers: vec![
            (
                "authorization".into(),
                format!("Bearer {}", credentials.token),
            ),
            ("content-type".into(), "application/json".into()),
            ("accept".into(), "text/event-stream".into()),
            ("user-agent".into(), USER_AGENT.into()),
            ("x-goog-api-client".into(), API_CLIENT.into()),
            ("client-metadata".into(), CLIENT_METADATA.into()),
        ],
        body,
    };
    request.apply_overrides(model.headers.iter().flatten());
    request.apply_option_headers(options);
    Ok(request)
}

/// Thinking for a reasoning level: a level for Gemini 3, else a budget (default 1024 / 2048 /
/// 8192 / 16384) added on top of `max_tokens` within the model's limit.
pub fn simple_thinking(
    model: &Model,
    reasoning: Option<ThinkingLevel>,
    budgets: Option<&ThinkingBudgets>,
    max_tokens: &mut Option<u64>,
) -> GoogleThinking {
    let Some(effort) = reasoning
        .filter(|l| *l != ThinkingLevel::Off)
        .map(ThinkingLevel::clamp_to_high)
    else {
        return GoogleThinking::DISABLED;
    };
    if shared::is_gemini3_pro(&model.id) || shared::is_gemini3_flash(&model.id) {
        return GoogleThinking {
            enabled: true,
            budget_tokens: None,
            level: Some(shared::thinking_level(&model.id, effort, false)),
        };
    }
    let (adjusted, budget) = crate::providers::anthropic_messages::adjust_max_tokens_for_thinking(
        max_tokens.unwrap_or(0),
        model.max_tokens,
        effort,
        &budgets.copied().unwrap_or_default(),
    );
    *max_tokens = Some(adjusted);
    GoogleThinking {
        enabled: true,
        budget_tokens: Some(i64::try_from(budget).unwrap_or(i64::MAX)),
        level: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_errors_follow_typescript() {
        assert_eq!(
            parse_credentials(None).unwrap_err(),
            "Google Cloud Code Assist requires OAuth authentication. Use /login to authenticate."
        );
        assert_eq!(
            parse_credentials(Some("not json")).unwrap_err(),
            "Invalid Google Cloud Code Assist credentials. Use /login to re-authenticate."
        );
        assert_eq!(
            parse_credentials(Some(r#"{"token":"t"}"#)).unwrap_err(),
            "Missing token or projectId in Google Cloud credentials. Use /login to re-authenticate."
        );
        let ok = parse_credentials(Some(r#"{"token":"ya29.x","projectId":"proj-1"}"#)).unwrap();
        assert_eq!(
            (ok.token.as_str(), ok.project_id.as_str()),
            ("ya29.x", "proj-1")
        );
        assert!(!format!("{ok:?}").contains("ya29"));
    }

    #[test]
    fn request_ids_look_like_the_typescript_ones() {
        let id = request_id();
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(parts[0], "pi");
        assert!(parts[1].parse::<u64>().is_ok());
        assert_eq!(parts[2].len(), 9);
    }
}
