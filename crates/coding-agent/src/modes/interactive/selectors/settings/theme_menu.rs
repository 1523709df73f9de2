//! The Theme submenu of `/settings`: one theme, or automatic (a light and a dark theme
//! chosen by the terminal's appearance), previewed while the selection moves.

use pi_tui::Input;
use pi_tui::components::select_list::SelectItem;
use pi_tui::keybindings::Keybindings;

use super::list::{ListEvent, SettingItem, SettingsList};
use super::submenu::{PickEvent, SUBMENU_COLUMNS, SelectSubmenu};
use crate::modes::interactive::theme::parse_auto_theme;
use crate::modes::interactive::theme::{Theme, ThemeColor};

const AUTOMATIC: &str = "/";
const SYSTEM: &str = "system";

/// What a key did in the Theme submenu.
pub enum ThemeEvent {
    None,
    Preview(String),
    /// Closed: saved with this setting, or cancelled (`None`).
    Done(Option<String>),
}

#[derive(Clone, Copy)]
enum Side {
    Light,
    Dark,
}

enum View {
    Single(SelectSubmenu),
    Automatic(SettingsList),
    Pick(Side, SelectSubmenu, SettingsList),
}

pub struct ThemeMenu {
    themes: Vec<String>,
    light_terminal: bool,
    single: String,
    light: String,
    dark: String,
    view: Option<View>,
}

fn preferred(themes: &[String], wanted: Option<&str>) -> String {
    match wanted {
        Some(w) if themes.iter().any(|t| t == w) => w.to_owned(),
        _ if themes.iter().any(|t| t == SYSTEM) => SYSTEM.to_owned(),
        _ => themes.first().cloned().unwrap_or_else(|| "dark".to_owned()),
    }
}

fn theme_items(themes: &[String], current: &str) -> Vec<SelectItem> {
    themes
        .iter()
        .map(|name| {
            let mark = if name == current { "✓ " } else { "  " };
            let item = SelectItem::new(name.clone(), format!("{mark}{name}"));
            if name == SYSTEM {
                item.with_description("Theme created from your terminal's colors")
            } else {
                item
            }
        })
        .collect()
}

impl ThemeMenu {
    pub fn new(setting: &str, themes: &[String], light_terminal: bool, theme: &Theme) -> Self {
        let auto = parse_auto_theme(setting);
        let fixed = (auto.is_none() && !setting.contains('/')).then_some(setting);
        let (light, dark) = match auto {
            Some((l, d)) => (l.to_owned(), d.to_owned()),
            None => {
                let t = preferred(themes, fixed);
                (t.clone(), t)
            }
        };
        let mut menu = Self {
            themes: themes.to_vec(),
            light_terminal,
            single: String::new(),
            light,
            dark,
            view: None,
        };
        let active = menu.active_automatic().to_owned();
        menu.single = preferred(themes, fixed.or(auto.is_some().then_some(active.as_str())));
        if auto.is_some() {
            menu.show_automatic();
        } else {
            menu.show_single(theme);
        }
        menu
    }

    fn active_automatic(&self) -> &str {
        if self.light_terminal {
            &self.light
        } else {
            &self.dark
        }
    }

    fn automatic_setting(&self) -> String {
        format!("{}/{}", self.light, self.dark)
    }

    fn show_single(&mut self, theme: &Theme) {
        let mut items = theme_items(&self.themes, &self.single);
        let system = items
            .iter()
            .position(|i| i.value == SYSTEM)
            .map(|i| items.remove(i));
        let automatic = SelectItem::new(AUTOMATIC, "  automatic")
            .with_description("Use separate themes for light and dark terminal appearance");
        let ordered: Vec<SelectItem> = system
            .into_iter()
            .chain(std::iter::once(automatic))
            .chain(items)
            .collect();
        self.view = Some(View::Single(SelectSubmenu::new(
            "Theme",
            "Select a theme, or choose automatic to follow terminal appearance.",
            ordered,
            &self.single,
            false,
            SUBMENU_COLUMNS,
            theme,
        )));
    }

    fn automatic_list(&self) -> SettingsList {
        let items = vec![
            SettingItem::submenu(
                "light-theme",
                "Light theme",
                "Theme to use in automatic mode when the terminal is light",
                self.light.clone(),
            ),
            SettingItem::submenu(
                "dark-theme",
                "Dark theme",
                "Theme to use in automatic mode when the terminal is dark",
                self.dark.clone(),
            ),
            SettingItem::cycle(
                "apply",
                "Apply",
                "Save and go back",
                "save and go back",
                &["save and go back"],
            ),
            SettingItem::cycle(
                "single-mode",
                "Change mode",
                "Switch to one theme for light and dark",
                "switch to single theme",
                &["switch to single theme"],
            ),
        ];
        SettingsList::new(items, 4, false)
    }

    fn show_automatic(&mut self) {
        self.view = Some(View::Automatic(self.automatic_list()));
    }

    pub fn handle(&mut self, input: &Input, keys: &Keybindings, theme: &Theme) -> ThemeEvent {
        let Some(view) = self.view.take() else {
            return ThemeEvent::None;
        };
        match view {
            View::Single(mut menu) => match menu.handle(input, keys, theme) {
                PickEvent::Moved(value) => {
                    self.view = Some(View::Single(menu));
                    ThemeEvent::Preview(if value == AUTOMATIC {
                        self.automatic_setting()
                    } else {
                        value
                    })
                }
                PickEvent::Selected(value) if value == AUTOMATIC => {
                    self.show_automatic();
                    ThemeEvent::Preview(self.automatic_setting())
                }
                PickEvent::Selected(value) => ThemeEvent::Done(Some(value)),
                PickEvent::Cancel => ThemeEvent::Done(None),
                PickEvent::None => {
                    self.view = Some(View::Single(menu));
                    ThemeEvent::None
                }
            },
            View::Automatic(mut list) => match list.handle(input, keys) {
                ListEvent::Changed("apply", _) => ThemeEvent::Done(Some(self.automatic_setting())),
                ListEvent::Changed("single-mode", _) => {
                    self.single = self.active_automatic().to_owned();
                    self.show_single(theme);
                    ThemeEvent::Preview(self.single.clone())
                }
                ListEvent::Open(id) => {
                    let (side, title, description, current) = if id == "light-theme" {
                        (
                            Side::Light,
                            "Light Theme",
                            "Select the theme to use for light terminal appearance",
                            self.light.clone(),
                        )
                    } else {
                        (
                            Side::Dark,
                            "Dark Theme",
                            "Select the theme to use for dark terminal appearance",
                            self.dark.clone(),
                        )
                    };
                    let menu = SelectSubmenu::new(
                        title,
                        description,
                        theme_items(&self.themes, &current),
                        &current,
                        false,
                        SUBMENU_COLUMNS,
                        theme,
                    );
                    self.view = Some(View::Pick(side, menu, list));
                    ThemeEvent::None
                }
                ListEvent::Cancel => ThemeEvent::Done(None),
                ListEvent::Changed(..) | ListEvent::None => {
                    self.view = Some(View::Automatic(list));
                    ThemeEvent::None
                }
            },
            View::Pick(side, mut menu, mut list) => match menu.handle(input, keys, theme) {
                PickEvent::Moved(value) => {
                    self.view = Some(View::Pick(side, menu, list));
                    ThemeEvent::Preview(value)
                }
                PickEvent::Selected(value) => {
                    match side {
                        Side::Light => {
                            self.light = value.clone();
                            list.set_value("light-theme", value);
                        }
                        Side::Dark => {
                            self.dark = value.clone();
                            list.set_value("dark-theme", value);
                        }
                    }
                    self.view = Some(View::Automatic(list));
                    ThemeEvent::Preview(self.automatic_setting())
                }
                PickEvent::Cancel => {
                    self.view = Some(View::Automatic(list));
                    ThemeEvent::Preview(self.automatic_setting())
                }
                PickEvent::None => {
                    self.view = Some(View::Pick(side, menu, list));
                    ThemeEvent::None
                }
            },
        }
    }

    pub fn render(&mut self, theme: &Theme, width: usize) -> Vec<String> {
        match self.view.as_mut() {
            Some(View::Single(menu) | View::Pick(_, menu, _)) => menu.render(theme, width),
            Some(View::Automatic(list)) => {
                let muted = theme.fg(ThemeColor::Muted);
                let mut lines = vec![
                    theme.fg(ThemeColor::Accent).bold().paint("Automatic Theme"),
                    String::new(),
                    muted.paint("Choose themes for terminal light and dark appearance."),
                    muted.paint("Light/dark detection requires terminal support."),
                    String::new(),
                ];
                lines.extend(list.render(theme, width));
                lines
            }
            None => Vec::new(),
        }
    }
}
