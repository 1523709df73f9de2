//! `/debug` (hidden, as in pi): writes every rendered line with its visible width and the
//! agent's messages to `<agentDir>/pi-debug.log`, for reports of drawing bugs.

use pi_tui::width::visible_width;

use super::App;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::theme::ThemeColor;

impl App {
    pub(super) fn write_debug_log(&mut self) {
        let (width, height) = pi_tui::terminal::Terminal::size(self.renderer.terminal());
        let width = width.max(1);
        let mut lines = self.chat.render(width);
        lines.extend(self.dock_lines(width));
        let mut out = vec![
            format!("Debug output at {}", crate::session::time::iso_now()),
            format!("Terminal: {width}x{height}"),
            format!("Total lines: {}", lines.len()),
            String::new(),
            "=== All rendered lines with visible widths ===".to_owned(),
        ];
        for (index, line) in lines.iter().enumerate() {
            let escaped = serde_json::to_string(line).unwrap_or_default();
            out.push(format!("[{index}] (w={}) {escaped}", visible_width(line)));
        }
        out.push(String::new());
        out.push("=== Agent messages (JSONL) ===".to_owned());
        for message in self.session.messages() {
            out.push(serde_json::to_string(&message).unwrap_or_default());
        }
        out.push(String::new());
        let path = self.agent_dir.join("pi-debug.log");
        let written = std::fs::create_dir_all(&self.agent_dir)
            .and_then(|()| std::fs::write(&path, out.join("\n")));
        if let Err(e) = written {
            self.notice(
                NoticeKind::Error,
                &format!("Failed to write debug log: {e}"),
            );
            return;
        }
        let text = format!(
            "{}\n{}",
            self.theme
                .fg(ThemeColor::Accent)
                .paint("✓ Debug log written"),
            self.theme
                .fg(ThemeColor::Muted)
                .paint(&path.display().to_string())
        );
        self.chat.add_padded_text(&text);
    }
}
