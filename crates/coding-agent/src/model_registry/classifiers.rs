//! The classifier models of the registry: the llama.cpp router's, kept as pi 1.6.0's
//! catalog entries and pointed at the router configured now.

use serde_json::{Value, json};

use super::ModelRegistry;
use crate::llama;

impl ModelRegistry {
    /// Replaces the llama.cpp classifiers (from the saved catalog or a refresh). A decision
    /// model is reached through the inference URL, any other through the server root.
    pub fn set_llama_classifiers(&mut self, entries: Vec<Value>) {
        if self.llama_disabled {
            return;
        }
        let server = self.llama.as_ref().map(|c| c.server_url.clone());
        self.llama_classifiers = entries
            .into_iter()
            .map(|mut entry| {
                if let Some(server) = &server {
                    let base = if entry["api"] == "typesafe-system-one" {
                        llama::url::inference_url(server).unwrap_or_else(|_| server.clone())
                    } else {
                        server.clone()
                    };
                    entry["baseUrl"] = json!(base);
                }
                entry
            })
            .collect();
    }

    /// Every classifier entry; with `available`, only those whose provider can be reached
    /// now (the llama.cpp router is configured).
    pub fn classifiers(&self, available: bool) -> Vec<Value> {
        if available && self.llama.is_none() {
            return Vec::new();
        }
        self.llama_classifiers.clone()
    }

    /// The key a classifier's requests carry.
    pub fn classifier_key(&self, provider: &str) -> Option<String> {
        if provider == llama::PROVIDER_ID {
            return self.llama.as_ref().map(|c| c.api_key.clone());
        }
        None
    }
}
