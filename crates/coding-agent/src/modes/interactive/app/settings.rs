//! `/settings`: opens pi 1.6's settings menu, writes each change to the global
//! `settings.json` as pi does, and applies it to the running session where ours has the
//! feature (layout, theme, thinking, queue modes, editor, fullscreen behaviour).

use serde_json::Value;

use super::App;
use super::overlay::Overlay;
use crate::config::tui_settings::TuiMode;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::selectors::settings::items::{self, LiveState};
use crate::modes::interactive::selectors::settings::{
    ModelChoice, SettingsContext, SettingsEvent, SettingsSelector,
};

impl App {
    pub(super) fn open_settings(&mut self) {
        let store = self.session.settings();
        let settings = store.get();
        let model = self.session.model();
        let theme_setting = self
            .use_theme
            .clone()
            .or_else(|| settings.theme.clone())
            .unwrap_or_else(|| crate::modes::interactive::theme::default_theme_name().to_owned());
        let overrides = settings.model_thinking_levels.clone().unwrap_or_default();
        let live = LiveState {
            auto_compact: self.session.auto_compaction_enabled(),
            steering_mode: queue_mode(self.session.steering_mode()),
            follow_up_mode: queue_mode(self.session.follow_up_mode()),
            hide_thinking: self.chat.thinking_hidden(),
            tui_mode: if self.fullscreen.is_some() {
                "fullscreen"
            } else {
                "regular"
            }
            .to_owned(),
            theme: theme_setting.clone(),
            model_thinking_overrides: overrides.len(),
            follow_up_key: self.key_display("app.message.followUp"),
            cycle_thinking_key: self.key_display("app.thinking.cycle"),
        };
        let rows = items::build_items(store, &live);
        let models = self
            .session
            .registry()
            .available()
            .into_iter()
            .map(|m| ModelChoice {
                provider: m.provider.clone(),
                id: m.id.clone(),
                levels: if m.reasoning {
                    pi_ai::supported_thinking_levels(m)
                        .iter()
                        .map(|l| l.as_str().to_owned())
                        .collect()
                } else {
                    vec!["off".to_owned()]
                },
            })
            .collect();
        let default_model = match (&settings.default_provider, &settings.default_model) {
            (Some(p), Some(m)) => Some(format!("{p}/{m}")),
            _ => None,
        };
        let context = SettingsContext {
            models,
            current_model: (!self.no_model).then(|| format!("{}/{}", model.provider, model.id)),
            default_model,
            overrides,
            default_thinking: settings
                .default_thinking_level
                .clone()
                .unwrap_or_else(|| "medium".to_owned()),
            anthropic_extra_usage: store
                .value(&["warnings", "anthropicExtraUsage"])
                .and_then(|v| v.as_bool())
                .unwrap_or(true),
            themes: crate::modes::interactive::theme::available_themes(
                &self.agent_dir,
                self.session.cwd(),
                &self.theme_sources(),
            ),
            theme_setting,
            light_terminal: crate::modes::interactive::theme::terminal_theme_name() == "light",
        };
        self.overlay = Some(Overlay::Settings(Box::new(SettingsSelector::new(
            rows,
            context,
            &self.theme,
        ))));
    }

    pub(super) fn on_settings_event(&mut self, event: SettingsEvent) {
        match event {
            SettingsEvent::None => {}
            SettingsEvent::Close => self.overlay = None,
            SettingsEvent::Changed(id, value) => self.apply_setting(id, &value),
            SettingsEvent::ModelThinking(key, level) => self.set_model_thinking(&key, level),
            SettingsEvent::Warnings(anthropic_extra_usage) => {
                let mut warnings = self
                    .session
                    .settings()
                    .global_value("warnings")
                    .and_then(|v| v.as_object().cloned())
                    .unwrap_or_default();
                warnings.insert(
                    "anthropicExtraUsage".to_owned(),
                    Value::Bool(anthropic_extra_usage),
                );
                self.session
                    .settings()
                    .set("warnings", Value::Object(warnings));
            }
            SettingsEvent::ThemePreview(setting) => self.preview_theme(&setting),
        }
    }

    fn apply_setting(&mut self, id: &str, value: &str) {
        match id {
            "autocompact" => {
                self.session.set_auto_compaction_enabled(value == "true");
                self.footer_dirty = true;
                return;
            }
            "steering-mode" | "follow-up-mode" => {
                let Ok(mode) = serde_json::from_value(Value::String(value.to_owned())) else {
                    return;
                };
                if id == "steering-mode" {
                    self.session.set_steering_mode(mode);
                } else {
                    self.session.set_follow_up_mode(mode);
                }
                return;
            }
            "tui-mode" => {
                let mode = if value == "fullscreen" {
                    TuiMode::Fullscreen
                } else {
                    TuiMode::Regular
                };
                if !self.switch_tui_mode(mode) {
                    let shown = if self.fullscreen.is_some() {
                        "fullscreen"
                    } else {
                        "regular"
                    };
                    if let Some(Overlay::Settings(menu)) = self.overlay.as_mut() {
                        menu.set_value("tui-mode", shown);
                    }
                    self.notice(
                        NoticeKind::Info,
                        "Close active overlays before changing TUI mode",
                    );
                    return;
                }
            }
            _ => {}
        }
        let session = self.session.clone();
        let store = session.settings();
        if let Some(write) = items::write_for(id, value) {
            write.apply(store);
        }
        let settings = store.get();
        match id {
            "skill-commands" => self.install_autocomplete(),
            "editor-padding" => self.editor.set_padding_x(value.parse().unwrap_or_default()),
            "autocomplete-max-visible" => self
                .editor
                .set_autocomplete_max_visible(value.parse().unwrap_or(5)),
            "hide-thinking" if self.chat.thinking_hidden() != (value == "true") => {
                self.chat.toggle_thinking_hidden();
            }
            "http-idle-timeout" => {
                let label =
                    items::format_idle_timeout(settings.http_idle_timeout_ms().unwrap_or(0));
                self.notice(NoticeKind::Info, &format!("HTTP idle timeout: {label}"));
            }
            "cache-warming-mode" => {
                self.notice(NoticeKind::Info, &format!("Cache warming: {value}"));
            }
            "show-images" | "image-width-cells" => {
                self.chat.set_image_display(
                    crate::modes::interactive::components::ImageDisplay::from_store(store),
                );
            }
            "tui-mode" => self.notice(NoticeKind::Info, &format!("TUI mode: {value}")),
            "fullscreen-exit-output"
            | "fullscreen-scrollbar"
            | "fullscreen-copy-on-select"
            | "fullscreen-wheel-scroll-lines" => {
                if let Some(screen) = self.fullscreen.as_mut() {
                    screen.apply_settings(&settings);
                }
            }
            "theme" => self.preview_theme(value),
            _ => {}
        }
    }

    /// Sets or clears a model's thinking override; the current model takes it at once.
    fn set_model_thinking(&mut self, key: &str, level: Option<String>) {
        let session = self.session.clone();
        let store = session.settings();
        let mut levels = store
            .global_value("modelThinkingLevels")
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        match &level {
            Some(level) => {
                levels.insert(key.to_owned(), Value::String(level.clone()));
            }
            None => {
                levels.remove(key);
            }
        }
        if levels.is_empty() {
            store.remove("modelThinkingLevels");
        } else {
            store.set("modelThinkingLevels", Value::Object(levels));
        }
        let model = self.session.model();
        if format!("{}/{}", model.provider, model.id) != key {
            return;
        }
        let level = level.unwrap_or_else(|| {
            store
                .get()
                .default_thinking_level
                .unwrap_or_else(|| "medium".to_owned())
        });
        if let Some(level) = pi_ai::ThinkingLevel::parse(&level) {
            self.session.set_thinking_level(level);
            self.footer_dirty = true;
            self.update_editor_border();
        }
    }

    /// Shows a theme setting (a name, or `light/dark`) without saving it.
    fn preview_theme(&mut self, setting: &str) {
        let (theme, warnings) = crate::modes::interactive::theme::load_theme(
            Some(setting),
            &self.agent_dir,
            self.session.cwd(),
            &self.theme_sources(),
        );
        if !warnings.is_empty() {
            return;
        }
        self.set_theme(theme);
        if let Some(Overlay::Settings(menu)) = self.overlay.as_mut() {
            menu.set_theme(&self.theme);
        }
    }

    /// Changes layout at run time; refused while an extension overlay is open.
    pub(super) fn switch_tui_mode(&mut self, mode: TuiMode) -> bool {
        let fullscreen = mode == TuiMode::Fullscreen;
        if self.fullscreen.is_some() == fullscreen {
            return true;
        }
        if self.ext.has_overlays() {
            return false;
        }
        if let Err(e) = self.renderer.switch(fullscreen) {
            self.notice(NoticeKind::Error, &format!("TUI mode: {e}"));
        }
        self.fullscreen =
            fullscreen.then(|| super::fullscreen::Fullscreen::new(&self.session.settings().get()));
        true
    }
}

fn queue_mode(mode: pi_agent_core::QueueMode) -> String {
    serde_json::to_value(mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "one-at-a-time".to_owned())
}
