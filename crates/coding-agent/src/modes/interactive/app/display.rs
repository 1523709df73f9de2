//! Where frames go: the inline renderer (regular mode, the terminal's own scrollback) or
//! the alternate-screen renderer (fullscreen mode, pi 1.6's default).

use pi_tui::renderer::Renderer;
use pi_tui::screen::ScreenRenderer;
use pi_tui::terminal::CrosstermTerminal;

pub(crate) enum Display {
    Inline(Renderer<CrosstermTerminal>),
    /// The alternate screen, and the inline renderer it replaced (its record of the main
    /// screen lets a switch back to regular mode go on drawing in place).
    Screen(
        ScreenRenderer<CrosstermTerminal>,
        Option<Box<Renderer<CrosstermTerminal>>>,
    ),
}

impl Display {
    pub(crate) fn terminal(&self) -> &CrosstermTerminal {
        match self {
            Display::Inline(r) => r.terminal(),
            Display::Screen(s, _) => s.terminal(),
        }
    }

    pub(crate) fn terminal_mut(&mut self) -> &mut CrosstermTerminal {
        match self {
            Display::Inline(r) => r.terminal_mut(),
            Display::Screen(s, _) => s.terminal_mut(),
        }
    }

    pub(crate) fn request_full_redraw(&mut self) {
        match self {
            Display::Inline(r) => r.request_full_redraw(),
            Display::Screen(s, _) => s.request_full_redraw(),
        }
    }

    /// Draws a frame: the whole document inline, or exactly one screen.
    pub(crate) fn render(&mut self, lines: Vec<String>) -> std::io::Result<()> {
        match self {
            Display::Inline(r) => r.render(lines),
            Display::Screen(s, _) => s.render(lines),
        }
    }

    /// Hands the screen back: inline, the cursor goes below the content; fullscreen, the
    /// alternate screen is left with mouse reporting off.
    pub(crate) fn stop(&mut self) -> std::io::Result<()> {
        match self {
            Display::Inline(r) => r.stop(),
            Display::Screen(s, _) => s.leave(),
        }
    }

    /// Whether frames go to the alternate screen.
    pub(crate) fn is_fullscreen(&self) -> bool {
        matches!(self, Display::Screen(..))
    }

    /// Changes layout at run time (pi 1.6's `/settings` → TUI mode). The one started
    /// terminal moves to the new renderer; leaving fullscreen returns to the inline
    /// renderer that drew the main screen before, when there was one.
    pub(crate) fn switch(&mut self, fullscreen: bool) -> std::io::Result<()> {
        if self.is_fullscreen() == fullscreen {
            return Ok(());
        }
        let idle = Display::Inline(Renderer::new(CrosstermTerminal::new()));
        let (next, result) = match std::mem::replace(self, idle) {
            Display::Inline(mut inline) => {
                let mut screen = ScreenRenderer::new(CrosstermTerminal::new());
                std::mem::swap(inline.terminal_mut(), screen.terminal_mut());
                let result = screen.enter();
                (Display::Screen(screen, Some(Box::new(inline))), result)
            }
            Display::Screen(mut screen, stashed) => {
                let result = screen.leave();
                let mut inline =
                    stashed.unwrap_or_else(|| Box::new(Renderer::new(CrosstermTerminal::new())));
                std::mem::swap(inline.terminal_mut(), screen.terminal_mut());
                (Display::Inline(*inline), result)
            }
        };
        *self = next;
        result
    }

    /// Takes the screen again after [`Display::stop`] (fullscreen re-enters the alternate
    /// screen; inline simply redraws).
    pub(crate) fn resume(&mut self) -> std::io::Result<()> {
        match self {
            Display::Inline(r) => {
                r.request_full_redraw();
                Ok(())
            }
            Display::Screen(s, _) => s.enter(),
        }
    }
}
