//! Where frames go: the inline renderer (regular mode, the terminal's own scrollback) or
//! the alternate-screen renderer (fullscreen mode, pi 1.6's default).

use pi_tui::renderer::Renderer;
use pi_tui::screen::ScreenRenderer;
use pi_tui::terminal::CrosstermTerminal;

pub(crate) enum Display {
    Inline(Renderer<CrosstermTerminal>),
    Screen(ScreenRenderer<CrosstermTerminal>),
}

impl Display {
    pub(crate) fn terminal(&self) -> &CrosstermTerminal {
        match self {
            Display::Inline(r) => r.terminal(),
            Display::Screen(s) => s.terminal(),
        }
    }

    pub(crate) fn terminal_mut(&mut self) -> &mut CrosstermTerminal {
        match self {
            Display::Inline(r) => r.terminal_mut(),
            Display::Screen(s) => s.terminal_mut(),
        }
    }

    pub(crate) fn request_full_redraw(&mut self) {
        match self {
            Display::Inline(r) => r.request_full_redraw(),
            Display::Screen(s) => s.request_full_redraw(),
        }
    }

    /// Draws a frame: the whole document inline, or exactly one screen.
    pub(crate) fn render(&mut self, lines: Vec<String>) -> std::io::Result<()> {
        match self {
            Display::Inline(r) => r.render(lines),
            Display::Screen(s) => s.render(lines),
        }
    }

    /// Hands the screen back: inline, the cursor goes below the content; fullscreen, the
    /// alternate screen is left with mouse reporting off.
    pub(crate) fn stop(&mut self) -> std::io::Result<()> {
        match self {
            Display::Inline(r) => r.stop(),
            Display::Screen(s) => s.leave(),
        }
    }

    /// Takes the screen again after [`Display::stop`] (fullscreen re-enters the alternate
    /// screen; inline simply redraws).
    pub(crate) fn resume(&mut self) -> std::io::Result<()> {
        match self {
            Display::Inline(r) => {
                r.request_full_redraw();
                Ok(())
            }
            Display::Screen(s) => s.enter(),
        }
    }
}
