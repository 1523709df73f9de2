//! Providers whose `streamSimple` an extension wrote (`pi.registerProvider(name, {api,
//! streamSimple, …})`): pi-ai gets an API provider for their `api` id that asks the
//! extension's backend to stream and turns the events it forwards back into a stream, so
//! the agent uses them like any built-in API.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use serde_json::{Map, Value, json};

use pi_ai::registry::{ApiProvider, register_api_provider};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Context, Model,
    SimpleStreamOptions, StopReason, StreamOptions,
};

use super::runtime::ExtensionRuntime;

/// pi-ai's provider for one `api` id served by an extension.
struct ExtensionApiProvider {
    api: String,
    runtime: Weak<ExtensionRuntime>,
}

/// Registers the API provider behind an extension provider's `streamSimple` (the
/// TypeScript pi's `registerApiProvider(…, "provider:<name>")`); `config` is the provider
/// config as the host describes it. An error when `api` is missing, as in the TS pi.
pub fn register_stream_provider(
    runtime: &Arc<ExtensionRuntime>,
    name: &str,
    config: &Value,
) -> Result<(), String> {
    if config.get("hasStreamSimple").and_then(Value::as_bool) != Some(true) {
        return Ok(());
    }
    let Some(api) = config.get("api").and_then(Value::as_str) else {
        return Err(format!(
            "Provider {name}: \"api\" is required when registering streamSimple."
        ));
    };
    register_api_provider(
        Arc::new(ExtensionApiProvider {
            api: api.to_owned(),
            runtime: Arc::downgrade(runtime),
        }),
        Some(&format!("provider:{name}")),
    );
    Ok(())
}

/// The options as the TypeScript `SimpleStreamOptions` (the key is the provider's own).
fn options_json(options: &SimpleStreamOptions) -> Value {
    let stream = &options.stream;
    let mut out = Map::new();
    if let Some(level) = options.reasoning {
        out.insert("reasoning".into(), json!(level.as_str()));
    }
    if let Some(value) = stream.temperature {
        out.insert("temperature".into(), json!(value));
    }
    if let Some(value) = stream.max_tokens {
        out.insert("maxTokens".into(), json!(value));
    }
    if let Some(value) = &stream.api_key {
        out.insert("apiKey".into(), json!(value));
    }
    if !stream.headers.is_empty() {
        out.insert("headers".into(), json!(stream.headers));
    }
    if let Some(value) = &stream.session_id {
        out.insert("sessionId".into(), json!(value));
    }
    if let Some(value) = stream.cache_retention {
        out.insert("cacheRetention".into(), json!(value));
    }
    if let Some(value) = &stream.metadata {
        out.insert("metadata".into(), Value::Object(value.clone()));
    }
    Value::Object(out)
}

/// The message a failed stream ends with.
fn failure(model: &Model, reason: StopReason, message: String) -> AssistantMessageEvent {
    let mut error = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    error.stop_reason = reason;
    error.error_message = Some(message);
    AssistantMessageEvent::Error {
        reason,
        error: Arc::new(error),
    }
}

impl ApiProvider for ExtensionApiProvider {
    fn api(&self) -> &str {
        &self.api
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        self.stream_simple(
            model,
            context,
            SimpleStreamOptions {
                stream: options,
                ..SimpleStreamOptions::default()
            },
        )
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<AssistantMessageEvent>();
        let request = json!({
            "provider": model.provider,
            "model": model,
            "context": context,
            "options": options_json(&options),
        });
        let cancel = options.stream.cancel.clone().unwrap_or_default();
        let runtime = self.runtime.clone();
        let model = model.clone();
        tokio::spawn(async move {
            let Some(runtime) = runtime.upgrade() else {
                let _ = tx.send(failure(
                    &model,
                    StopReason::Error,
                    "The extensions that registered this provider are no longer loaded".into(),
                ));
                return;
            };
            let ended = Arc::new(AtomicBool::new(false));
            let sink = {
                let tx = tx.clone();
                let ended = ended.clone();
                Arc::new(move |value: Value| {
                    if ended.load(Ordering::SeqCst) {
                        return;
                    }
                    match serde_json::from_value::<AssistantMessageEvent>(value) {
                        Ok(event) => {
                            if event.is_terminal() {
                                ended.store(true, Ordering::SeqCst);
                            }
                            let _ = tx.send(event);
                        }
                        Err(e) => eprintln!("Warning: a provider stream event was malformed: {e}"),
                    }
                })
            };
            let result = runtime.stream_provider(request, cancel.clone(), sink).await;
            if !ended.load(Ordering::SeqCst) {
                let event = match result {
                    Err(_) if cancel.is_cancelled() => {
                        failure(&model, StopReason::Aborted, "Request was aborted".into())
                    }
                    Err(error) => failure(&model, StopReason::Error, error),
                    Ok(_) => failure(
                        &model,
                        StopReason::Error,
                        "The provider's stream ended without a final done or error event".into(),
                    ),
                };
                let _ = tx.send(event);
            }
        });
        AssistantMessageEventStream::new(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }
}
