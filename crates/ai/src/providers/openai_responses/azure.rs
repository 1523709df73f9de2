//! `azure-openai-responses`: the Responses API of an Azure OpenAI resource.
//!
//! The endpoint is `<base>/responses?api-version=<version>` with an `api-key` header. The
//! base URL comes from the `azureBaseUrl` option, `AZURE_OPENAI_BASE_URL`, the resource name
//! (`azureResourceName`, `AZURE_OPENAI_RESOURCE_NAME`: `https://<name>.openai.azure.com/openai/v1`)
//! or the model's `baseUrl`; the version from `azureApiVersion`, `AZURE_OPENAI_API_VERSION`
//! or `v1`; the deployment (sent as `model`) from `azureDeploymentName`,
//! `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`model=deployment,…`) or the model id.

use std::collections::HashMap;

use super::super::common::{frame_of, join_url, missing_key, resolve_api_key, written_body};
use super::request;
use super::{Decoder, Flavor, env_var, simple_options};
use crate::api_provider::ApiProvider;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{ErrorStyle, HttpRequest, RetryPolicy};
use crate::providers::sampling::WithSampling;
use crate::sse::{self, StreamControl};
use crate::types::{
    Context, Message, Model, OpenAiResponsesOptions, SimpleStreamOptions, StreamOptions, api,
};

const DEFAULT_API_VERSION: &str = "v1";
const MISSING_KEY: &str = "Azure OpenAI API key is required. Set AZURE_OPENAI_API_KEY environment variable or pass it as an argument.";
const MISSING_BASE_URL: &str = "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or model.baseUrl.";

/// `azure-openai-responses`: the Responses API on Azure OpenAI.
#[derive(Debug, Clone, Copy, Default)]
pub struct AzureOpenAiResponses;

impl ApiProvider for AzureOpenAiResponses {
    fn api(&self) -> &str {
        api::AZURE_OPENAI_RESPONSES
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let api_key = resolve_api_key(model, &options).or_else(|| env_var("AZURE_OPENAI_API_KEY"));
        let request = match api_key {
            // The endpoint, version and deployment map read the key's scoped env first.
            Some(key) => build_request(model, context, &options, &key, &|name| {
                crate::env_keys::provider_env(name, options.env.as_deref())
            }),
            None => Err(MISSING_KEY.to_owned()),
        };
        sse::run(
            model.clone(),
            request,
            RetryPolicy::from_options(&options),
            StreamControl::from_options(&options).with_error_prefix("Azure OpenAI API error"),
            ErrorStyle::OpenAi,
            Decoder::new(model.clone(), Flavor::Azure, None),
        )
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        match simple_options(model, context, &options) {
            Some(base) => self.stream(model, context, base),
            None => missing_key(model),
        }
    }
}

/// Reads an environment variable (non-empty); tests pass their own.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// `model=deployment` pairs, comma separated (later pairs win).
fn parse_deployment_map(value: Option<String>) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for entry in value.iter().flat_map(|v| v.split(',')) {
        let entry = entry.trim();
        let mut parts = entry.split('=');
        if let (Some(model), Some(deployment)) = (parts.next(), parts.next())
            && !model.is_empty()
            && !deployment.is_empty()
        {
            map.insert(model.trim().to_owned(), deployment.trim().to_owned());
        }
    }
    map
}

/// The deployment the request names as `model`.
pub fn deployment_name(
    model: &Model,
    options: Option<&OpenAiResponsesOptions>,
    env: EnvLookup,
) -> String {
    if let Some(name) = options
        .and_then(|o| o.azure_deployment_name.as_deref())
        .filter(|n| !n.is_empty())
    {
        return name.to_owned();
    }
    parse_deployment_map(env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP"))
        .remove(&model.id)
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| model.id.clone())
}

/// Splits `scheme://authority/path?query#fragment`; `None` when it is not an absolute URL.
fn split_url(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return None;
    }
    Some((scheme, authority, tail))
}

/// An Azure host's (`*.openai.azure.com`, `*.cognitiveservices.azure.com`, Microsoft
/// Foundry's `*.ai.azure.com`) bare, `/openai` or `/openai/v1/responses` URL becomes its
/// `/openai/v1` endpoint without a query, as pi-ai 1.6 does; trailing slashes go.
pub fn normalize_base_url(base_url: &str) -> Result<String, String> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let Some((scheme, authority, tail)) = split_url(trimmed) else {
        return Err(format!("Invalid Azure OpenAI base URL: {base_url}"));
    };
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let hostname = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
    .to_ascii_lowercase();
    let path = tail.split(['?', '#']).next().unwrap_or("");
    let azure_host = hostname.ends_with(".openai.azure.com")
        || hostname.ends_with(".cognitiveservices.azure.com")
        || hostname.ends_with(".ai.azure.com");
    let endpoint_path = matches!(
        path.trim_end_matches('/'),
        "" | "/openai" | "/openai/v1/responses"
    );
    if azure_host && endpoint_path {
        return Ok(format!("{scheme}://{authority}/openai/v1"));
    }
    Ok(trimmed.to_owned())
}

/// The base URL and API version for a request.
pub fn resolve_config(
    model: &Model,
    options: Option<&OpenAiResponsesOptions>,
    env: EnvLookup,
) -> Result<(String, String), String> {
    let api_version = options
        .and_then(|o| o.azure_api_version.clone())
        .filter(|v| !v.is_empty())
        .or_else(|| env("AZURE_OPENAI_API_VERSION"))
        .unwrap_or_else(|| DEFAULT_API_VERSION.to_owned());
    let explicit = options
        .and_then(|o| o.azure_base_url.as_deref())
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            env("AZURE_OPENAI_BASE_URL")
                .map(|u| u.trim().to_owned())
                .filter(|u| !u.is_empty())
        });
    let resource = options
        .and_then(|o| o.azure_resource_name.clone())
        .filter(|r| !r.is_empty())
        .or_else(|| env("AZURE_OPENAI_RESOURCE_NAME"));
    let base_url = explicit
        .or_else(|| resource.map(|r| format!("https://{r}.openai.azure.com/openai/v1")))
        .or_else(|| (!model.base_url.is_empty()).then(|| model.base_url.clone()))
        .ok_or_else(|| MISSING_BASE_URL.to_owned())?;
    Ok((normalize_base_url(&base_url)?, api_version))
}

/// Percent-encodes a query value as `encodeURIComponent` does.
fn encode_query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The Azure body for `messages`: the deployment as the model, `store: false` (as pi-ai 1.6).
fn build_body<'a>(
    model: &'a Model,
    context: &'a Context,
    messages: &'a [Message],
    options: &'a StreamOptions,
    deployment: &'a str,
) -> request::Body<'a> {
    let extra = options.openai_responses.as_ref();
    let (reasoning, include) = request::reasoning_param(
        model,
        options.reasoning_effort,
        extra.and_then(|o| o.reasoning_summary.as_deref()),
        true,
    );
    request::Body {
        model: deployment,
        input: request::convert_messages(model, context.system_prompt.as_deref(), messages),
        stream: true,
        prompt_cache_key: options
            .session_id
            .as_deref()
            .filter(|_| {
                model
                    .compat
                    .as_ref()
                    .and_then(|c| c.prompt_cache_key_mode.as_deref())
                    != Some("disabled")
            })
            .map(crate::providers::common::clamp_prompt_cache_key),
        prompt_cache_retention: None,
        prompt_cache_options: None,
        store: Some(false),
        max_output_tokens: options
            .max_tokens
            .filter(|m| *m > 0)
            .map(|m| m.max(request::MIN_OUTPUT_TOKENS)),
        temperature: options.temperature,
        service_tier: None,
        tools: (!context.tools.is_empty())
            .then(|| request::convert_tools(&context.tools, super::strict_field(model, true))),
        tool_choice: options.tool_choice.as_ref().map(request::tool_choice),
        reasoning,
        include: include.then_some(request::INCLUDE_ENCRYPTED_REASONING),
    }
}

/// Builds the Azure request: the deployment as `model`, `store: false`, the session as the
/// prompt cache key, and the key in `api-key`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
    env: EnvLookup,
) -> Result<HttpRequest, String> {
    let extra = options.openai_responses.as_ref();
    let deployment = deployment_name(model, extra, env);
    let (base_url, api_version) = resolve_config(model, extra, env)?;
    let parts = (
        model.clone(),
        frame_of(context),
        request::prepare_messages(model, context, request::AZURE_TOOL_CALL_PROVIDERS),
        options.clone(),
        deployment,
    );
    let body = written_body(model, options, parts, |parts, out| {
        let (model, context, messages, options, deployment) = parts;
        let body = build_body(model, context, messages, options, deployment);
        serde_json::to_writer(out, &WithSampling::new(&body, model, options))
    })?;
    let path = base_url.split(['?', '#']).next().unwrap_or(&base_url);
    let mut request = HttpRequest {
        url: format!(
            "{}?api-version={}",
            join_url(path, "responses"),
            encode_query_value(&api_version)
        ),
        headers: vec![
            ("accept".into(), "application/json".into()),
            ("content-type".into(), "application/json".into()),
        ],
        body,
    };
    crate::identity::apply_identity(&mut request, model);
    request.apply_overrides(model.headers.iter().flatten());
    crate::identity::apply_opencode_session(&mut request, model, options.session_id.as_deref());
    request.apply_option_headers(options);
    request.set_header("api-key", api_key);
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(base_url: &str) -> Model {
        let mut m = crate::models::get_model("azure", "gpt-4o").unwrap();
        m.base_url = base_url.into();
        m
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn azure_hosts_get_the_v1_path() {
        for url in [
            "https://res.openai.azure.com",
            "https://res.openai.azure.com/",
            "https://res.openai.azure.com/openai/",
            " https://RES.cognitiveservices.azure.com/openai ",
        ] {
            let normalized = normalize_base_url(url).unwrap();
            assert!(
                normalized.ends_with(".azure.com/openai/v1"),
                "{url}: {normalized}"
            );
        }
        assert_eq!(
            normalize_base_url("https://res.openai.azure.com/openai/v1/").unwrap(),
            "https://res.openai.azure.com/openai/v1"
        );
        assert_eq!(
            normalize_base_url("http://127.0.0.1:8080/proxy//").unwrap(),
            "http://127.0.0.1:8080/proxy"
        );
        assert_eq!(
            normalize_base_url("not a url"),
            Err("Invalid Azure OpenAI base URL: not a url".into())
        );
    }

    #[test]
    fn foundry_endpoints_are_normalized_as_in_16() {
        for (url, normalized) in [
            (
                "https://res.services.ai.azure.com",
                "https://res.services.ai.azure.com/openai/v1",
            ),
            (
                "https://res.services.ai.azure.com/openai/v1/responses?api-version=preview",
                "https://res.services.ai.azure.com/openai/v1",
            ),
            (
                "https://res.openai.azure.com/openai/v1/responses/",
                "https://res.openai.azure.com/openai/v1",
            ),
            // A project endpoint is used as given (pi-ai 1.6 appends `/responses` to it).
            (
                "https://res.services.ai.azure.com/api/projects/proj/",
                "https://res.services.ai.azure.com/api/projects/proj",
            ),
            // Not an Azure host: the path stays.
            (
                "https://proxy.example/openai/v1/responses",
                "https://proxy.example/openai/v1/responses",
            ),
        ] {
            assert_eq!(normalize_base_url(url).unwrap(), normalized, "{url}");
        }
    }

    #[test]
    fn config_precedence() {
        let none = env_of(&[]);
        let m = model("https://fallback.example/openai/v1");
        assert_eq!(
            resolve_config(&m, None, &none).unwrap(),
            ("https://fallback.example/openai/v1".into(), "v1".into())
        );
        let env = env_of(&[
            ("AZURE_OPENAI_RESOURCE_NAME", "myres"),
            ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
        ]);
        assert_eq!(
            resolve_config(&m, None, &env).unwrap(),
            (
                "https://myres.openai.azure.com/openai/v1".into(),
                "2025-04-01-preview".into()
            )
        );
        let env = env_of(&[
            ("AZURE_OPENAI_RESOURCE_NAME", "myres"),
            ("AZURE_OPENAI_BASE_URL", "https://other.openai.azure.com"),
        ]);
        assert_eq!(
            resolve_config(&m, None, &env).unwrap().0,
            "https://other.openai.azure.com/openai/v1"
        );
        let opts = OpenAiResponsesOptions {
            azure_base_url: Some("https://opt.example/x".into()),
            azure_api_version: Some("preview".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve_config(&m, Some(&opts), &env).unwrap(),
            ("https://opt.example/x".into(), "preview".into())
        );
        assert_eq!(
            resolve_config(&model(""), None, &none),
            Err(MISSING_BASE_URL.into())
        );
    }

    #[test]
    fn deployment_names() {
        let m = model("https://x.openai.azure.com");
        let env = env_of(&[(
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            " gpt-4.1=dep-a , gpt-4o = dep-b=ignored,bad, =x",
        )]);
        assert_eq!(deployment_name(&m, None, &env), "dep-b");
        assert_eq!(deployment_name(&m, None, &env_of(&[])), "gpt-4o");
        let opts = OpenAiResponsesOptions {
            azure_deployment_name: Some("explicit".into()),
            ..Default::default()
        };
        assert_eq!(deployment_name(&m, Some(&opts), &env), "explicit");
    }
}
