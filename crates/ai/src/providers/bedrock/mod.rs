//! `bedrock-converse-stream`: Amazon Bedrock's ConverseStream API without the AWS SDK —
//! `POST /model/{modelId}/converse-stream` signed with SigV4 (or a Bedrock bearer token),
//! answered with an AWS event-stream of binary messages.

pub mod credentials;
mod decode;
pub mod eventstream;
pub mod request;
pub mod sigv4;

use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;
use futures_core::Stream;
use tokio_util::sync::CancellationToken;

use super::common::{base_options, encode_body, join_url};
use super::strict_limits::{self, Transport};
use crate::api_provider::ApiProvider;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{HttpRequest, RetryPolicy};
use crate::sse::StreamControl;
use crate::types::{
    Context, Model, SimpleStreamOptions, StreamOptions, ThinkingBudgets, ThinkingLevel, api,
};

pub use crate::http::{
    bedrock_exception_prefix as exception_prefix, bedrock_status_message as http_error_message,
};
pub use credentials::AwsCredentials;
pub use decode::{Decoder, map_stop_reason};

/// The signing name of Bedrock Runtime.
pub const SERVICE: &str = "bedrock";
/// The region used when nothing configures one.
pub const DEFAULT_REGION: &str = "us-east-1";
/// Retries the AWS SDK makes in its standard mode (`maxAttempts` 3).
const AWS_SDK_MAX_RETRIES: u32 = 2;

/// Bedrock-specific options (the TypeScript `BedrockOptions` beyond `StreamOptions`).
#[derive(Clone, Default)]
pub struct BedrockOptions {
    /// Region; else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's, or `us-east-1`.
    pub region: Option<String>,
    /// Shared-config profile; else `AWS_PROFILE`.
    pub profile: Option<String>,
    /// Reasoning level (Claude thinking); `None`/`off` disables it.
    pub reasoning: Option<ThinkingLevel>,
    /// Token budgets per level for budget-based Claude models.
    pub thinking_budgets: Option<ThinkingBudgets>,
    /// Interleaved thinking beta for budget-based Claude models (default on).
    pub interleaved_thinking: Option<bool>,
    /// `summarized` (default) or `omitted`.
    pub thinking_display: Option<String>,
    /// Cost-allocation tags sent as `requestMetadata`.
    pub request_metadata: Option<BTreeMap<String, String>>,
    /// Bedrock API key, sent as `Authorization: Bearer`; else `AWS_BEARER_TOKEN_BEDROCK`.
    pub bearer_token: Option<String>,
    /// Explicit credentials, used before the environment and the shared files.
    pub credentials: Option<AwsCredentials>,
    /// Tools that only prefer strictness go plain: Claude refused the session's strict
    /// tool set for its limits (pi-ai 1.5).
    pub disable_preferred_strict_tools: bool,
}

impl std::fmt::Debug for BedrockOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BedrockOptions")
            .field("region", &self.region)
            .field("profile", &self.profile)
            .field("reasoning", &self.reasoning)
            .field("thinking_budgets", &self.thinking_budgets)
            .field("interleaved_thinking", &self.interleaved_thinking)
            .field("thinking_display", &self.thinking_display)
            .field("request_metadata", &self.request_metadata)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("credentials", &self.credentials)
            .field(
                "disable_preferred_strict_tools",
                &self.disable_preferred_strict_tools,
            )
            .finish()
    }
}

/// The `bedrock-converse-stream` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct BedrockConverseStream;

impl ApiProvider for BedrockConverseStream {
    fn api(&self) -> &str {
        api::BEDROCK_CONVERSE_STREAM
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let bedrock = BedrockOptions {
            reasoning: options.reasoning_effort,
            bearer_token: key_as_bearer_token(&options),
            ..BedrockOptions::default()
        };
        stream_bedrock(model, context, options, bedrock)
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        let bedrock = BedrockOptions {
            bearer_token: key_as_bearer_token(&options.stream),
            ..BedrockOptions::default()
        };
        stream_simple_bedrock(model, context, options, bedrock)
    }
}

/// The request's API key as a Bedrock API key (bearer token), as pi-ai 1.6 takes it (before
/// `AWS_BEARER_TOKEN_BEDROCK`); the marker of ambient AWS credentials is no key.
fn key_as_bearer_token(options: &StreamOptions) -> Option<String> {
    options
        .api_key
        .clone()
        .filter(|key| !key.is_empty() && key != "<authenticated>")
}

/// Streams with provider-level and Bedrock options.
pub fn stream_bedrock(
    model: &Model,
    context: &Context,
    options: StreamOptions,
    mut bedrock: BedrockOptions,
) -> AssistantMessageEventStream {
    let session = options.session_id.clone().filter(|s| !s.is_empty());
    let disabled = bedrock.disable_preferred_strict_tools
        || strict_limits::exceeded(Transport::Bedrock, session.as_deref());
    bedrock.disable_preferred_strict_tools = disabled;
    let request = build_request(model, context, &options, &bedrock, SystemTime::now());
    // Claude may refuse a strict tool set over its limits: the request then goes once more
    // with the tools that only prefer strictness plain (pi-ai 1.5).
    let retry = (!disabled
        && request::has_preferred_strict_tools(model, context, options.tool_choice.as_ref()))
    .then(|| {
        let (model, context, options) = (model.clone(), context.clone(), options.clone());
        let mut bedrock = bedrock.clone();
        bedrock.disable_preferred_strict_tools = true;
        strict_limits::Retry::new(
            Transport::Bedrock,
            session,
            Box::new(move || {
                build_request(&model, &context, &options, &bedrock, SystemTime::now())
            }),
        )
    });
    eventstream::run(
        model.clone(),
        request,
        retry,
        retry_policy(&options),
        StreamControl::from_options(&options),
        Decoder::new(model.clone()),
        options.env.clone(),
    )
}

/// pi sends Bedrock requests through the AWS SDK, whose standard retry mode makes up to 3
/// attempts (2 retries) on throttling and server errors whatever pi-ai's own default is;
/// an explicit `max_retries` still applies.
fn retry_policy(options: &StreamOptions) -> RetryPolicy {
    let mut policy = RetryPolicy::from_options(options);
    policy.max_retries = options.max_retries.unwrap_or(AWS_SDK_MAX_RETRIES);
    policy
}

/// Streams with a reasoning level: Claude budget models get the budget added to
/// `maxTokens`; adaptive Claude models get an effort.
pub fn stream_simple_bedrock(
    model: &Model,
    context: &Context,
    options: SimpleStreamOptions,
    mut bedrock: BedrockOptions,
) -> AssistantMessageEventStream {
    let mut base = base_options(model, context, &options);
    let level = options.reasoning.filter(|l| *l != ThinkingLevel::Off);
    bedrock.reasoning = level;
    bedrock.thinking_budgets = options.thinking_budgets;
    if let Some(level) = level
        && request::is_claude(model)
        && !request::supports_adaptive_thinking(model)
    {
        let budgets = options.thinking_budgets.unwrap_or_default();
        let (max_tokens, budget) = super::anthropic_messages::adjust_max_tokens_for_thinking(
            base.max_tokens.unwrap_or(0),
            model.max_tokens,
            level,
            &budgets,
        );
        // Fitted into the window again, the budget leaving 1024 tokens to answer (pi-ai 1.6).
        let max_tokens =
            super::context_fit::clamp_max_tokens_to_context(model, context, max_tokens);
        let budget = budget.min(max_tokens.saturating_sub(1024));
        base.max_tokens = Some(max_tokens);
        let mut budgets = budgets;
        match level.clamp_to_high() {
            ThinkingLevel::Minimal => budgets.minimal = Some(budget),
            ThinkingLevel::Low => budgets.low = Some(budget),
            ThinkingLevel::Medium => budgets.medium = Some(budget),
            _ => budgets.high = Some(budget),
        }
        bedrock.thinking_budgets = Some(budgets);
    }
    stream_bedrock(model, context, base, bedrock)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Provider-scoped environment values (`auth.json` `env`), read before the process's.
pub type ScopedEnv<'a> = Option<&'a BTreeMap<String, String>>;

fn var(name: &str, scoped: ScopedEnv) -> Option<String> {
    crate::env_keys::provider_env(name, scoped)
}

/// The region from the options or the environment (`AWS_REGION`, `AWS_DEFAULT_REGION`), each
/// variable's scoped value first.
pub fn configured_region(bedrock: &BedrockOptions, scoped: ScopedEnv) -> Option<String> {
    bedrock
        .region
        .clone()
        .filter(|r| !r.is_empty())
        .or_else(|| var("AWS_REGION", scoped))
        .or_else(|| var("AWS_DEFAULT_REGION", scoped))
}

/// The profile the request names: the option, else the provider-scoped `AWS_PROFILE` (an
/// `auth.json` key's `env`). An ambient `AWS_PROFILE` is not named by the request: pi-ai 1.6
/// lets ambient keys win over it, but never over a named one.
pub fn explicit_profile(bedrock: &BedrockOptions, scoped: ScopedEnv) -> Option<String> {
    bedrock
        .profile
        .clone()
        .filter(|p| !p.is_empty())
        .or_else(|| scoped.and_then(|env| env.get("AWS_PROFILE")).cloned())
        .filter(|p| !p.is_empty())
}

/// The region of a standard Bedrock Runtime endpoint URL
/// (`https://bedrock-runtime[-fips].{region}.amazonaws.com[.cn]`).
pub fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    let rest = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest
        .strip_suffix(".amazonaws.com")
        .or_else(|| rest.strip_suffix(".amazonaws.com.cn"))?;
    let valid = !region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    valid.then(|| region.to_owned())
}

/// The region embedded in a model id that is a Bedrock ARN (an inference profile:
/// `arn:aws[-partition]:bedrock:{region}:…`), which pi 1.6 prefers over any configured one.
pub fn arn_region(model_id: &str) -> Option<String> {
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    let mut fields = model_id.split(':');
    if fields.next()? != "arn" {
        return None;
    }
    let partition = fields.next()?;
    if partition != "aws" && !partition.strip_prefix("aws-").is_some_and(word) {
        return None;
    }
    if fields.next()? != "bedrock" {
        return None;
    }
    let region = fields.next()?;
    // The region is followed by another field (the account).
    (word(region) && fields.next().is_some()).then(|| region.to_owned())
}

/// Where to send the request and which region to sign for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Base URL (`/model/…` is appended).
    pub base_url: String,
    pub region: String,
}

/// Resolves endpoint and region as the TypeScript pi does: a custom `baseUrl` (proxy, VPC
/// endpoint, test server) is always used; a standard regional one only when no region or
/// profile is configured, else the configured region's endpoint.
/// An ambient `AWS_PROFILE` (not a scoped one, as in pi-ai 1.6) keeps a standard endpoint
/// from overriding the profile's region.
pub fn resolve_target(
    model: &Model,
    bedrock: &BedrockOptions,
    scoped: ScopedEnv,
) -> Result<Target, String> {
    let configured = configured_region(bedrock, scoped);
    let has_profile = env("AWS_PROFILE").is_some();
    let endpoint_region = standard_endpoint_region(&model.base_url);
    let explicit = endpoint_region.is_none() || (configured.is_none() && !has_profile);
    let region = match (
        arn_region(&model.id),
        configured,
        explicit.then_some(endpoint_region).flatten(),
    ) {
        (Some(region), _, _) => region,
        (None, Some(region), _) => region,
        (None, None, Some(region)) => region,
        (None, None, None) if !has_profile => DEFAULT_REGION.to_owned(),
        (None, None, None) => {
            credentials::profile_region(explicit_profile(bedrock, scoped).as_deref())
                .ok_or_else(|| "Region is missing".to_owned())?
        }
    };
    let base_url = if explicit && !model.base_url.is_empty() {
        model.base_url.trim_end_matches('/').to_owned()
    } else {
        let suffix = if region.starts_with("cn-") {
            "amazonaws.com.cn"
        } else {
            "amazonaws.com"
        };
        format!("https://bedrock-runtime.{region}.{suffix}")
    };
    Ok(Target { base_url, region })
}

/// How the request authenticates.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <token>` (Bedrock API keys).
    Bearer(String),
    /// SigV4 with these credentials.
    SigV4(AwsCredentials),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            Self::SigV4(c) => f.debug_tuple("SigV4").field(c).finish(),
        }
    }
}

/// Picks the authentication: an explicit bearer token, explicit credentials, then
/// `AWS_BEARER_TOKEN_BEDROCK`, then the SDK chain (environment keys, shared files).
/// `AWS_BEDROCK_SKIP_AUTH=1` signs with dummy keys (proxies that need none).
pub fn resolve_auth(bedrock: &BedrockOptions, scoped: ScopedEnv) -> Result<Auth, String> {
    if var("AWS_BEDROCK_SKIP_AUTH", scoped).as_deref() == Some("1") {
        return Ok(Auth::SigV4(AwsCredentials::new(
            "dummy-access-key",
            "dummy-secret-key",
        )));
    }
    if let Some(token) = bedrock.bearer_token.clone().filter(|t| !t.is_empty()) {
        return Ok(Auth::Bearer(token));
    }
    if let Some(credentials) = &bedrock.credentials {
        return Ok(Auth::SigV4(credentials.clone()));
    }
    if let Some(token) = var("AWS_BEARER_TOKEN_BEDROCK", scoped) {
        return Ok(Auth::Bearer(token));
    }
    credentials::resolve(explicit_profile(bedrock, scoped).as_deref(), scoped).map(Auth::SigV4)
}

/// Builds the signed HTTP request (`now` dates the signature).
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    bedrock: &BedrockOptions,
    now: SystemTime,
) -> Result<HttpRequest, String> {
    let scoped = options.env.as_deref();
    let target = resolve_target(model, bedrock, scoped)?;
    let auth = resolve_auth(bedrock, scoped)?;
    let region = configured_region(bedrock, scoped);
    let body = request::build_body(model, context, options, bedrock, region.as_deref())?;
    let body = encode_body(model, &body, options)?;
    let path = format!(
        "model/{}/converse-stream",
        sigv4::uri_encode(&model.id, true)
    );
    let mut request = HttpRequest {
        url: join_url(&target.base_url, &path),
        headers: vec![("content-type".into(), "application/json".into())],
        body,
    };
    request.apply_overrides(model.headers.iter().flatten());
    request.apply_option_headers(options);
    match auth {
        Auth::Bearer(token) => request.set_header("authorization", &format!("Bearer {token}")),
        Auth::SigV4(credentials) => sign_request(&mut request, &credentials, &target.region, now)?,
    }
    Ok(request)
}

/// Adds `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` and the SigV4
/// `authorization` header, signing every signable header plus `host`.
pub fn sign_request(
    request: &mut HttpRequest,
    credentials: &AwsCredentials,
    region: &str,
    now: SystemTime,
) -> Result<(), String> {
    let url = reqwest::Url::parse(&request.url)
        .map_err(|e| format!("Invalid Bedrock endpoint {}: {e}", request.url))?;
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => return Err(format!("Invalid Bedrock endpoint {}", request.url)),
    };
    let date = sigv4::amz_date(now);
    let payload_hash = sigv4::sha256_hex(request.body.bytes().map_or(&[][..], |b| &b[..]));
    request.set_header("x-amz-date", &date);
    request.set_header("x-amz-content-sha256", &payload_hash);
    match credentials.session_token.as_deref() {
        Some(token) => request.set_header("x-amz-security-token", token),
        None => request
            .headers
            .retain(|(n, _)| !n.eq_ignore_ascii_case("x-amz-security-token")),
    }
    request
        .headers
        .retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
    let mut signed_headers = request.headers.clone();
    signed_headers.push(("host".into(), host));
    let key = sigv4::SigningKey {
        access_key_id: &credentials.access_key_id,
        secret_access_key: &credentials.secret_access_key,
        region,
        service: SERVICE,
    };
    let signature = sigv4::sign(
        &key,
        "POST",
        url.path(),
        url.query().unwrap_or(""),
        &signed_headers,
        &payload_hash,
        &date,
    );
    request.set_header("authorization", &signature.authorization);
    Ok(())
}

/// Decodes a recorded event-stream body of this API (replay tests and benchmarks).
pub fn decode_bytes<S, E>(
    model: &Model,
    bytes: S,
    cancel: CancellationToken,
) -> AssistantMessageEventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    eventstream::replay(model, bytes, cancel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inference_profile_arn_names_its_region() {
        let arn = "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude";
        assert_eq!(arn_region(arn).as_deref(), Some("eu-west-1"));
        let gov = "arn:aws-us-gov:bedrock:us-gov-west-1:1:application-inference-profile/x";
        assert_eq!(arn_region(gov).as_deref(), Some("us-gov-west-1"));
        assert_eq!(arn_region("anthropic.claude-sonnet-4-5"), None);
        assert_eq!(arn_region("arn:aws:s3:eu-west-1:1:x"), None);
        assert_eq!(arn_region("arn:aws:bedrock:eu-west-1"), None);
    }

    fn model(base_url: &str) -> Model {
        let mut m = crate::models::get_model("amazon-bedrock", "amazon.nova-lite-v1:0").unwrap();
        m.base_url = base_url.into();
        m
    }

    #[test]
    fn recognizes_standard_endpoints() {
        for (url, region) in [
            (
                "https://bedrock-runtime.us-west-2.amazonaws.com",
                Some("us-west-2"),
            ),
            (
                "https://bedrock-runtime-fips.us-east-1.amazonaws.com/",
                Some("us-east-1"),
            ),
            (
                "https://bedrock-runtime.cn-north-1.amazonaws.com.cn",
                Some("cn-north-1"),
            ),
            ("https://my-proxy.example.com", None),
            ("http://127.0.0.1:8080", None),
        ] {
            assert_eq!(standard_endpoint_region(url).as_deref(), region, "{url}");
        }
    }

    #[test]
    fn custom_endpoints_are_used_with_the_configured_region() {
        let bedrock = BedrockOptions {
            region: Some("eu-central-1".into()),
            ..Default::default()
        };
        let target = resolve_target(&model("http://127.0.0.1:9/"), &bedrock, None).unwrap();
        assert_eq!(target.base_url, "http://127.0.0.1:9");
        assert_eq!(target.region, "eu-central-1");
        // A standard endpoint yields to the configured region.
        let target = resolve_target(
            &model("https://bedrock-runtime.us-east-1.amazonaws.com"),
            &bedrock,
            None,
        )
        .unwrap();
        assert_eq!(
            target.base_url,
            "https://bedrock-runtime.eu-central-1.amazonaws.com"
        );
    }

    #[test]
    fn debug_output_hides_tokens() {
        let bedrock = BedrockOptions {
            bearer_token: Some("bedrock-api-key-secret".into()),
            credentials: Some(AwsCredentials::new("AKID", "top-secret")),
            ..Default::default()
        };
        let shown = format!("{bedrock:?}");
        assert!(!shown.contains("bedrock-api-key-secret") && !shown.contains("top-secret"));
    }
}
