//! Asking the router which models can be chosen now, and saving the answer: what pi 1.6.0's
//! provider `refreshModels` does when the network is allowed.

use std::path::Path;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::catalog::{
    cached_context_windows, chat_model_entry, classifier_entry, has_unloaded_preset, is_selectable,
};
use super::client::LlamaClient;
use super::config::ServerConfig;
use super::error::LlamaError;
use super::store;
use super::url::inference_url;
use super::wire::RouterModel;

/// Whether the router loads unloaded presets on first use; asked only when there are any,
/// and a router that cannot say counts as no.
async fn router_autoload(
    client: &LlamaClient,
    catalog: &[RouterModel],
    cancel: &CancellationToken,
) -> bool {
    if !has_unloaded_preset(catalog) {
        return false;
    }
    matches!(
        client.props(None, cancel).await,
        Ok(props) if props.models_autoload == Some(true)
    )
}

/// What a refresh found: the entries to save to `models-store.json` (chat models and
/// classifiers) and the chat models for the registry.
pub struct Refreshed {
    pub persisted: Vec<Value>,
    pub chat: Vec<pi_ai::Model>,
    pub classifiers: Vec<Value>,
}

impl Refreshed {
    /// Saves the entries to `models-store.json` and gives the chat models and the
    /// classifiers.
    pub fn publish(self, agent_dir: &Path) -> Result<(Vec<pi_ai::Model>, Vec<Value>), LlamaError> {
        store::write_entries(agent_dir, self.persisted)?;
        Ok((self.chat, self.classifiers))
    }
}

/// Lists the router's models and keeps the selectable ones (reading each loaded chat
/// model's template to know whether it thinks); nothing is saved yet, so that a refresh
/// overtaken by a newer one can be dropped.
pub async fn refresh(
    agent_dir: &Path,
    config: &ServerConfig,
    cancel: &CancellationToken,
) -> Result<Refreshed, LlamaError> {
    let client = LlamaClient::new(&config.server_url, Some(config.api_key.clone()))?;
    let cached = cached_context_windows(&store::read_entries(agent_dir));
    let catalog = client.list(false, cancel).await?;
    let autoload = router_autoload(&client, &catalog, cancel).await;
    let selectable: Vec<&RouterModel> = catalog
        .iter()
        .filter(|m| is_selectable(m, autoload))
        .collect();
    let server_url = client.server_url().to_owned();
    let base_url = inference_url(&server_url)?;
    let mut chat: Vec<Value> = Vec::new();
    for model in selectable.iter().filter(|m| m.is_chat_model()) {
        // Only a loaded model tells its template without side effects: asking a sleeping
        // one would wake it, an unloaded preset would load.
        let props = if model.has_status("loaded") {
            Some(client.props(Some(&model.id), cancel).await?)
        } else {
            None
        };
        chat.push(chat_model_entry(
            model,
            &base_url,
            props.as_ref(),
            cached.get(&model.id).copied(),
        ));
    }
    let classifiers: Vec<Value> = selectable
        .iter()
        .map(|m| classifier_entry(m, &server_url, &base_url, cached.get(&m.id).copied()))
        .collect();
    let mut persisted = chat.clone();
    persisted.extend(classifiers.iter().cloned());
    let chat = chat
        .into_iter()
        .filter_map(|entry| serde_json::from_value(entry).ok())
        .collect();
    Ok(Refreshed {
        persisted,
        chat,
        classifiers,
    })
}
