//! The llama.cpp router's management API: list models, read properties, load, unload and
//! download, and wait for each to finish. Every request has 15 seconds and stops when its
//! cancellation token fires; the key goes only into the `Authorization` header.

use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::error::LlamaError;
use super::events::{self, RouterEvent};
use super::progress::{self, Progress};
use super::url::normalize_server_url;
use super::wire::{RouterModel, RouterProps, parse_catalog};

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// What a long operation reports while it runs.
pub type OnProgress<'a> = &'a (dyn Fn(Progress) + Send + Sync);

/// A connection to one router.
#[derive(Clone)]
pub struct LlamaClient {
    server_url: String,
    api_key: Option<String>,
}

impl std::fmt::Debug for LlamaClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of every log line.
        f.debug_struct("LlamaClient")
            .field("server_url", &self.server_url)
            .finish_non_exhaustive()
    }
}

/// Sleeps, or fails with `Cancelled` when `cancel` fires first.
async fn sleep(ms: u64, cancel: &CancellationToken) -> Result<(), LlamaError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
        () = cancel.cancelled() => Err(LlamaError::Cancelled),
    }
}

/// The network-level cause of a failed connection, worded as Node words the common one.
pub(crate) fn connection_detail(error: &reqwest::Error, url: &reqwest::Url) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut last = error.to_string();
    while let Some(current) = source {
        if let Some(io) = current.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            let host = url.host_str().unwrap_or_default();
            let port = url.port_or_known_default().unwrap_or_default();
            return format!("connect ECONNREFUSED {host}:{port}");
        }
        last = current.to_string();
        source = current.source();
    }
    last
}

/// `error.message` of an error answer, else `fallback`.
fn error_message(payload: Option<&Value>, fallback: String) -> String {
    payload
        .and_then(|p| p.get("error"))
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .unwrap_or(fallback)
}

impl LlamaClient {
    /// A client for the router at `server_url` (normalized), sending `api_key` if any.
    pub fn new(server_url: &str, api_key: Option<String>) -> Result<Self, LlamaError> {
        Ok(LlamaClient {
            server_url: normalize_server_url(server_url)?,
            api_key: api_key.filter(|k| !k.is_empty()),
        })
    }

    /// The router's normalized URL.
    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    /// `<server><path>` with `query` pairs encoded as a form would.
    fn url(&self, path: &str, query: &[(&str, &str)]) -> Result<reqwest::Url, LlamaError> {
        let mut url = reqwest::Url::parse(&format!("{}{path}", self.server_url))
            .map_err(|_| LlamaError::InvalidUrl)?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    /// A request with the key header and, when given, a JSON body.
    pub(super) fn builder(
        &self,
        method: reqwest::Method,
        url: reqwest::Url,
        body: Option<&Value>,
    ) -> Result<reqwest::RequestBuilder, LlamaError> {
        let client = pi_ai::http::shared_client().map_err(LlamaError::Server)?;
        let mut request = client.request(method, url);
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        Ok(request)
    }

    /// Sends a request and reads its JSON answer (`None` when the body is not JSON);
    /// an error status becomes the router's error message.
    async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Value>,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, LlamaError> {
        let url = self.url(path, query)?;
        let request = self.builder(method, url.clone(), body.as_ref())?;
        let exchange = async {
            let response = request.send().await.map_err(|e| LlamaError::Unreachable {
                url: self.server_url.clone(),
                detail: connection_detail(&e, &url),
            })?;
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            let payload = serde_json::from_str::<Value>(&text).ok();
            if !status.is_success() {
                return Err(LlamaError::Server(error_message(
                    payload.as_ref(),
                    format!("llama.cpp returned HTTP {}", status.as_u16()),
                )));
            }
            Ok(payload)
        };
        tokio::select! {
            result = tokio::time::timeout(REQUEST_TIMEOUT, exchange) => {
                result.unwrap_or(Err(LlamaError::Timeout))
            }
            () = cancel.cancelled() => Err(LlamaError::Cancelled),
        }
    }

    /// `GET /models` (`?reload=1` to have the router look at its folders again).
    pub async fn list(
        &self,
        reload: bool,
        cancel: &CancellationToken,
    ) -> Result<Vec<RouterModel>, LlamaError> {
        let query: &[(&str, &str)] = if reload { &[("reload", "1")] } else { &[] };
        let payload = self
            .request(reqwest::Method::GET, "/models", query, None, cancel)
            .await?;
        match payload.as_ref().and_then(parse_catalog) {
            None => Err(LlamaError::InvalidCatalog),
            Some(Err(())) => Err(LlamaError::NotRouter),
            Some(Ok(models)) => Ok(models),
        }
    }

    /// `GET /props`, or with `model` that model's (`autoload=false`: asking must not load it).
    pub async fn props(
        &self,
        model: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<RouterProps, LlamaError> {
        let query: Vec<(&str, &str)> = match model {
            Some(model) => vec![("model", model), ("autoload", "false")],
            None => Vec::new(),
        };
        let payload = self
            .request(reqwest::Method::GET, "/props", &query, None, cancel)
            .await?;
        let field = |name: &str| payload.as_ref().and_then(|p| p.get(name));
        Ok(RouterProps {
            models_autoload: field("models_autoload").and_then(Value::as_bool),
            chat_template: field("chat_template")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    async fn post_model(
        &self,
        path: &str,
        model: &str,
        cancel: &CancellationToken,
    ) -> Result<(), LlamaError> {
        self.request(
            reqwest::Method::POST,
            path,
            &[],
            Some(json!({ "model": model })),
            cancel,
        )
        .await
        .map(|_| ())
    }

    /// `POST /models/load`: starts loading.
    pub async fn load(&self, model: &str, cancel: &CancellationToken) -> Result<(), LlamaError> {
        self.post_model("/models/load", model, cancel).await
    }

    /// `POST /models/unload`: unloads, or stops a load or download.
    pub async fn unload(&self, model: &str, cancel: &CancellationToken) -> Result<(), LlamaError> {
        self.post_model("/models/unload", model, cancel).await
    }

    /// `POST /models`: starts downloading `owner/repo[:quant]` from Hugging Face.
    pub async fn download(
        &self,
        model: &str,
        cancel: &CancellationToken,
    ) -> Result<(), LlamaError> {
        self.post_model("/models", model, cancel).await
    }

    async fn find(
        &self,
        model: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<RouterModel>, LlamaError> {
        Ok(self
            .list(false, cancel)
            .await?
            .into_iter()
            .find(|m| m.id == model))
    }

    /// Unloads and waits until the router lists the model as unloaded (or not at all).
    pub async fn unload_and_wait(
        &self,
        model: &str,
        cancel: &CancellationToken,
    ) -> Result<(), LlamaError> {
        self.unload(model, cancel).await?;
        loop {
            match self.find(model, cancel).await? {
                Some(entry) if !entry.has_status("unloaded") => sleep(100, cancel).await?,
                _ => return Ok(()),
            }
        }
    }

    /// Loads and waits until the model is loaded, reporting the stages the router's event
    /// stream tells; fails when the load fails or the model process exits.
    pub async fn load_and_wait(
        &self,
        model: &str,
        on_progress: OnProgress<'_>,
        cancel: &CancellationToken,
    ) -> Result<RouterModel, LlamaError> {
        let watcher = cancel.child_token();
        let _stop_watching = watcher.clone().drop_guard();
        let mut events = events::watch(self.clone(), watcher);
        let (mut event_loaded, mut event_failed) = (false, false);
        self.load(model, cancel).await?;
        on_progress(Progress::message("Loading model"));
        loop {
            while let Ok(event) = events.try_recv() {
                let RouterEvent {
                    model: name,
                    event,
                    data,
                } = event;
                if name != model || !matches!(event.as_str(), "model_status" | "status_change") {
                    continue;
                }
                match data.get("status").and_then(Value::as_str) {
                    Some("loaded") => event_loaded = true,
                    Some("unloaded") => event_failed = true,
                    _ => {}
                }
                if let Some(progress) = progress::load_progress(&data) {
                    on_progress(progress);
                }
            }
            if cancel.is_cancelled() {
                return Err(LlamaError::Cancelled);
            }
            let entry = self.find(model, cancel).await?;
            match &entry {
                Some(found) if found.has_status("loaded") => return Ok(found.clone()),
                None if event_loaded => {
                    return Ok(RouterModel {
                        id: model.to_owned(),
                        status: super::wire::ModelStatus {
                            value: "loaded".into(),
                            args: None,
                            failed: None,
                            exit_code: None,
                            progress: None,
                        },
                        meta: None,
                        architecture: None,
                        source: None,
                    });
                }
                _ => {}
            }
            let failed = entry.as_ref().is_some_and(RouterModel::failed);
            if failed || event_failed {
                return Err(match entry.and_then(|e| e.status.exit_code) {
                    Some(code) => LlamaError::Exited(code),
                    None => LlamaError::LoadFailed,
                });
            }
            sleep(250, cancel).await?;
        }
    }

    /// Starts a download and waits until the router lists the model, reporting the bytes;
    /// returns the catalog read again from disk.
    pub async fn download_and_wait(
        &self,
        model: &str,
        on_progress: OnProgress<'_>,
        cancel: &CancellationToken,
    ) -> Result<Vec<RouterModel>, LlamaError> {
        let watcher = cancel.child_token();
        let _stop_watching = watcher.clone().drop_guard();
        let mut events = events::watch(self.clone(), watcher);
        let (mut finished, mut failure, mut saw_downloading) = (false, None, false);
        let mut polls = 0u32;
        self.download(model, cancel).await?;
        on_progress(Progress::message("Downloading model"));
        loop {
            while let Ok(event) = events.try_recv() {
                if event.model != model {
                    continue;
                }
                match event.event.as_str() {
                    "download_finished" => finished = true,
                    "download_failed" => {
                        failure = Some(error_message(
                            Some(&event.data),
                            "Download failed".to_owned(),
                        ));
                    }
                    "download_progress" => {
                        saw_downloading = true;
                        if let Some(progress) = progress::download_progress(&event.data) {
                            on_progress(progress);
                        }
                    }
                    _ => {}
                }
            }
            if cancel.is_cancelled() {
                return Err(LlamaError::Cancelled);
            }
            if let Some(message) = failure.take() {
                return Err(LlamaError::DownloadFailed(message));
            }
            let entry = self.find(model, cancel).await?;
            polls += 1;
            match &entry {
                Some(found) if found.has_status("downloading") => {
                    saw_downloading = true;
                    if let Some(progress) = found
                        .status
                        .progress
                        .as_ref()
                        .and_then(progress::download_progress)
                    {
                        on_progress(progress);
                    }
                }
                _ if finished || (entry.is_some() && (saw_downloading || polls >= 2)) => {
                    return self.list(true, cancel).await;
                }
                _ => {}
            }
            sleep(500, cancel).await?;
        }
    }
}
