//! `/llama` and `/login llama.cpp` in the terminal: the command's task (`llama::command`)
//! asks for each view through app events and waits for the user's pick; `/login
//! llama.cpp` asks for the router's URL and key with the sign-in questions.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use pi_ai::oauth::OAuthError;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::login::LoginEvent;
use super::{App, Overlay};
use crate::llama::client::LlamaClient;
use crate::llama::command::CatalogHost;
use crate::llama::huggingface::{HuggingFace, SearchResult};
use crate::llama::ui::{Level, LlamaUi, ModelsAction, ProgressSignal, ProgressState};
use crate::llama::wire::RouterModel;
use crate::llama::{self, PROVIDER_ID};
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::selectors::llama::{LlamaKey, LlamaView};

/// A request of the `/llama` task to the UI.
#[derive(Debug)]
pub(crate) enum LlamaRequest {
    Models {
        server_url: String,
        models: Vec<RouterModel>,
        reply: oneshot::Sender<ModelsAction>,
    },
    Select {
        title: String,
        options: Vec<String>,
        reply: oneshot::Sender<Option<String>>,
    },
    Search {
        hub: HuggingFace,
        reply: oneshot::Sender<Option<String>>,
    },
    Status {
        title: String,
        message: String,
    },
    Progress {
        state: ProgressState,
        stop: oneshot::Sender<()>,
    },
    UpdateProgress(ProgressState),
    /// Hugging Face answered a search.
    SearchResults {
        query: String,
        result: Result<Vec<SearchResult>, String>,
    },
    Notify(Level, String),
    /// The command ended: the panel goes.
    Finished,
}

/// The `/llama` task's side: each view is an app event; picks come back on a channel.
struct TuiLlama {
    tx: UnboundedSender<AppEvent>,
}

impl TuiLlama {
    fn send(&self, request: LlamaRequest) {
        let _ = self.tx.send(AppEvent::Llama(request));
    }
}

impl LlamaUi for TuiLlama {
    fn show_models(&self, server_url: &str, models: &[RouterModel]) -> BoxFuture<'_, ModelsAction> {
        let (reply, answer) = oneshot::channel();
        self.send(LlamaRequest::Models {
            server_url: server_url.to_owned(),
            models: models.to_vec(),
            reply,
        });
        Box::pin(async move { answer.await.unwrap_or(ModelsAction::Close) })
    }

    fn select(&self, title: &str, options: Vec<String>) -> BoxFuture<'_, Option<String>> {
        let (reply, answer) = oneshot::channel();
        self.send(LlamaRequest::Select {
            title: title.to_owned(),
            options,
            reply,
        });
        Box::pin(async move { answer.await.ok().flatten() })
    }

    fn search_models(&self, hub: HuggingFace) -> BoxFuture<'_, Option<String>> {
        let (reply, answer) = oneshot::channel();
        self.send(LlamaRequest::Search { hub, reply });
        Box::pin(async move { answer.await.ok().flatten() })
    }

    fn show_status(&self, title: &str, message: &str) {
        self.send(LlamaRequest::Status {
            title: title.to_owned(),
            message: message.to_owned(),
        });
    }

    fn progress(&self, state: &ProgressState) -> BoxFuture<'_, ProgressSignal> {
        let (stop, stopped) = oneshot::channel();
        self.send(LlamaRequest::Progress {
            state: state.clone(),
            stop,
        });
        Box::pin(async move {
            match stopped.await {
                Ok(()) => ProgressSignal::Stop,
                Err(_) => ProgressSignal::Closed,
            }
        })
    }

    fn update_progress(&self, state: &ProgressState) {
        self.send(LlamaRequest::UpdateProgress(state.clone()));
    }

    fn notify(&self, level: Level, message: &str) {
        self.send(LlamaRequest::Notify(level, message.to_owned()));
    }
}

fn notice_kind(level: Level) -> NoticeKind {
    match level {
        Level::Info => NoticeKind::Info,
        Level::Warning => NoticeKind::Warning,
        Level::Error => NoticeKind::Error,
    }
}

impl App {
    /// `/llama`: the router's models, or how to configure one.
    pub(super) fn llama_command(&mut self) {
        let registry = self.session.registry();
        let Some(config) = registry.llama_server().cloned() else {
            self.notice(
                NoticeKind::Warning,
                &format!("Configure llama.cpp with /login {PROVIDER_ID}"),
            );
            return;
        };
        let client = match LlamaClient::new(&config.server_url, Some(config.api_key)) {
            Ok(client) => client,
            Err(error) => {
                self.notice(NoticeKind::Error, &error.to_string());
                return;
            }
        };
        self.overlay = Some(Overlay::Llama(Box::new(LlamaView::new(
            &self.theme,
            &self.keys,
        ))));
        let ui = Arc::new(TuiLlama {
            tx: self.tx.clone(),
        });
        let host: Arc<dyn CatalogHost> = Arc::new(self.session.clone());
        let tx = self.tx.clone();
        tokio::spawn(async move {
            llama::command::run(ui, host, client).await;
            let _ = tx.send(AppEvent::Llama(LlamaRequest::Finished));
        });
    }

    fn llama_view(&mut self) -> Option<&mut LlamaView> {
        match self.overlay.as_mut() {
            Some(Overlay::Llama(view)) => Some(view),
            _ => None,
        }
    }

    /// A request of the `/llama` task.
    pub(super) fn on_llama_request(&mut self, request: LlamaRequest) {
        match request {
            LlamaRequest::Notify(level, text) => self.notice(notice_kind(level), &text),
            LlamaRequest::Finished => {
                if self.llama_view().is_some() {
                    self.overlay = None;
                }
            }
            request => {
                let Some(view) = self.llama_view() else {
                    // The panel is gone: dropping the request's reply ends the task.
                    return;
                };
                match request {
                    LlamaRequest::Models {
                        server_url,
                        models,
                        reply,
                    } => view.show_models(server_url, models, reply),
                    LlamaRequest::Select {
                        title,
                        options,
                        reply,
                    } => view.show_select(title, options, reply),
                    LlamaRequest::Search { hub, reply } => {
                        view.show_search(reply);
                        self.llama_hub = Some(hub);
                    }
                    LlamaRequest::Status { title, message } => view.show_status(title, message),
                    LlamaRequest::Progress { state, stop } => view.show_progress(state, stop),
                    LlamaRequest::UpdateProgress(state) => view.update_progress(state),
                    LlamaRequest::SearchResults { query, result } => {
                        view.search_results(&query, result)
                    }
                    LlamaRequest::Notify(..) | LlamaRequest::Finished => {}
                }
            }
        }
    }

    /// A key for the `/llama` panel.
    pub(super) fn on_llama_key(&mut self, input: &pi_tui::Input) {
        let Some(view) = self.llama_view() else {
            return;
        };
        if let LlamaKey::Search(query) = view.handle(input) {
            self.search_hugging_face(query);
        }
    }

    /// Searches after the user paused typing; the newest search wins.
    fn search_hugging_face(&mut self, query: String) {
        let Some(hub) = self.llama_hub.clone() else {
            return;
        };
        if let Some(previous) = self.llama_search.take() {
            previous.cancel();
        }
        let cancel = CancellationToken::new();
        self.llama_search = Some(cancel.clone());
        let tx = self.tx.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(500)) => {}
                () = cancel.cancelled() => return,
            }
            let result = hub.search(&query, &cancel).await.map_err(|e| e.to_string());
            if !cancel.is_cancelled() {
                let _ = tx.send(AppEvent::Llama(LlamaRequest::SearchResults {
                    query,
                    result,
                }));
            }
        });
    }

    /// `/login llama.cpp`: the router's URL and key, checked, then stored.
    pub(super) fn start_llama_login(&mut self) {
        let tx = self.tx.clone();
        let auth_path = crate::config::paths::auth_path(&self.agent_dir);
        tokio::spawn(async move {
            let ui = super::login::TuiLogin::new(tx.clone());
            let result = match llama::login::ask(&ui).await {
                Ok(credential) => llama::login::save(&auth_path, credential)
                    .map_err(|e| OAuthError::Failed(format!("could not save the login: {e}"))),
                Err(e) => Err(e),
            };
            let _ = tx.send(AppEvent::Login(LoginEvent::Finished {
                provider: PROVIDER_ID.to_owned(),
                result,
            }));
        });
    }

    /// After `/login llama.cpp`: without a usable model, where to go next (as pi 1.6.0
    /// words it); then the router's models are read in the background.
    pub(super) fn after_llama_login(&mut self, action: &str) {
        if self.no_model {
            let loaded = self
                .session
                .registry()
                .available()
                .iter()
                .filter(|m| m.provider == PROVIDER_ID)
                .count();
            let guidance = if loaded == 0 {
                format!(
                    "{action}. No llama.cpp models are loaded. Use /llama to load a model, then /model to select it."
                )
            } else {
                format!(
                    "{action}. Use /model to select a loaded llama.cpp model, or /llama to manage models."
                )
            };
            self.notice(NoticeKind::Error, &guidance);
        }
        let session = self.session.clone();
        let tx = self.tx.clone();
        let action = action.to_owned();
        tokio::spawn(async move {
            let refresh = session.refresh_llama_models();
            let warning = match tokio::time::timeout(Duration::from_secs(15), refresh).await {
                Ok(Ok(())) => return,
                Ok(Err(_)) => format!(
                    "{action}, but its model catalog could not be refreshed; using cached models."
                ),
                Err(_) => format!(
                    "{action}, but its model catalog refresh timed out; using cached models."
                ),
            };
            let _ = tx.send(AppEvent::Done(super::Completion::Notice(
                NoticeKind::Warning,
                warning,
            )));
        });
    }
}
