//! `/llama` in the terminal UI: the router's models with their state; picking one loads or
//! unloads it, "Download model…" has the router fetch one from Hugging Face. After each
//! action the list shows the router's state again (it may be shared with other clients).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::client::LlamaClient;
use super::error::LlamaError;
use super::format::format_bytes;
use super::huggingface::{HuggingFace, parse_model_name};
use super::ui::{
    Level, LlamaUi, ModelsAction, ProgressRun, confirm, connection_error, run_with_progress,
};
use super::wire::RouterModel;

/// How long a catalog read and the model refresh after it may take.
const SYNC_TIMEOUT: Duration = Duration::from_secs(15);

/// The session side of `/llama`: after the router changed, its models are read again.
pub trait CatalogHost: Send + Sync {
    /// Refreshes the llama.cpp models the session offers (and the saved catalog).
    fn refresh_models(&self) -> BoxFuture<'_, Result<(), LlamaError>>;
}

/// One `/llama` session: the UI, the session, the router.
struct Flow {
    ui: Arc<dyn LlamaUi>,
    host: Arc<dyn CatalogHost>,
    client: LlamaClient,
    cancel: CancellationToken,
}

/// Runs `/llama` until the user closes it; an unexpected failure ends it with an error
/// notice.
pub async fn run(ui: Arc<dyn LlamaUi>, host: Arc<dyn CatalogHost>, client: LlamaClient) {
    let flow = Flow {
        ui: Arc::clone(&ui),
        host,
        client,
        cancel: CancellationToken::new(),
    };
    if let Err(error) = flow.main_loop().await {
        ui.notify(Level::Error, &error.to_string());
    }
}

impl Flow {
    async fn main_loop(&self) -> Result<(), LlamaError> {
        let Some(mut catalog) = self.read_catalog().await else {
            return Ok(());
        };
        loop {
            let action = self
                .ui
                .show_models(self.client.server_url(), &catalog)
                .await;
            let result = match action {
                ModelsAction::Close => return Ok(()),
                ModelsAction::Download => self.download().await,
                ModelsAction::Model(model) if model.is_loaded() => self.unload(&model).await,
                ModelsAction::Model(model) if model.has_status("unloaded") => {
                    self.load(&catalog, &model).await
                }
                ModelsAction::Model(model) => {
                    let text = format!("{} is {}", model.id, model.status.value);
                    self.ui.notify(Level::Warning, &text);
                    Ok(())
                }
            };
            let Some(refreshed) = self.read_catalog().await else {
                return Ok(());
            };
            catalog = refreshed;
            if let Err(error) = result
                && !error.is_connection_error()
            {
                self.ui.notify(Level::Error, &error.to_string());
            }
        }
    }

    /// The router's models, after refreshing the session's; a failure offers Retry and
    /// Close (`None`).
    async fn read_catalog(&self) -> Option<Vec<RouterModel>> {
        loop {
            match self.sync(None).await {
                Ok(catalog) => return Some(catalog),
                Err(error) => {
                    let message = error.connection_message();
                    let retry =
                        connection_error(self.ui.as_ref(), self.client.server_url(), &message)
                            .await;
                    if !retry {
                        return None;
                    }
                }
            }
        }
    }

    /// Reads the catalog (unless given) and refreshes the session's models from the router.
    async fn sync(
        &self,
        catalog: Option<Vec<RouterModel>>,
    ) -> Result<Vec<RouterModel>, LlamaError> {
        let current = match catalog {
            Some(catalog) => catalog,
            None => self.client.list(false, &self.cancel).await?,
        };
        match tokio::time::timeout(SYNC_TIMEOUT, self.host.refresh_models()).await {
            Ok(result) => result?,
            Err(_) => return Err(LlamaError::RefreshTimedOut),
        }
        Ok(current)
    }

    async fn unload(&self, model: &RouterModel) -> Result<(), LlamaError> {
        if !confirm(self.ui.as_ref(), "Unload model?", &model.id).await {
            return Ok(());
        }
        self.client.unload_and_wait(&model.id, &self.cancel).await?;
        self.sync(None).await?;
        self.ui
            .notify(Level::Info, &format!("Unloaded {}", model.id));
        Ok(())
    }

    async fn load(&self, catalog: &[RouterModel], target: &RouterModel) -> Result<(), LlamaError> {
        let loaded: Vec<&RouterModel> = catalog
            .iter()
            .filter(|m| m.id != target.id && m.is_loaded())
            .collect();
        let mut replace = false;
        if !loaded.is_empty() {
            let title = match loaded.len() {
                1 => "1 model is loaded".to_owned(),
                n => format!("{n} models are loaded"),
            };
            let options = ["Unload all and load", "Keep loaded and load", "Cancel"]
                .map(str::to_owned)
                .to_vec();
            match self.ui.select(&title, options).await.as_deref() {
                None | Some("Cancel") => return Ok(()),
                Some(choice) => replace = choice == "Unload all and load",
            }
        }
        if replace {
            for model in &loaded {
                self.client.unload_and_wait(&model.id, &self.cancel).await?;
            }
        }
        let attempt = async {
            let client = self.client.clone();
            let stopper = self.client.clone();
            let id = target.id.clone();
            let stop_id = target.id.clone();
            let loaded_now = run_with_progress(
                Arc::clone(&self.ui),
                ProgressRun {
                    title: "Loading model",
                    model: target.id.clone(),
                    cancel_title: "Stop loading?",
                },
                move |cancel, report| async move {
                    client
                        .load_and_wait(&id, &move |p| report(p), &cancel)
                        .await
                },
                move || async move { stopper.unload(&stop_id, &CancellationToken::new()).await },
            )
            .await?;
            if loaded_now.is_none() {
                return Ok(false);
            }
            let refreshed = self.sync(None).await?;
            let now_loaded = refreshed
                .iter()
                .find(|m| m.id == target.id)
                .is_some_and(|m| m.has_status("loaded"));
            let text = if now_loaded {
                format!("Loaded {}", target.id)
            } else {
                format!("Load started for {}", target.id)
            };
            self.ui.notify(Level::Info, &text);
            Ok::<bool, LlamaError>(true)
        };
        match attempt.await {
            Ok(true) => Ok(()),
            Ok(false) => {
                if replace {
                    self.restore(&loaded).await?;
                }
                Ok(())
            }
            Err(error) => {
                if replace {
                    // The load's error is the one to report.
                    let _ = self.restore(&loaded).await;
                }
                Err(error)
            }
        }
    }

    /// Loads again the models "Unload all and load" unloaded.
    async fn restore(&self, models: &[&RouterModel]) -> Result<(), LlamaError> {
        self.ui
            .notify(Level::Info, "Restoring previously loaded models");
        for model in models {
            self.client
                .load_and_wait(&model.id, &|_| {}, &self.cancel)
                .await?;
        }
        self.sync(None).await.map(|_| ())
    }

    async fn download(&self) -> Result<(), LlamaError> {
        let hub = HuggingFace::from_env();
        let Some(selected) = self.ui.search_models(hub.clone()).await else {
            return Ok(());
        };
        let (repository, mut quantization) = parse_model_name(&selected);
        self.ui.show_status("Loading model details", &repository);
        let details = hub.details(&repository, &self.cancel).await?;
        if let Some(gated) = &details.gated {
            let approval = if gated == "manual" {
                "Manual approval is required"
            } else {
                "Accept the access terms"
            };
            let title = format!(
                "Hugging Face access required\n{id}\n\n{approval} at:\nhttps://huggingface.co/{id}\n\nThe llama.cpp server needs HF_TOKEN with access.",
                id = details.id
            );
            let choice = self
                .ui
                .select(&title, vec!["Continue".to_owned(), "Back".to_owned()])
                .await;
            if choice.as_deref() != Some("Continue") {
                return Ok(());
            }
        }
        if quantization.is_none() && !details.quantizations.is_empty() {
            let options: Vec<String> = details
                .quantizations
                .iter()
                .map(|q| {
                    let mut parts: Vec<String> = Vec::new();
                    if let Some(size) = q.size {
                        parts.push(format_bytes(size));
                    }
                    if q.name == "Q4_K_M" {
                        parts.push("recommended".to_owned());
                    }
                    match parts.is_empty() {
                        true => q.name.clone(),
                        false => format!("{} · {}", q.name, parts.join(" · ")),
                    }
                })
                .collect();
            let title = format!("Select quantization\n{}", details.id);
            let Some(choice) = self.ui.select(&title, options.clone()).await else {
                return Ok(());
            };
            let Some(index) = options.iter().position(|o| *o == choice) else {
                return Ok(());
            };
            quantization = details.quantizations.get(index).map(|q| q.name.clone());
        }
        let model = match quantization {
            Some(quantization) => format!("{}:{quantization}", details.id),
            None => details.id.clone(),
        };
        let client = self.client.clone();
        let stopper = self.client.clone();
        let id = model.clone();
        let stop_id = model.clone();
        let downloaded = run_with_progress(
            Arc::clone(&self.ui),
            ProgressRun {
                title: "Downloading model",
                model: model.clone(),
                cancel_title: "Stop download?",
            },
            move |cancel, report| async move {
                client
                    .download_and_wait(&id, &move |p| report(p), &cancel)
                    .await
            },
            move || async move { stopper.unload(&stop_id, &CancellationToken::new()).await },
        )
        .await?;
        let Some(catalog) = downloaded else {
            return Ok(());
        };
        self.sync(Some(catalog)).await?;
        self.ui.notify(Level::Info, &format!("Downloaded {model}"));
        Ok(())
    }
}
