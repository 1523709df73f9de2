//! The provider registry, keyed by API id (`openai-completions`, `anthropic-messages`, …).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

pub use crate::api_provider::ApiProvider;

struct Registered {
    provider: Arc<dyn ApiProvider>,
    source_id: Option<String>,
}

static REGISTRY: LazyLock<RwLock<HashMap<String, Registered>>> = LazyLock::new(|| {
    let mut map = HashMap::new();
    for provider in crate::providers::builtin() {
        map.insert(
            provider.api().to_owned(),
            Registered {
                provider,
                source_id: None,
            },
        );
    }
    RwLock::new(map)
});

/// Registers (or replaces) the provider for its API id; `source_id` groups registrations so
/// an extension can remove its own.
pub fn register_api_provider(provider: Arc<dyn ApiProvider>, source_id: Option<&str>) {
    let mut map = REGISTRY
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.insert(
        provider.api().to_owned(),
        Registered {
            provider,
            source_id: source_id.map(str::to_owned),
        },
    );
}

/// The provider for an API id.
pub fn get_api_provider(api: &str) -> Option<Arc<dyn ApiProvider>> {
    let map = REGISTRY
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.get(api).map(|r| Arc::clone(&r.provider))
}

/// The API ids that have a provider.
pub fn registered_apis() -> Vec<String> {
    let map = REGISTRY
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut apis: Vec<String> = map.keys().cloned().collect();
    apis.sort();
    apis
}

/// Removes every provider registered with `source_id`.
pub fn unregister_api_providers(source_id: &str) {
    let mut map = REGISTRY
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.retain(|_, r| r.source_id.as_deref() != Some(source_id));
}
