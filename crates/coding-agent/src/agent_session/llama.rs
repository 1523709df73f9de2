//! The session's side of the built-in llama.cpp extension: the router's models joining the
//! registry when a refresh asks the router, and `/llama` outside the terminal UI (a
//! warning, as pi 1.6.0 gives).

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{AgentSession, lock};
use crate::llama::command::CatalogHost;
use crate::llama::{self, LlamaError};

/// The llama.cpp catalog refreshes: the newest one's number and how to cancel it.
#[derive(Default)]
pub(super) struct LlamaRefreshes {
    latest: u64,
    cancel: Option<CancellationToken>,
}

impl LlamaRefreshes {
    /// Starts a refresh: the one under way is cancelled, it cannot publish any more.
    fn start(&mut self) -> (u64, CancellationToken) {
        if let Some(older) = self.cancel.take() {
            older.cancel();
        }
        self.latest += 1;
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        (self.latest, cancel)
    }
}

impl AgentSession {
    /// Asks the configured router for its selectable models, saves them to the catalog file
    /// and puts them in the registry; nothing to do when no router is configured. A newer
    /// refresh cancels this one, which then publishes nothing and ends without error.
    pub async fn refresh_llama_models(&self) -> Result<(), LlamaError> {
        let registry = self.registry();
        let (Some(config), Some(agent_dir)) = (
            registry.llama_server().cloned(),
            registry
                .auth_path()
                .and_then(std::path::Path::parent)
                .map(std::path::Path::to_path_buf),
        ) else {
            return Ok(());
        };
        let (generation, cancel) = lock(&self.inner.llama_refreshes).start();
        let refreshed = llama::refresh::refresh(&agent_dir, &config, &cancel).await;
        {
            // Only the newest refresh publishes, and one at a time (pi 1.6.0): an older one
            // that got this far anyway is dropped, its answer outdated.
            let refreshes = lock(&self.inner.llama_refreshes);
            if refreshes.latest != generation {
                return Ok(());
            }
            let (models, classifiers) = refreshed?.publish(&agent_dir)?;
            self.inner
                .registry
                .update_base(|registry| {
                    registry.set_llama_models(models);
                    registry.set_llama_classifiers(classifiers);
                })
                .map_err(LlamaError::Store)?;
        }
        let current = self.model();
        if current.provider == llama::PROVIDER_ID
            && let Some(found) = self
                .registry()
                .find(&current.provider, &current.id)
                .cloned()
        {
            self.refresh_model_auth(found);
        }
        self.mirror_changed();
        Ok(())
    }

    /// Starts a refresh of the llama.cpp models in the background (at startup of RPC and
    /// interactive mode, unless offline); failures keep the saved catalog.
    pub fn refresh_llama_models_later(&self) {
        let registry = self.registry();
        if registry.llama_server().is_none() || crate::packages::manager::offline() {
            return;
        }
        let session = self.clone();
        tokio::spawn(async move {
            let refresh = session.refresh_llama_models();
            let _ = tokio::time::timeout(std::time::Duration::from_secs(15), refresh).await;
        });
    }

    /// `/llama` in RPC, print and JSON mode: it needs the terminal UI.
    pub(super) fn llama_outside_tui(&self) {
        let ui = lock(&self.inner.ext.ui).clone();
        if let Some(ui) = ui {
            ui.notice(crate::extensions::UiNotice::Notify {
                message: llama::INTERACTIVE_ONLY.to_owned(),
                notify_type: Some("warning".to_owned()),
            });
        }
    }
}

impl CatalogHost for AgentSession {
    fn refresh_models(&self) -> BoxFuture<'_, Result<(), LlamaError>> {
        Box::pin(self.refresh_llama_models())
    }
}
