//! `/scoped-models`: turn models on and off for Ctrl+P cycling, as pi 1.6's selector does.
//! Changes apply to the session at once; Ctrl+S saves them as `enabledModels`.

use pi_tui::keybindings::Keybindings;
use pi_tui::width::truncate_to_width;
use pi_tui::{Input, KeyCode, KeyModifiers};

use super::border;
use super::hotkeys::key_display;
use crate::modes::interactive::extension_ui::line_input::LineInput;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// A model the selector lists.
#[derive(Debug, Clone)]
pub struct ScopeModel {
    pub provider: String,
    pub id: String,
    pub name: String,
}

impl ScopeModel {
    fn full_id(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeEvent {
    None,
    /// The enabled set changed (`None`: every model).
    Changed(Option<Vec<String>>),
    /// Ctrl+S: save this set.
    Save(Option<Vec<String>>),
    Close,
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The name when it has words the id lacks (pi 1.6's `getDistinctModelName`).
pub fn distinct_name(id: &str, name: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let id_words = words(id);
    let compact: String = id_words.concat();
    let covered = |w: &String| {
        id_words.contains(w) || (w.chars().count() > 1 && compact.contains(w.as_str()))
    };
    (!words(name).iter().all(covered)).then(|| name.to_owned())
}

pub struct ScopedModelsSelector {
    models: Vec<ScopeModel>,
    all_ids: Vec<String>,
    /// `None`: every model enabled; else the enabled ids in cycling order.
    enabled: Option<Vec<String>>,
    /// Indices into the display order (`sorted_ids`) that pass the search.
    shown: Vec<String>,
    selected: usize,
    search: LineInput,
    dirty: bool,
    theme: Theme,
    /// Key texts for the title and footer hints.
    keys_text: Vec<(&'static str, String)>,
    refresh_status: Option<(ThemeColor, String)>,
}

const MAX_VISIBLE: usize = 8;

impl ScopedModelsSelector {
    pub fn new(
        models: Vec<ScopeModel>,
        enabled: Option<Vec<String>>,
        theme: &Theme,
        keys: &Keybindings,
    ) -> Self {
        let all_ids = models.iter().map(ScopeModel::full_id).collect();
        let keys_text = [
            "app.models.save",
            "tui.select.confirm",
            "app.models.enableAll",
            "app.models.clearAll",
            "app.models.toggleProvider",
            "app.models.reorderUp",
            "app.models.reorderDown",
        ]
        .into_iter()
        .map(|id| (id, key_display(&keys.keys(id))))
        .collect();
        let mut search = LineInput::new();
        search.set_focused(true);
        let mut selector = Self {
            models,
            all_ids,
            enabled,
            shown: Vec::new(),
            selected: 0,
            search,
            dirty: false,
            theme: theme.clone(),
            keys_text,
            refresh_status: None,
        };
        selector.refresh();
        selector
    }

    /// The catalog refresh's line under the list.
    pub fn set_refresh_status(&mut self, color: ThemeColor, text: &str) {
        self.refresh_status = Some((color, text.to_owned()));
    }

    fn key(&self, id: &str) -> &str {
        self.keys_text
            .iter()
            .find(|(k, _)| *k == id)
            .map_or("", |(_, t)| t.as_str())
    }

    fn model(&self, full_id: &str) -> Option<&ScopeModel> {
        self.models.iter().find(|m| m.full_id() == full_id)
    }

    fn is_enabled(&self, id: &str) -> bool {
        self.enabled
            .as_ref()
            .is_none_or(|list| list.iter().any(|e| e == id))
    }

    /// Enabled ids in their order, then the rest in catalog order.
    fn sorted_ids(&self) -> Vec<String> {
        match &self.enabled {
            None => self.all_ids.clone(),
            Some(list) => list
                .iter()
                .cloned()
                .chain(self.all_ids.iter().filter(|id| !list.contains(id)).cloned())
                .collect(),
        }
    }

    /// A list covering every model collapses back to "all enabled".
    fn normalized(&self, list: Vec<String>) -> Option<Vec<String>> {
        let all =
            list.len() == self.all_ids.len() && list.iter().all(|id| self.all_ids.contains(id));
        (!all).then_some(list)
    }

    fn refresh(&mut self) {
        let query = self.search.value().to_owned();
        let ids = self.sorted_ids();
        self.shown = if query.trim().is_empty() {
            ids
        } else {
            let keyed: Vec<(String, String)> = ids
                .into_iter()
                .map(|id| {
                    let text = match self.model(&id) {
                        Some(m) => format!(
                            "{} {} {}/{} {} {} {}",
                            m.id, m.provider, m.provider, m.id, m.provider, m.id, m.name
                        ),
                        None => id.clone(),
                    };
                    (id, text)
                })
                .collect();
            let refs: Vec<(&String, &str)> = keyed.iter().map(|(id, t)| (id, t.as_str())).collect();
            pi_tui::fuzzy::fuzzy_filter(refs, &query, |(_, t)| t)
                .into_iter()
                .map(|(id, _)| id.clone())
                .collect()
        };
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    fn changed(&mut self, enabled: Option<Vec<String>>) -> ScopeEvent {
        self.enabled = enabled;
        self.dirty = true;
        self.refresh();
        ScopeEvent::Changed(self.enabled.clone())
    }

    fn targets(&self) -> Option<Vec<String>> {
        (!self.search.value().is_empty()).then(|| self.shown.clone())
    }

    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> ScopeEvent {
        let len = self.shown.len();
        let current = self.shown.get(self.selected).cloned();
        if keys.matches(input, "tui.select.up") {
            if len > 0 {
                self.selected = if self.selected == 0 {
                    len - 1
                } else {
                    self.selected - 1
                };
            }
        } else if keys.matches(input, "tui.select.down") {
            if len > 0 {
                self.selected = if self.selected + 1 >= len {
                    0
                } else {
                    self.selected + 1
                };
            }
        } else if keys.matches(input, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if keys.matches(input, "tui.select.pageDown") {
            if len > 0 {
                self.selected = (self.selected + MAX_VISIBLE).min(len - 1);
            }
        } else if keys.matches(input, "app.models.reorderUp")
            || keys.matches(input, "app.models.reorderDown")
        {
            let up = keys.matches(input, "app.models.reorderUp");
            let (Some(list), Some(id)) = (self.enabled.clone(), current) else {
                return ScopeEvent::None;
            };
            let Some(index) = list.iter().position(|e| *e == id) else {
                return ScopeEvent::None;
            };
            let target = if up {
                index.checked_sub(1)
            } else {
                Some(index + 1)
            };
            let Some(target) = target.filter(|t| *t < list.len()) else {
                return ScopeEvent::None;
            };
            let mut list = list;
            list.swap(index, target);
            if up {
                self.selected = self.selected.saturating_sub(1);
            } else {
                self.selected += 1;
            }
            return self.changed(Some(list));
        } else if keys.matches(input, "tui.select.confirm") {
            let Some(id) = current else {
                return ScopeEvent::None;
            };
            let next = match self.enabled.clone() {
                None => Some(self.all_ids.iter().filter(|e| **e != id).cloned().collect()),
                Some(list) if list.contains(&id) => {
                    Some(list.into_iter().filter(|e| *e != id).collect())
                }
                Some(mut list) => {
                    list.push(id);
                    self.normalized(list)
                }
            };
            return self.changed(next);
        } else if keys.matches(input, "app.models.enableAll") {
            let next = self.enable_all(self.targets());
            return self.changed(next);
        } else if keys.matches(input, "app.models.clearAll") {
            let next = self.clear_all(self.targets());
            return self.changed(next);
        } else if keys.matches(input, "app.models.toggleProvider") {
            let Some(provider) = current
                .as_deref()
                .and_then(|id| self.model(id))
                .map(|m| m.provider.clone())
            else {
                return ScopeEvent::None;
            };
            let ids: Vec<String> = self
                .models
                .iter()
                .filter(|m| m.provider == provider)
                .map(ScopeModel::full_id)
                .collect();
            let next = if ids.iter().all(|id| self.is_enabled(id)) {
                self.clear_all(Some(ids))
            } else {
                self.enable_all(Some(ids))
            };
            return self.changed(next);
        } else if keys.matches(input, "app.models.save") {
            self.dirty = false;
            return ScopeEvent::Save(self.enabled.clone());
        } else if matches!(input, Input::Key(k) if k.code == KeyCode::Char('c') && k.modifiers == KeyModifiers::CONTROL)
        {
            if self.search.value().is_empty() {
                return ScopeEvent::Close;
            }
            self.search = LineInput::new();
            self.search.set_focused(true);
            self.refresh();
        } else if matches!(input, Input::Key(k) if k.code == KeyCode::Esc) {
            return ScopeEvent::Close;
        } else {
            let before = self.search.value().to_owned();
            self.search.handle(input);
            if self.search.value() != before {
                if !self.search.value().is_empty() {
                    self.selected = 0;
                }
                self.refresh();
            }
        }
        ScopeEvent::None
    }

    fn enable_all(&self, targets: Option<Vec<String>>) -> Option<Vec<String>> {
        let mut list = self.enabled.clone()?;
        for id in targets.unwrap_or_else(|| self.all_ids.clone()) {
            if !list.contains(&id) {
                list.push(id);
            }
        }
        self.normalized(list)
    }

    fn clear_all(&self, targets: Option<Vec<String>>) -> Option<Vec<String>> {
        match &self.enabled {
            None => Some(match targets {
                Some(t) => self
                    .all_ids
                    .iter()
                    .filter(|id| !t.contains(id))
                    .cloned()
                    .collect(),
                None => Vec::new(),
            }),
            Some(list) => {
                let targets = targets.unwrap_or_else(|| list.clone());
                Some(
                    list.iter()
                        .filter(|id| !targets.contains(id))
                        .cloned()
                        .collect(),
                )
            }
        }
    }

    fn footer(&self) -> String {
        let t = &self.theme;
        let available = |id: &String| self.model(id).is_some();
        let count = match &self.enabled {
            None => "all enabled".to_owned(),
            Some(list) => {
                let on = list.iter().filter(|id| available(id)).count();
                let gone = list.len() - on;
                let gone = if gone > 0 {
                    format!(" · {gone} unavailable")
                } else {
                    String::new()
                };
                format!("{on}/{} enabled{gone}", self.all_ids.len())
            }
        };
        let parts = [
            format!("{} toggle", self.key("tui.select.confirm")),
            format!("{} all", self.key("app.models.enableAll")),
            format!("{} clear", self.key("app.models.clearAll")),
            format!("{} provider", self.key("app.models.toggleProvider")),
            format!(
                "{}/{} reorder",
                self.key("app.models.reorderUp"),
                self.key("app.models.reorderDown")
            ),
            format!("{} save", self.key("app.models.save")),
            count,
        ];
        let dim = t.fg(ThemeColor::Dim);
        if self.dirty {
            format!(
                "{}{}",
                dim.paint(&format!("  {} ", parts.join(" · "))),
                t.fg(ThemeColor::Warning).paint("(unsaved)")
            )
        } else {
            dim.paint(&format!("  {}", parts.join(" · ")))
        }
    }

    pub fn render(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let accent = t.fg(ThemeColor::Accent);
        let muted = t.fg(ThemeColor::Muted);
        let mut lines = vec![
            border(t, width),
            String::new(),
            accent.bold().paint("Model Configuration"),
            muted.paint(&format!(
                "Session-only. {} to save to settings.",
                self.key("app.models.save")
            )),
            String::new(),
        ];
        lines.extend(self.search.render(width));
        lines.push(String::new());
        if self.shown.is_empty() {
            lines.push(muted.paint("  No matching models"));
        } else {
            let len = self.shown.len();
            let start = self
                .selected
                .saturating_sub(MAX_VISIBLE / 2)
                .min(len.saturating_sub(MAX_VISIBLE));
            let end = (start + MAX_VISIBLE).min(len);
            for (i, id) in self.shown.iter().enumerate().take(end).skip(start) {
                let selected = i == self.selected;
                let model = self.model(id);
                let prefix = if selected {
                    accent.paint("→ ")
                } else {
                    "  ".to_owned()
                };
                let shown_id = model.map_or(id.clone(), |m| m.id.clone());
                let styled = if model.is_some() {
                    shown_id
                } else {
                    pi_tui::Style::plain().strikethrough().paint(&shown_id)
                };
                let styled = if selected {
                    accent.paint(&styled)
                } else {
                    styled
                };
                let name = model
                    .and_then(|m| distinct_name(&m.id, &m.name))
                    .map(|n| muted.paint(&format!(" ({n})")))
                    .unwrap_or_default();
                let badge = muted.paint(&match model {
                    Some(m) => format!(" [{}]", m.provider),
                    None => " [unavailable]".to_owned(),
                });
                let status = if model.is_some() && self.is_enabled(id) {
                    accent.paint("✓ ")
                } else {
                    "  ".to_owned()
                };
                lines.push(format!("{prefix}{status}{styled}{name}{badge}"));
            }
            if start > 0 || end < len {
                lines.push(muted.paint(&format!("  ({}/{len})", self.selected + 1)));
            }
            lines.push(String::new());
            let about = match self.shown.get(self.selected).and_then(|id| self.model(id)) {
                Some(m) => format!("  Model Name: {}", m.name),
                None => "  Model unavailable".to_owned(),
            };
            lines.push(muted.paint(&about));
        }
        lines.push(String::new());
        if let Some((color, text)) = &self.refresh_status {
            lines.push(t.fg(*color).paint(&format!("  {text}")));
        }
        lines.extend(pi_tui::width::wrap_text_with_ansi(&self.footer(), width));
        lines.push(border(t, width));
        lines
            .into_iter()
            .map(|l| truncate_to_width(&l, width, "", false))
            .collect()
    }
}
