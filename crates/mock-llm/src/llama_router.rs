//! A stand-in for the llama.cpp router server (`llama serve` without a model) and the part
//! of Hugging Face's API pi's `/llama` reads. Chat goes to the usual `/v1/chat/completions`
//! scripts; this answers the management API: `GET /health`, `GET /models`,
//! `POST /models/load`, `POST /models/unload`, `POST /models` (download), `GET /props`,
//! `GET /models/sse`, and Hugging Face's `GET /api/models[/<id>]`; the classification
//! endpoints are in [`crate::llama_classify`].
//!
//! A load takes `loadMs`: the model is `loading` (with stage progress on the event stream)
//! until then, `loaded` after. A download is `downloading` for `loadMs`, then `unloaded`.
//! Every management call is counted as `"<METHOD> <path> <model>"`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::state::Shared;

/// What a test sets up: the router's models and behaviour, and the Hugging Face repos.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LlamaSettings {
    /// `GET /models` entries as the router lists them (`id`, `status.value`, `meta`, …).
    pub models: Vec<Value>,
    /// `GET /props` `models_autoload`.
    pub autoload: bool,
    /// How long a load or a download takes.
    pub load_ms: u64,
    /// Models whose load never finishes (until they are unloaded).
    pub stuck: Vec<String>,
    /// The `chat_template` `GET /props?model=…` answers for a loaded model.
    pub chat_template: Option<String>,
    /// The context a model gets when it loads (`meta.n_ctx`).
    pub loaded_n_ctx: Option<u64>,
    /// When set, every call must carry `Authorization: Bearer <apiKey>`.
    pub api_key: Option<String>,
    /// Hugging Face repositories: `{"id", "downloads", "gated"?, "siblings": [{"rfilename", "size"}]}`.
    pub hub: Vec<Value>,
    /// How long the n-th `GET /models` waits before it answers (the list as it was when the
    /// call arrived); a caller that hangs up meanwhile is counted as `"GET /models dropped"`.
    pub list_delays_ms: Vec<u64>,
    /// What `POST /completion` ranks as the next token (see [`crate::llama_classify`]).
    pub classify: Vec<crate::llama_classify::ClassifyRule>,
    /// An error status `POST /completion` answers with instead.
    pub completion_status: Option<u16>,
    /// The body `POST /v1/systemone` answers with.
    pub system_one: Option<Value>,
}

/// The router's live state.
#[derive(Debug, Default)]
pub(crate) struct LlamaState {
    inner: Mutex<Live>,
}

#[derive(Debug, Default)]
struct Live {
    settings: LlamaSettings,
    models: Vec<Value>,
    /// Models loading or downloading, and since when.
    busy: HashMap<String, Instant>,
    calls: Vec<String>,
    /// `GET /models` calls so far, for `list_delays_ms`.
    lists: usize,
    /// The classification requests so far: `{"path", "body"}`.
    requests: Vec<Value>,
}

fn lock(state: &LlamaState) -> MutexGuard<'_, Live> {
    state.inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LlamaState {
    /// Replaces the settings and the model list.
    pub fn set(&self, settings: LlamaSettings) {
        let mut live = lock(self);
        live.models = settings.models.clone();
        live.settings = settings;
        live.busy.clear();
        live.calls.clear();
        live.lists = 0;
        live.requests.clear();
    }

    /// The settings as set.
    pub(crate) fn settings(&self) -> LlamaSettings {
        lock(self).settings.clone()
    }

    /// Records a classification request.
    pub(crate) fn record(&self, path: &str, body: Value) {
        lock(self)
            .requests
            .push(json!({"path": path, "body": body}));
    }

    /// The classification requests so far.
    pub fn requests(&self) -> Vec<Value> {
        lock(self).requests.clone()
    }

    /// Replaces the model list only (settings, calls and loads stay).
    pub fn set_models(&self, models: Vec<Value>) {
        lock(self).models = models;
    }

    /// The calls counted so far.
    pub fn calls(&self) -> Vec<String> {
        lock(self).calls.clone()
    }

    /// The model list as `GET /models` would give it now.
    pub fn models(&self) -> Vec<Value> {
        let mut live = lock(self);
        live.advance();
        live.models.clone()
    }
}

fn status_of(model: &Value) -> &str {
    model
        .get("status")
        .and_then(|s| s.get("value"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Live {
    /// Finishes the loads and downloads whose time is up.
    fn advance(&mut self) {
        let wait = Duration::from_millis(self.settings.load_ms);
        let done: Vec<String> = self
            .busy
            .iter()
            .filter(|(id, since)| since.elapsed() >= wait && !self.settings.stuck.contains(id))
            .map(|(id, _)| id.clone())
            .collect();
        let n_ctx = self.settings.loaded_n_ctx;
        for id in done {
            self.busy.remove(&id);
            let Some(model) = self.models.iter_mut().find(|m| m["id"] == id.as_str()) else {
                continue;
            };
            if status_of(model) == "loading" {
                model["status"]["value"] = json!("loaded");
                if let Some(n_ctx) = n_ctx {
                    model["meta"]["n_ctx"] = json!(n_ctx);
                }
            } else if status_of(model) == "downloading" {
                model["status"] = json!({"value": "unloaded"});
            }
        }
    }

    fn model_mut(&mut self, id: &str) -> Option<&mut Value> {
        self.models.iter_mut().find(|m| m["id"] == id)
    }

    /// How far a busy model is, 0 to 1.
    fn ratio(&self, id: &str) -> f64 {
        let total = self.settings.load_ms.max(1) as f64;
        self.busy.get(id).map_or(1.0, |since| {
            (since.elapsed().as_millis() as f64 / total).min(1.0)
        })
    }
}

/// The query pairs of a request.
fn query_of(uri: &Uri) -> HashMap<String, String> {
    form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message}}))).into_response()
}

/// Counts the call; the refusal when it lacks the right key.
fn refusal(shared: &Shared, headers: &HeaderMap, call: String) -> Option<Response> {
    let mut live = lock(&shared.llama);
    live.calls.push(call);
    if let Some(key) = &live.settings.api_key {
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if sent != Some(format!("Bearer {key}").as_str()) {
            return Some(error(StatusCode::UNAUTHORIZED, "Invalid API Key"));
        }
    }
    None
}

#[derive(Debug, Default, Deserialize)]
struct ModelBody {
    #[serde(default)]
    model: String,
}

fn model_of(body: &Bytes) -> String {
    serde_json::from_slice::<ModelBody>(body)
        .map(|b| b.model)
        .unwrap_or_default()
}

async fn health(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Some(refused) = refusal(&shared, &headers, "GET /health".into()) {
        return refused;
    }
    Json(json!({"status": "ok"})).into_response()
}

async fn list(State(shared): State<Arc<Shared>>, headers: HeaderMap, uri: Uri) -> Response {
    let query = query_of(&uri);
    let call = match query.get("reload") {
        Some(_) => "GET /models?reload",
        None => "GET /models",
    };
    if let Some(refused) = refusal(&shared, &headers, call.into()) {
        return refused;
    }
    let models = shared.llama.models();
    let delay = {
        let mut live = lock(&shared.llama);
        live.lists += 1;
        live.settings.list_delays_ms.get(live.lists - 1).copied()
    };
    if let Some(delay) = delay.filter(|ms| *ms > 0) {
        let hung_up = HungUp(Some(Arc::clone(&shared)));
        tokio::time::sleep(Duration::from_millis(delay)).await;
        hung_up.answered();
    }
    Json(json!({"object": "list", "data": models})).into_response()
}

/// Counts a delayed list whose caller hung up before the answer (its handler is dropped).
struct HungUp(Option<Arc<Shared>>);

impl HungUp {
    fn answered(mut self) {
        self.0 = None;
    }
}

impl Drop for HungUp {
    fn drop(&mut self) {
        if let Some(shared) = self.0.take() {
            lock(&shared.llama)
                .calls
                .push("GET /models dropped".to_owned());
        }
    }
}

async fn load(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let id = model_of(&body);
    if let Some(refused) = refusal(&shared, &headers, format!("POST /models/load {id}")) {
        return refused;
    }
    let mut live = lock(&shared.llama);
    live.advance();
    let Some(model) = live.model_mut(&id) else {
        return error(StatusCode::BAD_REQUEST, "model not found");
    };
    if matches!(status_of(model), "loaded" | "loading") {
        return error(StatusCode::BAD_REQUEST, "model is already loaded");
    }
    model["status"] = json!({"value": "loading", "args": ["llama-server", "--ctx-size", "8192"]});
    live.busy.insert(id, Instant::now());
    Json(json!({"success": true})).into_response()
}

async fn unload(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let id = model_of(&body);
    if let Some(refused) = refusal(&shared, &headers, format!("POST /models/unload {id}")) {
        return refused;
    }
    let mut live = lock(&shared.llama);
    live.busy.remove(&id);
    let Some(model) = live.model_mut(&id) else {
        return error(StatusCode::BAD_REQUEST, "model not found");
    };
    model["status"] = json!({"value": "unloaded"});
    if let Some(meta) = model.get_mut("meta").and_then(Value::as_object_mut) {
        meta.remove("n_ctx");
    }
    Json(json!({"success": true})).into_response()
}

async fn download(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let id = model_of(&body);
    if let Some(refused) = refusal(&shared, &headers, format!("POST /models {id}")) {
        return refused;
    }
    let mut live = lock(&shared.llama);
    if live.model_mut(&id).is_none() {
        let entry = json!({"id": id, "status": {"value": "downloading",
            "progress": {"model.gguf": {"done": 0, "total": 1_048_576}}}});
        live.models.push(entry);
    }
    live.busy.insert(id, Instant::now());
    Json(json!({"success": true})).into_response()
}

async fn props(State(shared): State<Arc<Shared>>, headers: HeaderMap, uri: Uri) -> Response {
    let model = query_of(&uri).get("model").cloned();
    let call = match &model {
        Some(id) => format!("GET /props {id}"),
        None => "GET /props".to_owned(),
    };
    if let Some(refused) = refusal(&shared, &headers, call) {
        return refused;
    }
    let live = lock(&shared.llama);
    match model {
        Some(_) => {
            Json(json!({"chat_template": live.settings.chat_template.clone().unwrap_or_default()}))
                .into_response()
        }
        None => Json(json!({"role": "router", "models_autoload": live.settings.autoload}))
            .into_response(),
    }
}

/// The event stream: every 100 ms, a `model_status` event with stage progress for each
/// loading model and `download_progress` for each download.
async fn events(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Some(refused) = refusal(&shared, &headers, "GET /models/sse".into()) {
        return refused;
    }
    let stream = futures_util::stream::unfold(shared, |shared| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut text = String::from(": tick\n\n");
        {
            let mut live = lock(&shared.llama);
            live.advance();
            let busy: Vec<(String, String)> = live
                .models
                .iter()
                .filter(|m| matches!(status_of(m), "loading" | "downloading"))
                .map(|m| {
                    (
                        m["id"].as_str().unwrap_or_default().to_owned(),
                        status_of(m).to_owned(),
                    )
                })
                .collect();
            for (id, status) in busy {
                let ratio = live.ratio(&id);
                let event = if status == "loading" {
                    json!({"model": id, "event": "model_status", "data": {"status": "loading",
                        "progress": {"current": "tensor_data", "stages": ["metadata", "tensor_data"], "value": ratio}}})
                } else {
                    let done = (ratio * 1_048_576.0) as u64;
                    json!({"model": id, "event": "download_progress",
                        "data": {"model.gguf": {"done": done, "total": 1_048_576}}})
                };
                text.push_str(&format!("data: {event}\n\n"));
            }
        }
        Some((Ok::<Bytes, std::io::Error>(Bytes::from(text)), shared))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Hugging Face search: repositories whose id contains the text.
async fn hub_search(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    let text = query_of(&uri)
        .get("search")
        .cloned()
        .unwrap_or_default()
        .to_lowercase();
    let live = lock(&shared.llama);
    let found: Vec<Value> = live
        .settings
        .hub
        .iter()
        .filter(|repo| {
            repo["id"]
                .as_str()
                .is_some_and(|id| id.to_lowercase().contains(&text))
        })
        .map(|repo| json!({"id": repo["id"], "downloads": repo["downloads"]}))
        .collect();
    Json(Value::Array(found)).into_response()
}

/// Hugging Face repository details.
async fn hub_details(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let live = lock(&shared.llama);
    match live
        .settings
        .hub
        .iter()
        .find(|repo| repo["id"] == id.as_str())
    {
        Some(repo) => Json(repo.clone()).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "Repository not found"})),
        )
            .into_response(),
    }
}

/// The routes of the stand-in router and hub.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/health", get(health))
        .route("/models", get(list).post(download))
        .route("/models/load", post(load))
        .route("/models/unload", post(unload))
        .route("/models/sse", get(events))
        .route("/props", get(props))
        .route("/api/models", get(hub_search))
        .route("/api/models/{*id}", get(hub_details))
        .merge(crate::llama_classify::routes())
}
