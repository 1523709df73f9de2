//! Virtual models in the catalog: listed under their provider next to its physical models
//! (hiding a physical one of the same id), routed per request by their extension.

use super::ModelRegistry;
use crate::virtual_models::{VirtualModelDef, is_virtual};

impl ModelRegistry {
    /// Adds (or replaces) a virtual model. Registering over a physical model of that
    /// provider and id fails, as in pi 1.6.0.
    pub fn register_virtual_model(&mut self, def: &VirtualModelDef) -> Result<(), String> {
        def.validate()?;
        if self.find_physical(&def.provider, &def.id).is_some() {
            return Err(format!(
                "Virtual model {}/{} conflicts with a physical model.",
                def.provider, def.id
            ));
        }
        self.place_virtual_model(def);
        Ok(())
    }

    /// Lists a registered virtual model again (after the catalog was rebuilt): it hides a
    /// physical model of the same id, and a provider no physical model uses becomes one
    /// that is always usable.
    pub fn place_virtual_model(&mut self, def: &VirtualModelDef) {
        let models = &mut self.resolved.models;
        models.retain(|m| !(m.provider == def.provider && m.id == def.id));
        let physical_provider = models.iter().any(|m| m.provider == def.provider);
        models.push(def.to_model());
        if !physical_provider && !self.has_auth(&def.provider) {
            self.virtual_only.insert(def.provider.clone());
        }
    }

    /// A physical model of the catalog (never a virtual one).
    pub fn find_physical(&self, provider: &str, id: &str) -> Option<&pi_ai::Model> {
        self.find(provider, id).filter(|m| !is_virtual(m))
    }
}
