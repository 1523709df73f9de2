//! The session's model registry, which extensions may extend while it runs
//! (`pi.registerProvider` / `unregisterProvider` after loading): readers get the registry
//! as it stands; a change builds a new one and swaps it in.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{AgentSession, lock};
use crate::extensions::provider_stream::register_stream_provider;
use crate::model_registry::ModelRegistry;
use crate::virtual_models::VirtualModelDef;

/// What extensions registered on top of the catalog read from disk, in order.
#[derive(Clone, Default)]
pub(crate) struct Registrations {
    pub providers: Vec<(String, Value)>,
    pub virtuals: Vec<VirtualModelDef>,
}

/// The registry the session started with, the providers registered since, and the result.
pub(crate) struct SessionRegistry {
    base: Mutex<Arc<ModelRegistry>>,
    registered: Mutex<Registrations>,
    current: Mutex<Arc<ModelRegistry>>,
}

impl SessionRegistry {
    /// `loaded`: the providers and virtual models extensions registered while loading,
    /// already applied to `base`. They count as registered, as in pi 1.6.0: they stay when
    /// the base is read from disk again (a login, a new session) and `unregisterProvider`
    /// removes them. The base becomes the registry as read from disk; a provider that fails
    /// to apply is left out, as startup left it out.
    pub(crate) fn new(base: Arc<ModelRegistry>, loaded: Registrations) -> Self {
        let plain = if loaded.providers.is_empty() && loaded.virtuals.is_empty() {
            None
        } else {
            base.reloaded()
        };
        let Some(plain) = plain else {
            return Self {
                current: Mutex::new(base.clone()),
                base: Mutex::new(base),
                registered: Mutex::new(Registrations::default()),
            };
        };
        let mut current = plain.clone();
        let providers = loaded
            .providers
            .into_iter()
            .filter(|(name, config)| current.register_provider(name, config).is_ok())
            .collect();
        let virtuals = loaded
            .virtuals
            .into_iter()
            .filter(|def| current.register_virtual_model(def).is_ok())
            .collect();
        Self {
            current: Mutex::new(Arc::new(current)),
            base: Mutex::new(Arc::new(plain)),
            registered: Mutex::new(Registrations {
                providers,
                virtuals,
            }),
        }
    }

    pub(crate) fn current(&self) -> Arc<ModelRegistry> {
        lock(&self.current).clone()
    }

    /// The base registry with every registered provider applied in order, then the
    /// virtual models on top.
    fn rebuild(&self, registered: &Registrations) -> Result<ModelRegistry, String> {
        let mut registry = (**lock(&self.base)).clone();
        for (name, config) in &registered.providers {
            registry.register_provider(name, config)?;
        }
        for def in &registered.virtuals {
            registry.place_virtual_model(def);
        }
        Ok(registry)
    }

    fn register(&self, name: &str, config: &Value) -> Result<(), String> {
        self.update(|list| {
            list.providers.retain(|(n, _)| n != name);
            list.providers.push((name.to_owned(), config.clone()));
        })
    }

    fn unregister(&self, name: &str) -> Result<(), String> {
        self.update(|list| list.providers.retain(|(n, _)| n != name))
    }

    /// `pi.registerVirtualModel`: checked against the catalog as it is, then kept.
    fn register_virtual(&self, def: &VirtualModelDef) -> Result<(), String> {
        (*self.current()).clone().register_virtual_model(def)?;
        self.update(|list| {
            list.virtuals
                .retain(|v| !(v.provider == def.provider && v.id == def.id));
            list.virtuals.push(def.clone());
        })
    }

    fn unregister_virtual(&self, provider: &str, id: &str) -> Result<(), String> {
        self.update(|list| {
            list.virtuals
                .retain(|v| !(v.provider == provider && v.id == id))
        })
    }

    /// Changes the registered list and swaps in the registry built from it; on an error
    /// both stay as they were.
    fn update(&self, change: impl FnOnce(&mut Registrations)) -> Result<(), String> {
        let mut registered = lock(&self.registered);
        let mut next = registered.clone();
        change(&mut next);
        let registry = self.rebuild(&next)?;
        *registered = next;
        *lock(&self.current) = Arc::new(registry);
        Ok(())
    }
}

impl SessionRegistry {
    /// Changes the base registry (a provider's refreshed models) and rebuilds the current
    /// one with the registered providers; on an error both stay as they were.
    pub(crate) fn update_base(
        &self,
        change: impl FnOnce(&mut ModelRegistry),
    ) -> Result<(), String> {
        let mut next = (**lock(&self.base)).clone();
        change(&mut next);
        self.replace_base(next)
    }

    /// Puts `base` under the registered providers; the old base stays when that fails.
    fn replace_base(&self, base: ModelRegistry) -> Result<(), String> {
        let previous = std::mem::replace(&mut *lock(&self.base), Arc::new(base));
        let registered = lock(&self.registered).clone();
        match self.rebuild(&registered) {
            Ok(registry) => {
                *lock(&self.current) = Arc::new(registry);
                Ok(())
            }
            Err(e) => {
                *lock(&self.base) = previous;
                Err(e)
            }
        }
    }

    /// Reads `auth.json` and `models.json` again (after a login, a logout or a new local
    /// model); providers registered by extensions stay.
    fn reload_from_disk(&self) -> Result<(), String> {
        let Some(fresh) = self.current().reloaded() else {
            return Ok(());
        };
        self.replace_base(fresh)
    }
}

impl AgentSession {
    /// Reads the stored credentials and `models.json` again; the current model keeps its
    /// place but takes the key it now has (a login makes it usable).
    pub fn reload_credentials(&self) -> Result<(), String> {
        self.inner.registry.reload_from_disk()?;
        let model = self.model();
        if let Some(found) = self.registry().find(&model.provider, &model.id).cloned() {
            self.refresh_model_auth(found);
        }
        self.mirror_changed();
        Ok(())
    }

    /// The extensions' mirror of tools, commands and models is stale.
    pub(super) fn mirror_changed(&self) {
        self.inner
            .ext
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// `pi.registerProvider` after loading: the provider's models join (or replace its
    /// models in) the registry, and a `streamSimple` becomes the API behind them.
    pub fn register_extension_provider(&self, name: &str, config: &Value) -> Result<(), String> {
        register_stream_provider(self.extension_runtime(), name, config)?;
        self.inner.registry.register(name, config)?;
        self.mirror_changed();
        Ok(())
    }

    /// `pi.registerVirtualModel` after loading: the model joins the catalog under its
    /// provider; the current selection takes the new definition.
    pub fn register_virtual_model(&self, def: &VirtualModelDef) -> Result<(), String> {
        self.inner.registry.register_virtual(def)?;
        self.refresh_current_model();
        self.mirror_changed();
        Ok(())
    }

    /// `pi.unregisterVirtualModel`.
    pub fn unregister_virtual_model(&self, provider: &str, id: &str) -> Result<(), String> {
        self.inner.registry.unregister_virtual(provider, id)?;
        self.mirror_changed();
        Ok(())
    }

    /// The current model as the catalog now defines it (pi 1.6.0's
    /// `_refreshCurrentModelFromRegistry`), when it is still there.
    fn refresh_current_model(&self) {
        let model = self.model();
        if let Some(found) = self.registry().find(&model.provider, &model.id).cloned()
            && found != model
        {
            self.refresh_model_auth(found);
        }
    }

    /// `pi.unregisterProvider`: the models it registered go (built-in and `models.json`
    /// ones of that name come back), and so does its API.
    pub fn unregister_extension_provider(&self, name: &str) -> Result<(), String> {
        pi_ai::registry::unregister_api_providers(&format!("provider:{name}"));
        self.inner.registry.unregister(name)?;
        self.mirror_changed();
        Ok(())
    }
}
