//! A tool call and its result in a box colored pending, success or error; what is drawn
//! inside depends on the tool.

use std::time::Instant;

use pi_agent_core::AgentToolResult;
use pi_ai::InputBlock;
use pi_ai::ToolResultMessage;
use pi_tui::Component;
use pi_tui::components::image::{Image, ImageOptions};
use serde_json::Value;

use super::tool_render::{ResultData, ToolView, render_tool, text_output};
use super::{LineCache, boxed, inner_width, paint, text_lines};
use crate::modes::interactive::extension_ui::tool_renderer::{ExtToolRender, ToolRenderState};
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};

/// One tool call: its arguments (possibly still streaming), live output and result.
pub struct ToolExecution {
    theme: Theme,
    tool_name: String,
    call_id: String,
    args: Value,
    args_complete: bool,
    started_at: Option<Instant>,
    ended_at: Option<Instant>,
    result: Option<ResultData>,
    is_partial: bool,
    is_error: bool,
    expanded: bool,
    cache: LineCache,
    /// The extension's `renderCall` / `renderResult`, when the tool has them.
    ext: Option<ExtToolRender>,
    images: ImageDisplay,
    /// The result's images drawn inline, by their data, kind and width.
    image_views: Vec<(ImageSource, Image)>,
}

/// Whether results show their images inline and how wide (`terminal.showImages`,
/// `terminal.imageWidthCells`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageDisplay {
    pub show: bool,
    pub width_cells: u32,
}

impl Default for ImageDisplay {
    fn default() -> Self {
        ImageDisplay {
            show: true,
            width_cells: 60,
        }
    }
}

impl ImageDisplay {
    /// The display the settings ask for.
    pub fn from_store(store: &crate::config::settings_store::SettingsStore) -> Self {
        let show = store
            .value(&["terminal", "showImages"])
            .and_then(|v| v.as_bool())
            .unwrap_or(true);
        let width_cells = store
            .value(&["terminal", "imageWidthCells"])
            .and_then(|v| v.as_f64())
            .filter(|n| n.is_finite())
            .map_or(60, |n| n.floor().clamp(1.0, f64::from(u32::MAX)) as u32);
        ImageDisplay { show, width_cells }
    }

    /// Whether images are drawn inline (the terminal shows them and the setting allows).
    fn inline(self) -> bool {
        self.show && pi_tui::capabilities::get().images.is_some()
    }
}

/// What an inline image was drawn from.
type ImageSource = (String, String, u32);

impl ToolExecution {
    /// A pending call of `tool_name` with `args` (a JSON object).
    pub fn new(
        tool_name: impl Into<String>,
        call_id: impl Into<String>,
        args: Value,
        theme: &Theme,
    ) -> Self {
        ToolExecution {
            theme: theme.clone(),
            tool_name: tool_name.into(),
            call_id: call_id.into(),
            args,
            args_complete: false,
            started_at: None,
            ended_at: None,
            result: None,
            is_partial: true,
            is_error: false,
            expanded: false,
            cache: LineCache::default(),
            ext: None,
            images: ImageDisplay::default(),
            image_views: Vec::new(),
        }
    }

    /// Shows the result's images inline or as text, as `display` says.
    pub fn set_image_display(&mut self, display: ImageDisplay) {
        if self.images != display {
            self.images = display;
            self.cache.clear();
        }
    }

    /// The result's images as drawn below the box (each after an empty line), reusing the
    /// views of images that did not change.
    fn image_lines(&mut self, width: usize) -> Vec<String> {
        let sources: Vec<ImageSource> = match (&self.result, self.images.inline()) {
            (Some(result), true) => result
                .content
                .iter()
                .filter_map(|block| match block {
                    InputBlock::Image(img) if !img.data.is_empty() && !img.mime_type.is_empty() => {
                        Some((
                            img.data.to_string(),
                            img.mime_type.to_string(),
                            self.images.width_cells,
                        ))
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut previous = std::mem::take(&mut self.image_views).into_iter();
        for source in sources {
            let reused = previous.next().filter(|(old, _)| *old == source);
            let view = match reused {
                Some(view) => view,
                None => {
                    let image = Image::new(
                        source.0.clone(),
                        source.1.clone(),
                        ImageOptions {
                            max_width_cells: Some(source.2),
                            fallback_style: self.theme.fg(ThemeColor::ToolOutput),
                            ..ImageOptions::default()
                        },
                    );
                    (source, image)
                }
            };
            self.image_views.push(view);
        }
        let mut lines = Vec::new();
        for (_, image) in &mut self.image_views {
            lines.push(String::new());
            lines.extend(image.render(width));
        }
        lines
    }

    /// Draws the call with its extension's renderers (asked for at once).
    pub(crate) fn set_extension_renderer(&mut self, renderer: ExtToolRender) {
        self.ext = Some(renderer);
        self.sync_ext();
    }

    /// Tells the extension renderers what changed.
    fn sync_ext(&mut self) {
        let Some(ext) = &mut self.ext else {
            return;
        };
        let state = ToolRenderState {
            args: &self.args,
            result: self
                .result
                .as_ref()
                .map(|r| (r.content.as_slice(), r.details.as_ref())),
            execution_started: self.started_at.is_some(),
            args_complete: self.args_complete,
            is_partial: self.is_partial,
            is_error: self.is_error,
            expanded: self.expanded,
        };
        ext.sync(&state);
    }

    /// The box contents drawn by extension renderers (TypeScript fallbacks for a slot
    /// without one).
    fn render_ext(&self, ext: &ExtToolRender, width: usize) -> Vec<String> {
        if BUILT_IN_TOOLS.contains(&self.tool_name.as_str()) {
            return self.render_ext_built_in(ext, width);
        }
        let fallback_call = || {
            vec![paint(
                self.theme.fg(ThemeColor::ToolTitle).bold(),
                &self.tool_name,
            )]
        };
        let fallback_result = self.result.as_ref().map(|result| {
            let output = text_output(result, true);
            if output.is_empty() {
                Vec::new()
            } else {
                text_lines(
                    &self.theme.fg(ThemeColor::ToolOutput).paint(&output),
                    width,
                    0,
                )
            }
        });
        ext.render(width, fallback_call, fallback_result)
    }

    /// A built-in tool with some extension renderers: a slot without one is pi's own
    /// drawing of the call (the call alone) or of the result (what it adds to the call).
    fn render_ext_built_in(&self, ext: &ExtToolRender, width: usize) -> Vec<String> {
        let timing = self.timing_label();
        let view = |result| ToolView {
            theme: &self.theme,
            name: &self.tool_name,
            args: &self.args,
            result,
            is_partial: self.is_partial,
            is_error: self.is_error,
            expanded: self.expanded,
            timing: (!timing.is_empty()).then_some(timing.as_str()),
            show_images: self.images.inline(),
        };
        let call = render_tool(&view(None), width);
        let fallback_result = self.result.as_ref().map(|result| {
            let full = render_tool(&view(Some(result)), width);
            match full.strip_prefix(call.as_slice()) {
                Some(rest) => rest.to_vec(),
                None => full,
            }
        });
        ext.render(width, || call.clone(), fallback_result)
    }

    /// Replace the arguments (they grow while the model streams the call).
    pub fn update_args(&mut self, args: Value) {
        if args != self.args {
            self.args = args;
            self.cache.clear();
            self.sync_ext();
        }
    }

    /// The arguments are complete (the model finished the call).
    pub fn set_args_complete(&mut self) {
        self.args_complete = true;
        self.cache.clear();
        self.sync_ext();
    }

    /// The tool started running (starts the elapsed-time clock of bash calls).
    pub fn mark_started(&mut self) {
        self.args_complete = true;
        if self.started_at.is_none() {
            self.started_at = Some(Instant::now());
            self.ended_at = None;
        }
        self.cache.clear();
        self.sync_ext();
    }

    /// Show a partial result while the tool runs (live bash output).
    pub fn update_partial(&mut self, result: &AgentToolResult) {
        self.result = Some(ResultData {
            content: result.content.clone(),
            details: result.details.clone(),
        });
        self.is_partial = true;
        self.cache.clear();
        self.sync_ext();
    }

    /// The tool finished with `result`.
    pub fn finish(&mut self, result: &AgentToolResult, is_error: bool) {
        self.set_final(
            ResultData {
                content: result.content.clone(),
                details: result.details.clone(),
            },
            is_error,
        );
    }

    /// The tool finished; the result as stored in the transcript (session replay).
    pub fn finish_with_message(&mut self, message: &ToolResultMessage) {
        self.set_final(
            ResultData {
                content: message.content.to_vec(),
                details: message.details.clone(),
            },
            message.is_error,
        );
    }

    fn set_final(&mut self, result: ResultData, is_error: bool) {
        self.result = Some(result);
        self.is_partial = false;
        self.is_error = is_error;
        self.args_complete = true;
        if self.started_at.is_some() && self.ended_at.is_none() {
            self.ended_at = Some(Instant::now());
        }
        self.cache.clear();
        self.sync_ext();
    }

    /// Show all output (true) or the collapsed preview.
    pub fn set_expanded(&mut self, expanded: bool) {
        if self.expanded != expanded {
            self.expanded = expanded;
            self.cache.clear();
            self.sync_ext();
        }
    }

    /// Whether all output is shown.
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The tool call id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The current arguments.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// Whether the arguments are complete.
    pub fn args_complete(&self) -> bool {
        self.args_complete
    }

    /// Whether the final result arrived.
    pub fn is_finished(&self) -> bool {
        self.result.is_some() && !self.is_partial
    }

    /// Whether the tool failed.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// Redraw with another theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.cache.clear();
        self.image_views.clear();
    }

    /// `Elapsed 1.2s` while a started bash or codemode call runs, `Took 3.4s` when it is
    /// done.
    fn timing_label(&self) -> String {
        match (self.tool_name.as_str(), self.started_at, &self.result) {
            ("bash" | "codemode", Some(start), Some(_)) => {
                let end = self.ended_at.unwrap_or_else(Instant::now);
                let secs = end.saturating_duration_since(start).as_secs_f64();
                let label = if self.is_partial { "Elapsed" } else { "Took" };
                format!("{label} {secs:.1}s")
            }
            _ => String::new(),
        }
    }
}

/// The tools pi draws itself (pi 1.6.0's built-in renderers, which `next()` gives).
const BUILT_IN_TOOLS: [&str; 8] = [
    "read",
    "bash",
    "powershell",
    "edit",
    "write",
    "grep",
    "find",
    "ls",
];

impl Component for ToolExecution {
    fn render(&mut self, width: usize) -> Vec<String> {
        let bg = if self.is_partial {
            ThemeBg::ToolPendingBg
        } else if self.is_error {
            ThemeBg::ToolErrorBg
        } else {
            ThemeBg::ToolSuccessBg
        };
        if let Some(ext) = self.ext.as_ref().filter(|e| !e.is_default()) {
            // Host components change on their own: never cached here.
            let inner = self.render_ext(ext, inner_width(width, 1));
            let mut lines = vec![String::new()];
            lines.extend(boxed(inner, width, 1, 1, Some(self.theme.bg(bg))));
            lines.extend(self.image_lines(width));
            return lines;
        }
        let timing = self.timing_label();
        if let Some(mut lines) = self.cache.get(width, &timing) {
            lines.extend(self.image_lines(width));
            return lines;
        }
        let view = ToolView {
            theme: &self.theme,
            name: &self.tool_name,
            args: &self.args,
            result: self.result.as_ref(),
            is_partial: self.is_partial,
            is_error: self.is_error,
            expanded: self.expanded,
            timing: (!timing.is_empty()).then_some(timing.as_str()),
            show_images: self.images.inline(),
        };
        let inner = render_tool(&view, inner_width(width, 1));
        let mut lines = vec![String::new()];
        lines.extend(boxed(inner, width, 1, 1, Some(self.theme.bg(bg))));
        self.cache.store(width, &timing, &lines);
        lines.extend(self.image_lines(width));
        lines
    }

    fn invalidate(&mut self) {
        self.cache.clear();
    }
}
