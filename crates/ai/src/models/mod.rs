//! Models: the built-in catalog, custom models from `models.json`, costs and thinking levels.

mod catalog;
mod cost;
pub mod custom;
mod thinking;

pub use catalog::{
    CatalogError, builtin_models, get_model, get_models, get_providers, warm_catalog,
};
pub use cost::calculate_cost;
pub use custom::{
    CustomModelsError, ModelOverride, ModelsConfig, ProviderRequestConfig, ResolvedModels,
};
pub use thinking::{clamp_thinking_level, supported_thinking_levels};

use crate::types::Model;

/// Whether two models are the same (same provider and id).
pub fn models_are_equal(a: &Model, b: &Model) -> bool {
    a.id == b.id && a.provider == b.provider
}
