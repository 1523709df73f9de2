//! Model and thinking-level changes: each is recorded as a session entry (saved as the
//! default in settings only when asked, as pi 1.6.0's `persist` option); thinking levels
//! are clamped to what the model supports.

use serde::Serialize;

use pi_ai::{Model, ThinkingLevel};

use super::{AgentSession, SessionOpError, lock};
use crate::session::EntryKind;
use crate::session_event::SessionOnlyEvent;

/// A model of the `--models` scope, with the thinking level its pattern asked for.
#[derive(Debug, Clone)]
pub struct ScopedModel {
    pub model: Model,
    pub thinking_level: Option<ThinkingLevel>,
}

/// What `cycle_model` switched to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCycleResult {
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    pub is_scoped: bool,
}

impl AgentSession {
    /// Switches to `model` (its provider needs a key) and records it, without touching the
    /// defaults in settings (RPC `set_model`, extensions); the thinking level follows
    /// [`Self::level_for_switch`].
    pub fn set_model(&self, model: Model) -> Result<(), SessionOpError> {
        self.switch_model(model, false)
    }

    /// [`Self::set_model`], also saving the model as the default in settings (a model
    /// chosen in the interactive UI).
    pub fn set_model_as_default(&self, model: Model) -> Result<(), SessionOpError> {
        self.switch_model(model, true)
    }

    fn switch_model(&self, model: Model, persist: bool) -> Result<(), SessionOpError> {
        if self.inner.request_auth(&model).is_err() {
            return Err(SessionOpError::new(format!(
                "No API key for {}/{}",
                model.provider, model.id
            )));
        }
        let level = self.level_for_switch(&model, None);
        let previous = self.apply_model(model.clone());
        if persist {
            let settings = &self.inner.settings;
            settings.set("defaultProvider", model.provider.clone().into());
            settings.set("defaultModel", model.id.clone().into());
        }
        self.set_thinking_level(level);
        self.announce_model(model, previous, "set");
        Ok(())
    }

    /// Moves to the next model: of the `--models` scope when there is one, else of every
    /// model with a key. `None` when there is nothing to cycle to.
    pub fn cycle_model(&self, backward: bool) -> Option<ModelCycleResult> {
        let current = self.model();
        let same = |m: &Model| m.provider == current.provider && m.id == current.id;
        let scoped_models = self.scoped_models();
        if !scoped_models.is_empty() {
            let scoped: Vec<_> = scoped_models
                .iter()
                .filter(|s| self.inner.request_auth(&s.model).is_ok())
                .collect();
            let index = scoped.iter().position(|s| same(&s.model));
            let next = scoped[next_cycle_index(index, scoped.len(), backward)?];
            let level = self.level_for_switch(&next.model, next.thinking_level);
            let previous = self.apply_model(next.model.clone());
            self.set_thinking_level(level);
            self.announce_model(next.model.clone(), previous, "cycle");
            return Some(ModelCycleResult {
                model: next.model.clone(),
                thinking_level: self.thinking_level(),
                is_scoped: true,
            });
        }
        let available: Vec<Model> = self
            .inner
            .registry
            .current()
            .available()
            .into_iter()
            .cloned()
            .collect();
        let index = available.iter().position(same);
        let next = available[next_cycle_index(index, available.len(), backward)?].clone();
        let level = self.level_for_switch(&next, None);
        let previous = self.apply_model(next.clone());
        self.set_thinking_level(level);
        self.announce_model(next.clone(), previous, "cycle");
        Some(ModelCycleResult {
            model: next,
            thinking_level: self.thinking_level(),
            is_scoped: false,
        })
    }

    /// Records the live thinking level on the current branch when the branch implies another
    /// one (pi 1.5.1): tree navigation can leave the latest `thinking_level_change` on another
    /// branch, and a resume would restore that. The recorded level is compared after clamping
    /// to the model, so a level clamped on resume is not recorded over the requested one.
    pub(super) fn record_thinking_level(&self) {
        let mut session = lock(&self.inner.session);
        let recorded = session
            .branch_entries()
            .iter()
            .rev()
            .find_map(|entry| match &entry.kind {
                EntryKind::ThinkingLevelChange { thinking_level } => Some(thinking_level.clone()),
                _ => None,
            });
        let Some(recorded) = recorded.as_deref().and_then(ThinkingLevel::parse) else {
            return;
        };
        let live = self.thinking_level();
        if pi_ai::clamp_thinking_level(&self.model(), recorded) == live {
            return;
        }
        if let Err(e) = session.append_thinking_level_change(live.as_str()) {
            eprintln!("Warning: {e}");
        }
    }

    /// Sets the thinking level, clamped to the model; a change is recorded and announced
    /// (`thinking_level_changed`), and settings are left alone.
    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        let model = self.model();
        let effective = pi_ai::clamp_thinking_level(&model, level);
        let previous = self.thinking_level();
        self.inner.agent.set_thinking_level(effective);
        if effective == previous {
            return;
        }
        if let Err(e) = lock(&self.inner.session).append_thinking_level_change(effective.as_str()) {
            eprintln!("Warning: {e}");
        }
        self.inner
            .emit_session(SessionOnlyEvent::ThinkingLevelChanged { level: effective });
        self.emit_extension_event_later(crate::extensions::ExtensionEvent::ThinkingLevelSelect {
            level: effective.as_str().to_owned(),
            previous_level: previous.as_str().to_owned(),
        });
    }

    /// [`Self::set_thinking_level`], also saving the requested level (before clamping) as
    /// the default in settings, as pi 1.6.0 does with `persist`.
    pub fn set_thinking_level_as_default(&self, level: ThinkingLevel) {
        self.set_thinking_level(level);
        self.inner
            .settings
            .set("defaultThinkingLevel", level.as_str().into());
    }

    /// Waits until extensions handled the model and thinking-level changes made so far (an
    /// RPC answer comes after their output, as in the TypeScript pi).
    pub async fn extension_events_settled(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        let sent = lock(&self.inner.ext.later)
            .as_ref()
            .is_some_and(|q| q.send(super::extensions::Later::Barrier(done)).is_ok());
        if sent {
            let _ = wait.await;
        }
    }

    /// Tells extensions about a change made by synchronous code, without waiting for them.
    pub(super) fn emit_extension_event_later(&self, event: crate::extensions::ExtensionEvent) {
        let runtime = self.inner.ext.runtime.clone();
        if !runtime.has_handlers(event.kind()) {
            return;
        }
        // One queue, so these events reach extensions in the order they happened.
        let mut queue = lock(&self.inner.ext.later);
        if queue.as_ref().is_none_or(|q| q.is_closed()) {
            let Ok(handle) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let (sender, mut receiver) =
                tokio::sync::mpsc::unbounded_channel::<super::extensions::Later>();
            handle.spawn(async move {
                while let Some(item) = receiver.recv().await {
                    match item {
                        super::extensions::Later::Event(event) => {
                            runtime
                                .emit(&event, tokio_util::sync::CancellationToken::new())
                                .await;
                        }
                        super::extensions::Later::Barrier(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
            *queue = Some(sender);
        }
        if let Some(queue) = queue.as_ref() {
            let _ = queue.send(super::extensions::Later::Event(event));
        }
    }

    /// Moves to the next supported thinking level; `None` when the model cannot think.
    pub fn cycle_thinking_level(&self) -> Option<ThinkingLevel> {
        let model = self.model();
        if !model.reasoning {
            return None;
        }
        let levels = pi_ai::supported_thinking_levels(&model);
        if levels.is_empty() {
            return None;
        }
        let current = self.thinking_level();
        let next = levels
            .iter()
            .position(|l| *l == current)
            .map_or(0, |i| (i + 1) % levels.len());
        self.set_thinking_level(levels[next]);
        Some(levels[next])
    }

    /// The thinking levels the current model supports.
    pub fn available_thinking_levels(&self) -> Vec<ThinkingLevel> {
        pi_ai::supported_thinking_levels(&self.model())
    }

    /// Records a compaction summarized by the caller (an embedding runtime with its own
    /// summarizer and key) and rebuilds the agent's context from the session.
    pub fn apply_external_compaction(
        &self,
        result: &crate::compaction::CompactionResult,
    ) -> Result<(), SessionOpError> {
        let details = serde_json::to_value(&result.details).ok();
        let checkpoint = super::system_message::system_checkpoint(&self.inner.agent);
        let messages = {
            let mut session = lock(&self.inner.session);
            session
                .append_compaction(crate::session::NewCompaction {
                    summary: &result.summary,
                    first_kept_entry_id: &result.first_kept_entry_id,
                    tokens_before: result.tokens_before,
                    details,
                    usage: result.usage.and_then(|u| serde_json::to_value(u).ok()),
                    from_hook: None,
                    system_message: checkpoint,
                })
                .map_err(|e| SessionOpError::new(e.to_string()))?;
            session.build_context().messages
        };
        self.inner.agent.replace_messages(messages);
        Ok(())
    }

    /// The level to carry into a switch to `target`, as pi 1.6.0's
    /// `_getThinkingLevelForModelSwitch`: the scoped level if given, else the target's
    /// `modelThinkingLevels` entry, else `defaultThinkingLevel`, else the current level
    /// (so a session with thinking off keeps it off on a thinking model).
    fn level_for_switch(&self, target: &Model, explicit: Option<ThinkingLevel>) -> ThinkingLevel {
        if let Some(level) = explicit {
            return level;
        }
        let settings = self.inner.settings.get();
        let key = format!("{}/{}", target.provider, target.id);
        settings
            .model_thinking_levels
            .as_ref()
            .and_then(|levels| levels.get(&key))
            .and_then(|level| ThinkingLevel::parse(level))
            .or_else(|| {
                settings
                    .default_thinking_level
                    .as_deref()
                    .and_then(ThinkingLevel::parse)
            })
            .unwrap_or_else(|| self.thinking_level())
    }

    /// Before a new session: reads `auth.json` and `models.json` again and, when the session
    /// has no model (it started with no key anywhere), takes the one startup would now
    /// choose. pi 1.6.0 rebuilds its runtime for a new session, so an RPC client that had
    /// the user sign in or add a provider gets a model this way.
    pub fn reload_models_for_new_session(&self) {
        if let Err(e) = self.reload_credentials() {
            eprintln!("Warning: {e}");
        }
        if !crate::auth_guidance::is_unknown_model(&self.model()) {
            return;
        }
        let settings = self.inner.settings.get();
        let Some(model) = self.registry().default_model(
            settings.default_provider.as_deref(),
            settings.default_model.as_deref(),
        ) else {
            return;
        };
        let level = settings
            .model_thinking_levels
            .as_ref()
            .and_then(|levels| levels.get(&model.full_id()))
            .or(settings.default_thinking_level.as_ref())
            .and_then(|level| ThinkingLevel::parse(level))
            // pi's DEFAULT_THINKING_LEVEL, as at startup.
            .unwrap_or(ThinkingLevel::Medium);
        let level = pi_ai::clamp_thinking_level(&model, level);
        self.refresh_model_auth(model);
        self.inner.agent.set_thinking_level(level);
    }

    /// Puts `model` in use: the agent, its key and headers, and the session entry.
    fn apply_model(&self, model: Model) -> Model {
        let previous = self.model();
        if let Err(e) = lock(&self.inner.session).append_model_change(&model.provider, &model.id) {
            eprintln!("Warning: {e}");
        }
        self.refresh_model_auth(model);
        previous
    }

    /// Takes the key and headers `model` has now and its settings (a base URL a login
    /// names), without recording a model change.
    pub(super) fn refresh_model_auth(&self, model: Model) {
        let inner = &self.inner;
        let auth = inner.request_auth(&model).unwrap_or_default();
        let mut options = inner.agent.stream_options();
        options.api_key = auth.api_key;
        options.headers = auth.headers;
        options.env = auth.env;
        inner.agent.set_stream_options(options);
        inner.agent.set_model(model);
    }

    /// `model_select`, after the thinking level followed the new model.
    fn announce_model(&self, model: Model, previous: Model, source: &str) {
        self.emit_extension_event_later(crate::extensions::ExtensionEvent::ModelSelect {
            model,
            previous_model: Some(previous),
            source: source.into(),
        });
    }
}

/// The index `cycle_model` moves to, as pi 1.6.0's `getNextCycleIndex`: a current model
/// outside the list goes to its first (or, backward, last) entry; `None` when the list is
/// empty or the current model is its only entry.
fn next_cycle_index(current: Option<usize>, len: usize, backward: bool) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let Some(index) = current else {
        return Some(if backward { len - 1 } else { 0 });
    };
    if len == 1 {
        return None;
    }
    Some(if backward {
        (index + len - 1) % len
    } else {
        (index + 1) % len
    })
}
