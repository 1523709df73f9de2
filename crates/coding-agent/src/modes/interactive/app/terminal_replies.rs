//! The terminal's replies while pi reads keys, as pi 1.6's theme controller takes them:
//! colors that came after the startup wait or were asked again, and the light/dark switch
//! reports of mode 2031, which rebuild the system theme (or pick a pair's other half).

use pi_tui::input_parser::{ColorScheme, Reply};
use pi_tui::terminal::Terminal as _;
use pi_tui::terminal_colors::TerminalColors;

use super::App;
use crate::modes::interactive::theme::{self, system};

impl App {
    pub(super) fn on_terminal_reply(&mut self, reply: Reply) {
        match reply {
            Reply::Osc(body) => self.color_replies.osc(&body),
            // DA1 closes a query: what came with it applies.
            Reply::DeviceAttributes if self.color_replies.has_colors() => {
                let colors = self.color_replies.take();
                self.apply_terminal_colors(colors);
            }
            Reply::ColorScheme(scheme) => self.on_color_scheme(scheme),
            Reply::DeviceAttributes | Reply::KeyboardFlags(_) | Reply::Other(_) => {}
        }
    }

    /// The theme setting in force: `--use-theme`, else the `theme` setting.
    fn theme_setting(&self) -> Option<String> {
        self.use_theme
            .clone()
            .or_else(|| self.session.settings().get().theme)
    }

    /// Whether the theme follows the terminal: the system theme, or a `light/dark` pair.
    fn theme_follows_terminal(&self) -> bool {
        match self.theme_setting() {
            None => true,
            Some(setting) => {
                setting == system::SYSTEM_THEME_NAME || theme::parse_auto_theme(&setting).is_some()
            }
        }
    }

    /// Turns the terminal's light/dark reports on while the theme follows the terminal
    /// (pi 1.6's auto sync), off otherwise.
    pub(crate) fn sync_color_scheme_reports(&mut self) {
        let on = self.theme_follows_terminal();
        let _ = self.renderer.terminal_mut().set_color_scheme_reports(on);
    }

    /// Records reported colors (a color not reported keeps the last one) and restyles
    /// when they changed.
    fn apply_terminal_colors(&mut self, reported: TerminalColors) {
        let previous = system::terminal_colors();
        let next = TerminalColors {
            foreground: reported.foreground.or(previous.foreground),
            background: reported.background.or(previous.background),
            palette: reported.palette.or_else(|| previous.palette.clone()),
        };
        if next == previous {
            return;
        }
        system::set_terminal_colors(next);
        self.reapply_theme_for_terminal();
    }

    /// The terminal switched between light and dark: its colors changed too, so they are
    /// asked again; the report itself decides only where no background is reported.
    fn on_color_scheme(&mut self, scheme: ColorScheme) {
        if !self.theme_follows_terminal() {
            return;
        }
        let before = system::terminal_appearance_now();
        system::set_reported_appearance(Some(match scheme {
            ColorScheme::Dark => system::Appearance::Dark,
            ColorScheme::Light => system::Appearance::Light,
        }));
        if system::terminal_appearance_now() != before {
            self.reapply_theme_for_terminal();
        }
        let query = pi_tui::terminal_colors::color_query_text();
        let terminal = self.renderer.terminal_mut();
        let _ = terminal.write(&query).and_then(|()| terminal.flush());
    }

    /// Loads the theme again for the terminal as it is now: the system theme regenerated,
    /// or the half of a `light/dark` pair that fits.
    fn reapply_theme_for_terminal(&mut self) {
        if !self.theme_follows_terminal() {
            return;
        }
        let (theme, warnings) = theme::load_theme(
            self.theme_setting().as_deref(),
            &self.agent_dir,
            self.session.cwd(),
            &self.theme_sources(),
        );
        if !warnings.is_empty() {
            return;
        }
        self.set_theme(theme);
        if let Some(super::Overlay::Settings(menu)) = self.overlay.as_mut() {
            menu.set_theme(&self.theme);
        }
    }
}
