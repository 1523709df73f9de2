//! `/scoped-models`: which models Ctrl+P cycles through, for this session (at once) and,
//! with Ctrl+S, in `enabledModels`.

use serde_json::Value;

use super::App;
use super::overlay::Overlay;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::selectors::scoped_models::{
    ScopeEvent, ScopeModel, ScopedModelsSelector,
};

impl App {
    pub(super) fn open_scoped_models(&mut self) {
        let registry = self.session.registry();
        let models: Vec<ScopeModel> = registry
            .available()
            .into_iter()
            .map(|m| ScopeModel {
                provider: m.provider.clone(),
                id: m.id.clone(),
                name: m.name.clone(),
            })
            .collect();
        let scoped = self.session.scoped_models();
        let enabled = if !scoped.is_empty() {
            Some(
                scoped
                    .iter()
                    .map(|s| format!("{}/{}", s.model.provider, s.model.id))
                    .collect(),
            )
        } else {
            self.session
                .settings()
                .get()
                .enabled_models
                .filter(|p| !p.is_empty())
                .map(|patterns| {
                    let resolved = crate::scope::resolve_quietly(
                        &registry,
                        patterns.iter().map(String::as_str),
                    );
                    let mut ids: Vec<String> = resolved
                        .models
                        .iter()
                        .map(|s| format!("{}/{}", s.model.provider, s.model.id))
                        .collect();
                    // Patterns that match nothing stay listed, as unavailable.
                    for pattern in resolved.unmatched {
                        if !ids.contains(&pattern) {
                            ids.push(pattern);
                        }
                    }
                    ids
                })
        };
        self.overlay = Some(Overlay::ScopedModels(Box::new(ScopedModelsSelector::new(
            models,
            enabled,
            &self.theme,
            &self.keys,
        ))));
    }

    pub(super) fn on_scoped_models_event(&mut self, event: ScopeEvent) {
        match event {
            ScopeEvent::None => {}
            ScopeEvent::Close => self.overlay = None,
            ScopeEvent::Changed(enabled) => self.apply_scope(enabled.as_deref()),
            ScopeEvent::Save(enabled) => {
                let registry = self.session.registry();
                let available: Vec<String> = registry
                    .available()
                    .iter()
                    .map(|m| format!("{}/{}", m.provider, m.id))
                    .collect();
                let all = enabled.as_ref().is_none_or(|list| {
                    list.len() == available.len() && list.iter().all(|id| available.contains(id))
                });
                let store = self.session.settings();
                match enabled.filter(|_| !all) {
                    Some(list) => store.set(
                        "enabledModels",
                        Value::Array(list.into_iter().map(Value::String).collect()),
                    ),
                    None => store.remove("enabledModels"),
                }
                self.notice(NoticeKind::Info, "Model selection saved to settings");
            }
        }
    }

    /// The session cycles through `enabled` when it names some but not all available
    /// models; otherwise through every model.
    fn apply_scope(&mut self, enabled: Option<&[String]>) {
        let registry = self.session.registry();
        let available: Vec<String> = registry
            .available()
            .iter()
            .map(|m| format!("{}/{}", m.provider, m.id))
            .collect();
        let scoped = match enabled {
            Some(list)
                if list.iter().any(|id| available.contains(id))
                    && !available.iter().all(|id| list.contains(id)) =>
            {
                crate::scope::resolve_quietly(&registry, list.iter().map(String::as_str)).models
            }
            _ => Vec::new(),
        };
        self.session.set_scoped_models(scoped);
        self.footer_dirty = true;
    }
}
