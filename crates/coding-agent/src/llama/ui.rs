//! What `/llama` needs from a terminal UI, and the progress loop it runs long operations
//! in: the operation runs on its own while the UI shows its progress; Escape asks whether
//! to stop it, and stopping tells the router to stop too.

use std::future::Future;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::error::LlamaError;
use super::huggingface::HuggingFace;
use super::progress::Progress;
use super::wire::RouterModel;

/// How a notice reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// What the user picked in the model list.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelsAction {
    Close,
    Download,
    Model(Box<RouterModel>),
}

/// What the progress view shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressState {
    pub title: String,
    pub model: String,
    pub message: String,
    pub ratio: Option<f64>,
    pub detail: Option<String>,
}

impl ProgressState {
    fn apply(&mut self, progress: Progress) {
        self.message = progress.message;
        if progress.ratio.is_some() {
            self.ratio = progress.ratio;
        }
        if progress.detail.is_some() {
            self.detail = progress.detail;
        }
    }
}

/// How a progress view ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressSignal {
    /// The user pressed Escape.
    Stop,
    /// The UI is gone.
    Closed,
}

/// The views of `/llama`. Each call replaces what the previous one showed.
pub trait LlamaUi: Send + Sync {
    /// The router's models and "Download model…"; resolves with the user's pick.
    fn show_models(&self, server_url: &str, models: &[RouterModel]) -> BoxFuture<'_, ModelsAction>;
    /// A titled choice; `None` when dismissed.
    fn select(&self, title: &str, options: Vec<String>) -> BoxFuture<'_, Option<String>>;
    /// "Download model": a name to type, with Hugging Face results as the user types.
    fn search_models(&self, hub: HuggingFace) -> BoxFuture<'_, Option<String>>;
    /// A title and a message while something loads.
    fn show_status(&self, title: &str, message: &str);
    /// Shows progress; resolves when the user asks to stop (or the UI closes).
    fn progress(&self, state: &ProgressState) -> BoxFuture<'_, ProgressSignal>;
    /// Updates the progress view, if it is showing.
    fn update_progress(&self, state: &ProgressState);
    /// A notice in the chat.
    fn notify(&self, level: Level, message: &str);
}

/// `title` and `message` with Yes and No: true for Yes.
pub async fn confirm(ui: &dyn LlamaUi, title: &str, message: &str) -> bool {
    ui.select(
        &format!("{title}\n{message}"),
        vec!["Yes".to_owned(), "No".to_owned()],
    )
    .await
    .as_deref()
        == Some("Yes")
}

/// The router cannot be reached: Retry (true) or Close (false).
pub async fn connection_error(ui: &dyn LlamaUi, server_url: &str, message: &str) -> bool {
    ui.select(
        &format!("llama.cpp unavailable\n{server_url}\n\n{message}"),
        vec!["Retry".to_owned(), "Close".to_owned()],
    )
    .await
    .as_deref()
        == Some("Retry")
}

/// What a progress run shows and how it stops.
pub struct ProgressRun {
    pub title: &'static str,
    pub model: String,
    pub cancel_title: &'static str,
}

/// Runs `operation` while showing its progress. Escape asks `cancel_title`; Yes calls
/// `stop` (the router's side), cancels the operation and returns `Ok(None)`.
pub async fn run_with_progress<T, Op, OpFut, Stop, StopFut>(
    ui: Arc<dyn LlamaUi>,
    run: ProgressRun,
    operation: Op,
    stop: Stop,
) -> Result<Option<T>, LlamaError>
where
    T: Send + 'static,
    Op: FnOnce(CancellationToken, Box<dyn Fn(Progress) + Send + Sync>) -> OpFut,
    OpFut: Future<Output = Result<T, LlamaError>> + Send + 'static,
    Stop: FnOnce() -> StopFut,
    StopFut: Future<Output = Result<(), LlamaError>>,
{
    let state = Arc::new(Mutex::new(ProgressState {
        title: run.title.to_owned(),
        model: run.model.clone(),
        message: "Starting…".to_owned(),
        ratio: None,
        detail: None,
    }));
    let report = {
        let state = Arc::clone(&state);
        let ui = Arc::clone(&ui);
        Box::new(move |progress: Progress| {
            let snapshot = {
                let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
                state.apply(progress);
                state.clone()
            };
            ui.update_progress(&snapshot);
        })
    };
    let cancel = CancellationToken::new();
    let mut task = tokio::spawn(operation(cancel.clone(), report));
    let current = || state.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let joined = loop {
        let shown = current();
        let signal = tokio::select! {
            joined = &mut task => break joined,
            signal = ui.progress(&shown) => signal,
        };
        if signal == ProgressSignal::Closed {
            break (&mut task).await;
        }
        if !confirm(ui.as_ref(), run.cancel_title, &run.model).await || task.is_finished() {
            continue;
        }
        let stopped = stop().await;
        cancel.cancel();
        let _ = task.await;
        return stopped.map(|()| None);
    };
    match joined {
        Ok(result) => result.map(Some),
        Err(_) => Err(LlamaError::Cancelled),
    }
}
