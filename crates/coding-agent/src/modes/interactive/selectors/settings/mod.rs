//! `/settings`: pi 1.6's settings menu. Each change is reported at once (the app writes it
//! and applies it); the Warnings, per-model thinking and Theme rows open submenus.

pub mod items;
pub mod list;
pub mod submenu;
mod theme_menu;

use std::collections::BTreeMap;

use pi_tui::Input;
use pi_tui::components::select_list::SelectItem;
use pi_tui::keybindings::Keybindings;

use self::list::{ListEvent, SettingItem, SettingsList};
use self::submenu::{PickEvent, SelectSubmenu};
use self::theme_menu::{ThemeEvent, ThemeMenu};
use super::border;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// A model the per-model thinking submenu offers.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub provider: String,
    pub id: String,
    /// The levels it supports (`["off"]` without reasoning).
    pub levels: Vec<String>,
}

impl ModelChoice {
    fn key(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}

/// What the menu starts from besides its rows.
pub struct SettingsContext {
    pub models: Vec<ModelChoice>,
    pub current_model: Option<String>,
    pub default_model: Option<String>,
    pub overrides: BTreeMap<String, String>,
    /// `defaultThinkingLevel`, or pi's default `medium`.
    pub default_thinking: String,
    pub anthropic_extra_usage: bool,
    pub themes: Vec<String>,
    pub theme_setting: String,
    /// The terminal looks light (automatic themes pick their light half).
    pub light_terminal: bool,
}

/// What a key did, for the app to write and apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsEvent {
    None,
    Changed(&'static str, String),
    /// A model's thinking level override set, or cleared (`None`).
    ModelThinking(String, Option<String>),
    /// `warnings.anthropicExtraUsage`.
    Warnings(bool),
    /// Show this theme setting now without saving it.
    ThemePreview(String),
    Close,
}

const CLEAR_OVERRIDE: &str = "__clear__";
const MODEL_COLUMNS: (usize, usize) = (12, 46);

/// The submenu shown instead of the main list.
enum Submenu {
    Warnings(SettingsList),
    Model(SelectSubmenu),
    Level(SelectSubmenu, String),
    Theme(Box<ThemeMenu>),
}

pub struct SettingsSelector {
    list: SettingsList,
    submenu: Option<Submenu>,
    context: SettingsContext,
    theme: Theme,
}

impl SettingsSelector {
    pub fn new(items: Vec<SettingItem>, context: SettingsContext, theme: &Theme) -> Self {
        Self {
            list: SettingsList::new(items, 10, true),
            submenu: None,
            context,
            theme: theme.clone(),
        }
    }

    /// Restyles the menu (a theme preview).
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
    }

    /// Shows `value` on row `id` (a change the app refused).
    pub fn set_value(&mut self, id: &str, value: &str) {
        self.list.set_value(id, value);
    }

    /// What an event of the main list means.
    fn main_event(&mut self, event: ListEvent) -> SettingsEvent {
        match event {
            ListEvent::None => SettingsEvent::None,
            ListEvent::Changed(id, value) => SettingsEvent::Changed(id, value),
            ListEvent::Cancel => SettingsEvent::Close,
            ListEvent::Open(id) => {
                self.open(id);
                SettingsEvent::None
            }
        }
    }

    /// What an event of the warnings submenu means.
    fn warnings_event(&mut self, event: ListEvent) -> SettingsEvent {
        match event {
            ListEvent::Changed(_, value) => {
                self.context.anthropic_extra_usage = value == "true";
                SettingsEvent::Warnings(value == "true")
            }
            ListEvent::Cancel => {
                self.submenu = None;
                SettingsEvent::None
            }
            ListEvent::None | ListEvent::Open(_) => SettingsEvent::None,
        }
    }

    /// A click on line `row` of the menu as drawn (0 is its top border); the lists take
    /// clicks, the pickers of the submenus do not.
    pub fn click(&mut self, row: usize) -> SettingsEvent {
        let Some(row) = row.checked_sub(1) else {
            return SettingsEvent::None;
        };
        match self.submenu.as_mut() {
            None => {
                let event = self.list.click(row);
                self.main_event(event)
            }
            Some(Submenu::Warnings(list)) => {
                let event = list.click(row);
                self.warnings_event(event)
            }
            Some(_) => SettingsEvent::None,
        }
    }

    /// A wheel notch over the menu: the list's selection moves, stopping at the ends;
    /// false when no list is shown (a submenu's picker takes arrow keys instead).
    pub fn wheel(&mut self, direction: i8) -> bool {
        match self.submenu.as_mut() {
            None => {
                self.list.wheel(direction);
                true
            }
            Some(Submenu::Warnings(list)) => {
                list.wheel(direction);
                true
            }
            Some(_) => false,
        }
    }

    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> SettingsEvent {
        let Some(submenu) = self.submenu.as_mut() else {
            let event = self.list.handle(input, keys);
            return self.main_event(event);
        };
        match submenu {
            Submenu::Warnings(list) => {
                let event = list.handle(input, keys);
                self.warnings_event(event)
            }
            Submenu::Model(menu) => match menu.handle(input, keys, &self.theme) {
                PickEvent::Selected(key) if key != "__none__" => {
                    self.open_levels(&key);
                    SettingsEvent::None
                }
                PickEvent::Cancel => {
                    self.submenu = None;
                    let summary = items::overrides_summary(self.context.overrides.len());
                    self.list.set_value("model-thinking", summary);
                    SettingsEvent::None
                }
                _ => SettingsEvent::None,
            },
            Submenu::Level(menu, key) => match menu.handle(input, keys, &self.theme) {
                PickEvent::Selected(level) => {
                    let key = key.clone();
                    let level = (level != CLEAR_OVERRIDE).then_some(level);
                    match &level {
                        Some(level) => self.context.overrides.insert(key.clone(), level.clone()),
                        None => self.context.overrides.remove(&key),
                    };
                    self.submenu = Some(Submenu::Model(self.model_step()));
                    SettingsEvent::ModelThinking(key, level)
                }
                PickEvent::Cancel => {
                    self.submenu = Some(Submenu::Model(self.model_step()));
                    SettingsEvent::None
                }
                _ => SettingsEvent::None,
            },
            Submenu::Theme(menu) => match menu.handle(input, keys, &self.theme) {
                ThemeEvent::None => SettingsEvent::None,
                ThemeEvent::Preview(setting) => SettingsEvent::ThemePreview(setting),
                ThemeEvent::Done(setting) => {
                    self.submenu = None;
                    match setting {
                        Some(setting) => {
                            self.context.theme_setting = setting.clone();
                            self.list.set_value("theme", setting.clone());
                            SettingsEvent::Changed("theme", setting)
                        }
                        None => SettingsEvent::ThemePreview(self.context.theme_setting.clone()),
                    }
                }
            },
        }
    }

    fn open(&mut self, id: &str) {
        self.submenu = match id {
            "warnings" => {
                let item = SettingItem::cycle(
                    "anthropic-extra-usage",
                    "Anthropic extra usage",
                    "Warn when Anthropic subscription auth may use paid extra usage",
                    self.context.anthropic_extra_usage.to_string(),
                    &["true", "false"],
                );
                Some(Submenu::Warnings(SettingsList::new(vec![item], 1, false)))
            }
            "model-thinking" => Some(Submenu::Model(self.model_step())),
            "theme" => Some(Submenu::Theme(Box::new(ThemeMenu::new(
                &self.context.theme_setting,
                &self.context.themes,
                self.context.light_terminal,
                &self.theme,
            )))),
            _ => None,
        };
    }

    /// Step 1: the models, current first, then the default, then by provider.
    fn model_step(&self) -> SelectSubmenu {
        let ctx = &self.context;
        let mut models = ctx.models.clone();
        let rank = |m: &ModelChoice| {
            let key = m.key();
            if Some(&key) == ctx.current_model.as_ref() {
                0
            } else if Some(&key) == ctx.default_model.as_ref() {
                1
            } else {
                2
            }
        };
        models.sort_by(|a, b| {
            rank(a)
                .cmp(&rank(b))
                .then_with(|| a.provider.to_lowercase().cmp(&b.provider.to_lowercase()))
        });
        let muted = self.theme.fg(ThemeColor::Muted);
        let mut options: Vec<SelectItem> = models
            .iter()
            .map(|m| {
                let item = SelectItem::new(
                    m.key(),
                    format!("{} {}", m.id, muted.paint(&format!("[{}]", m.provider))),
                );
                match ctx.overrides.get(&m.key()) {
                    Some(level) => item.with_description(level.clone()),
                    None => item,
                }
            })
            .collect();
        if options.is_empty() {
            options.push(
                SelectItem::new("__none__", "No models available")
                    .with_description("Log in to a provider or configure an API key first"),
            );
        }
        let preselect = ctx
            .current_model
            .clone()
            .or_else(|| ctx.default_model.clone())
            .unwrap_or_default();
        SelectSubmenu::new(
            "Per-Model Thinking Level",
            "Step 1/2 · Select a model to configure",
            options,
            &preselect,
            true,
            MODEL_COLUMNS,
            &self.theme,
        )
    }

    /// Step 2: the levels of the chosen model.
    fn open_levels(&mut self, key: &str) {
        let Some(model) = self.context.models.iter().find(|m| m.key() == key) else {
            return;
        };
        let active = self.context.overrides.get(key);
        let mut options: Vec<SelectItem> = model
            .levels
            .iter()
            .map(|level| {
                let mark = if Some(level) == active { "✓ " } else { "  " };
                SelectItem::new(level.clone(), format!("{mark}{level}"))
                    .with_description(level_description(level))
            })
            .collect();
        if active.is_some() {
            options.push(
                SelectItem::new(CLEAR_OVERRIDE, "  (clear override)").with_description(format!(
                    "Revert to global default ({})",
                    self.context.default_thinking
                )),
            );
        }
        let title = format!("Thinking Level for {} [{}]", model.id, model.provider);
        let menu = SelectSubmenu::new(
            title,
            "Step 2/2 · Select default thinking level for this model",
            options,
            active.map_or("", String::as_str),
            false,
            submenu::SUBMENU_COLUMNS,
            &self.theme,
        );
        self.submenu = Some(Submenu::Level(menu, key.to_owned()));
    }

    pub fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![border(&self.theme, width)];
        match self.submenu.as_mut() {
            None => lines.extend(self.list.render(&self.theme, width)),
            Some(Submenu::Warnings(list)) => lines.extend(list.render(&self.theme, width)),
            Some(Submenu::Model(menu) | Submenu::Level(menu, _)) => {
                lines.extend(menu.render(&self.theme, width));
            }
            Some(Submenu::Theme(menu)) => lines.extend(menu.render(&self.theme, width)),
        }
        lines.push(border(&self.theme, width));
        lines
            .into_iter()
            .map(|l| pi_tui::width::truncate_to_width(&l, width, "", false))
            .collect()
    }
}

/// pi 1.6's description of a thinking level in `/settings`.
fn level_description(level: &str) -> &'static str {
    match level {
        "xhigh" => "Extra-high reasoning (~32k tokens)",
        "max" => "Maximum reasoning",
        other => super::thinking::level_description(other),
    }
}
