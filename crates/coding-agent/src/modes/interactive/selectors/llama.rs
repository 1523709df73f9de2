//! The `/llama` panel in the editor's place, drawn as pi 1.6.0 draws it: a border, a bold
//! title, the body (the router's models, a choice, a name to type, progress), key hints,
//! a border. Picks go back to the `/llama` task on the reply channel it sent.

use std::collections::HashMap;
use std::sync::Arc;

use pi_tui::components::select_list::{SelectAction, SelectItem, SelectList};
use pi_tui::keybindings::Keybindings;
use pi_tui::{Component, Input};
use tokio::sync::oneshot;

use crate::llama::format::model_description;
use crate::llama::huggingface::{SearchResult, is_exact_name};
use crate::llama::ui::{ModelsAction, ProgressState};
use crate::llama::wire::RouterModel;
use crate::modes::interactive::chat::select_theme;
use crate::modes::interactive::components::text_lines;
use crate::modes::interactive::extension_ui::line_input::LineInput;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// The value of the "Download model…" row.
const DOWNLOAD: &str = "\0download";
/// How many search results show at once.
const SEARCH_VISIBLE: usize = 10;

/// "Download model": the typed name and Hugging Face's results for it.
pub(crate) struct SearchView {
    input: LineInput,
    query: String,
    results: Vec<SearchResult>,
    selected: usize,
    status: String,
    reply: Option<oneshot::Sender<Option<String>>>,
}

/// What the panel shows now.
enum Content {
    Loading,
    Models {
        server_url: String,
        list: SelectList,
        models: Vec<RouterModel>,
        reply: Option<oneshot::Sender<ModelsAction>>,
    },
    Select {
        title: String,
        list: SelectList,
        reply: Option<oneshot::Sender<Option<String>>>,
    },
    Search(SearchView),
    Status {
        title: String,
        message: String,
    },
    Progress {
        state: ProgressState,
        stop: Option<oneshot::Sender<()>>,
    },
}

/// The panel.
pub(crate) struct LlamaView {
    theme: Theme,
    keys: Arc<Keybindings>,
    content: Content,
    /// Search results already fetched, by lowercased query.
    search_cache: HashMap<String, Vec<SearchResult>>,
}

/// What a key asks of the app besides the panel's own change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LlamaKey {
    None,
    /// Search Hugging Face for this text (after the pause the app waits).
    Search(String),
}

/// `12.3k`, `4.5M`: download counts as the results show them.
fn compact_count(value: u64) -> String {
    let v = value as f64;
    if value >= 1_000_000 {
        let digits = if value >= 10_000_000 { 0 } else { 1 };
        format!("{:.*}M", digits, v / 1_000_000.0)
    } else if value >= 1_000 {
        let digits = if value >= 100_000 { 0 } else { 1 };
        format!("{:.*}k", digits, v / 1_000.0)
    } else {
        value.to_string()
    }
}

impl LlamaView {
    pub(crate) fn new(theme: &Theme, keys: &Arc<Keybindings>) -> Self {
        LlamaView {
            theme: theme.clone(),
            keys: Arc::clone(keys),
            content: Content::Loading,
            search_cache: HashMap::new(),
        }
    }

    fn list(&self, items: Vec<SelectItem>) -> SelectList {
        let visible = items.len().clamp(1, 12);
        SelectList::new(items, visible, select_theme(&self.theme))
    }

    /// The router's models, loaded ones first, then by id.
    pub(crate) fn show_models(
        &mut self,
        server_url: String,
        mut models: Vec<RouterModel>,
        reply: oneshot::Sender<ModelsAction>,
    ) {
        models.sort_by(|a, b| {
            b.has_status("loaded")
                .cmp(&a.has_status("loaded"))
                .then_with(|| a.id.cmp(&b.id))
        });
        let mut items: Vec<SelectItem> = models
            .iter()
            .map(|m| {
                let description = model_description(m);
                let item = SelectItem::new(m.id.clone(), m.id.clone());
                if description.is_empty() {
                    item
                } else {
                    item.with_description(description)
                }
            })
            .collect();
        items.push(
            SelectItem::new(DOWNLOAD, "Download model…")
                .with_description("Hugging Face owner/repository[:quant]"),
        );
        let list = self.list(items).with_column_width(36, 56);
        self.content = Content::Models {
            server_url,
            list,
            models,
            reply: Some(reply),
        };
    }

    /// A titled choice.
    pub(crate) fn show_select(
        &mut self,
        title: String,
        options: Vec<String>,
        reply: oneshot::Sender<Option<String>>,
    ) {
        let items = options
            .into_iter()
            .map(|o| SelectItem::new(o.clone(), o))
            .collect();
        let list = self.list(items);
        self.content = Content::Select {
            title,
            list,
            reply: Some(reply),
        };
    }

    /// "Download model".
    pub(crate) fn show_search(&mut self, reply: oneshot::Sender<Option<String>>) {
        let mut input = LineInput::new();
        input.set_focused(true);
        self.content = Content::Search(SearchView {
            input,
            query: String::new(),
            results: Vec::new(),
            selected: 0,
            status: "Type at least 2 characters".to_owned(),
            reply: Some(reply),
        });
    }

    pub(crate) fn show_status(&mut self, title: String, message: String) {
        self.content = Content::Status { title, message };
    }

    pub(crate) fn show_progress(&mut self, state: ProgressState, stop: oneshot::Sender<()>) {
        self.content = Content::Progress {
            state,
            stop: Some(stop),
        };
    }

    /// New progress, if progress is showing.
    pub(crate) fn update_progress(&mut self, next: ProgressState) {
        if let Content::Progress { state, .. } = &mut self.content {
            *state = next;
        }
    }

    /// Search results for `query` (or the error text); stale ones are kept for later.
    pub(crate) fn search_results(
        &mut self,
        query: &str,
        result: Result<Vec<SearchResult>, String>,
    ) {
        if let Ok(results) = &result {
            self.search_cache
                .insert(query.to_lowercase(), results.clone());
        }
        let Content::Search(view) = &mut self.content else {
            return;
        };
        if view.query != query {
            return;
        }
        match result {
            Ok(results) => {
                view.status = if results.is_empty() {
                    "No GGUF models found".to_owned()
                } else {
                    String::new()
                };
                view.results = results;
            }
            Err(message) => {
                view.results.clear();
                view.status = message;
            }
        }
        view.selected = 0;
    }

    /// Handles a key.
    pub(crate) fn handle(&mut self, input: &Input) -> LlamaKey {
        let keys = Arc::clone(&self.keys);
        let is = |id: &str| keys.matches(input, id);
        match &mut self.content {
            Content::Loading | Content::Status { .. } => LlamaKey::None,
            Content::Progress { stop, .. } => {
                if is("tui.select.cancel")
                    && let Some(stop) = stop.take()
                {
                    let _ = stop.send(());
                }
                LlamaKey::None
            }
            Content::Models {
                list,
                models,
                reply,
                ..
            } => {
                let answer = match list.handle_key(input, &keys) {
                    SelectAction::Confirm(value) if value == DOWNLOAD => ModelsAction::Download,
                    SelectAction::Confirm(value) => match models.iter().find(|m| m.id == value) {
                        Some(model) => ModelsAction::Model(Box::new(model.clone())),
                        None => return LlamaKey::None,
                    },
                    SelectAction::Cancel => ModelsAction::Close,
                    SelectAction::None | SelectAction::Changed => return LlamaKey::None,
                };
                if let Some(reply) = reply.take() {
                    let _ = reply.send(answer);
                }
                LlamaKey::None
            }
            Content::Select { list, reply, .. } => {
                let answer = match list.handle_key(input, &keys) {
                    SelectAction::Confirm(value) => Some(value),
                    SelectAction::Cancel => None,
                    SelectAction::None | SelectAction::Changed => return LlamaKey::None,
                };
                if let Some(reply) = reply.take() {
                    let _ = reply.send(answer);
                }
                LlamaKey::None
            }
            Content::Search(view) => Self::search_key(view, input, &keys, &self.search_cache),
        }
    }

    fn search_key(
        view: &mut SearchView,
        input: &Input,
        keys: &Keybindings,
        cache: &HashMap<String, Vec<SearchResult>>,
    ) -> LlamaKey {
        let count = view.results.len();
        if keys.matches(input, "tui.select.up") {
            if count > 0 {
                view.selected = view.selected.checked_sub(1).unwrap_or(count - 1);
            }
            return LlamaKey::None;
        }
        if keys.matches(input, "tui.select.down") {
            if count > 0 {
                view.selected = (view.selected + 1) % count;
            }
            return LlamaKey::None;
        }
        if keys.matches(input, "tui.select.confirm") {
            let exact = is_exact_name(&view.query).then(|| view.query.clone());
            let chosen = exact.or_else(|| view.results.get(view.selected).map(|r| r.id.clone()));
            if let Some(chosen) = chosen
                && let Some(reply) = view.reply.take()
            {
                let _ = reply.send(Some(chosen));
            }
            return LlamaKey::None;
        }
        if keys.matches(input, "tui.select.cancel") {
            if let Some(reply) = view.reply.take() {
                let _ = reply.send(None);
            }
            return LlamaKey::None;
        }
        view.input.handle(input);
        let query = view.input.value().trim().to_owned();
        if query == view.query {
            return LlamaKey::None;
        }
        view.query = query.clone();
        view.selected = 0;
        if query.chars().count() < 2 {
            view.results.clear();
            view.status = "Type at least 2 characters".to_owned();
            return LlamaKey::None;
        }
        if let Some(cached) = cache.get(&query.to_lowercase()) {
            view.results = cached.clone();
            view.status = if cached.is_empty() {
                "No GGUF models found".to_owned()
            } else {
                String::new()
            };
            return LlamaKey::None;
        }
        view.status = "Searching Hugging Face…".to_owned();
        LlamaKey::Search(query)
    }

    fn key_hint(&self, action: &str, what: &str) -> String {
        format!("{} {what}", self.keys.keys(action).join("/"))
    }

    /// Border, title, body, hints, border.
    fn frame(
        &self,
        title: &str,
        body: Vec<String>,
        hints: Option<String>,
        width: usize,
    ) -> Vec<String> {
        let accent = self.theme.fg(ThemeColor::Accent);
        let border = accent.paint(&"─".repeat(width.max(1)));
        let mut lines = vec![border.clone()];
        lines.extend(text_lines(&accent.bold().paint(title), width, 1));
        lines.extend(body);
        if let Some(hints) = hints {
            lines.push(String::new());
            let dim = self.theme.fg(ThemeColor::Dim);
            lines.extend(text_lines(&dim.paint(&hints), width, 1));
        }
        lines.push(border);
        lines
    }

    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        let muted = self.theme.fg(ThemeColor::Muted);
        let dim = self.theme.fg(ThemeColor::Dim);
        let select_hint = format!(
            "{} • {}",
            self.key_hint("tui.select.confirm", "select"),
            self.key_hint("tui.select.cancel", "cancel")
        );
        match &mut self.content {
            Content::Loading => {
                let mut body = vec![String::new()];
                body.extend(text_lines(&muted.paint("Loading…"), width, 1));
                body.push(String::new());
                self.frame("llama.cpp models", body, None, width)
            }
            Content::Models {
                server_url, list, ..
            } => {
                let mut body = text_lines(&dim.paint(server_url), width, 1);
                body.push(String::new());
                body.extend(list.render(width));
                let hints = format!(
                    "{} • {}",
                    self.key_hint("tui.select.confirm", "load/unload/download"),
                    self.key_hint("tui.select.cancel", "close")
                );
                self.frame("llama.cpp models", body, Some(hints), width)
            }
            Content::Select { title, list, .. } => {
                let title = title.clone();
                let mut body = vec![String::new()];
                body.extend(list.render(width));
                self.frame(&title, body, Some(select_hint), width)
            }
            Content::Status { title, message } => {
                let title = title.clone();
                let mut body = vec![String::new()];
                body.extend(text_lines(&muted.paint(message), width, 1));
                self.frame(&title, body, None, width)
            }
            Content::Progress { state, .. } => {
                let state = state.clone();
                let text = self.theme.fg(ThemeColor::Text);
                let mut body = text_lines(&text.paint(&state.model), width, 1);
                body.push(String::new());
                body.extend(text_lines(&muted.paint(&state.message), width, 1));
                if let Some(ratio) = state.ratio {
                    let ratio = ratio.clamp(0.0, 1.0);
                    let filled = (ratio * 40.0).round() as usize;
                    let bar = format!(
                        "{}{} {}%",
                        "█".repeat(filled),
                        "─".repeat(40 - filled),
                        (ratio * 100.0).round()
                    );
                    let accent = self.theme.fg(ThemeColor::Accent);
                    body.extend(text_lines(&accent.paint(&bar), width, 1));
                }
                if let Some(detail) = &state.detail {
                    body.extend(text_lines(&dim.paint(detail), width, 1));
                }
                let hint = self.key_hint("tui.select.cancel", "stop");
                self.frame(&state.title, body, Some(hint), width)
            }
            Content::Search(view) => {
                let mut body = vec![String::new()];
                body.extend(text_lines(
                    &dim.paint("Model name or owner/repository[:quant]"),
                    width,
                    1,
                ));
                body.extend(view.input.render(width));
                body.push(String::new());
                let accent = self.theme.fg(ThemeColor::Accent);
                let count = view.results.len();
                let start = view
                    .selected
                    .saturating_sub(SEARCH_VISIBLE / 2)
                    .min(count.saturating_sub(SEARCH_VISIBLE));
                let end = (start + SEARCH_VISIBLE).min(count);
                for (index, result) in view.results.iter().enumerate().take(end).skip(start) {
                    let details = format!("{} downloads", compact_count(result.downloads));
                    body.push(if index == view.selected {
                        accent.paint(&format!("→ {}  {details}", result.id))
                    } else {
                        format!("  {}{}", result.id, muted.paint(&format!("  {details}")))
                    });
                }
                if start > 0 || end < count {
                    body.push(dim.paint(&format!("  ({}/{count})", view.selected + 1)));
                }
                if count == 0 || view.status == "Searching Hugging Face…" {
                    body.push(dim.paint(&format!("  {}", view.status)));
                }
                let hints = format!(
                    "{} • {}",
                    self.key_hint("tui.select.confirm", "select"),
                    self.key_hint("tui.select.cancel", "back")
                );
                self.frame("Download model", body, Some(hints), width)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::components::strip_ansi;
    use pi_tui::{ColorMode, KeyCode};
    use serde_json::json;

    fn view() -> LlamaView {
        let keys = Arc::new(crate::modes::interactive::keymap::load(
            std::path::Path::new("/nonexistent"),
        ));
        LlamaView::new(&Theme::dark(ColorMode::TrueColor), &keys)
    }

    fn plain(lines: &[String]) -> Vec<String> {
        lines
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_owned())
            .collect()
    }

    #[test]
    fn the_model_list_as_pi_draws_it() {
        let mut view = view();
        let models: Vec<RouterModel> = serde_json::from_value(json!([
            {"id": "b-unloaded", "status": {"value": "unloaded"}},
            {"id": "c-loaded", "status": {"value": "loaded"}, "meta": {"n_ctx": 4096}},
            {"id": "a-sleeping", "status": {"value": "sleeping"}}
        ]))
        .unwrap();
        let (tx, mut rx) = oneshot::channel();
        view.show_models("http://127.0.0.1:9931".into(), models, tx);
        let lines = plain(&view.render(80));
        assert_eq!(lines[1], " llama.cpp models");
        assert_eq!(lines[2], " http://127.0.0.1:9931");
        assert_eq!(lines[3], "");
        assert!(lines[4].starts_with("→ c-loaded") && lines[4].ends_with("loaded · 4k context"));
        assert!(lines[5].starts_with("  a-sleeping") && lines[5].ends_with("loaded"));
        assert_eq!(lines[6], "  b-unloaded");
        assert!(lines[7].starts_with("  Download model…"));
        assert_eq!(
            lines[9],
            " enter load/unload/download • escape/ctrl+c close"
        );
        view.handle(&Input::key(KeyCode::Down));
        view.handle(&Input::key(KeyCode::Enter));
        match rx.try_recv().unwrap() {
            ModelsAction::Model(model) => assert_eq!(model.id, "a-sleeping"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn progress_stops_on_escape() {
        let mut view = view();
        let (tx, mut rx) = oneshot::channel();
        let state = ProgressState {
            title: "Loading model".into(),
            model: "m".into(),
            message: "Starting…".into(),
            ratio: None,
            detail: None,
        };
        view.show_progress(state.clone(), tx);
        view.update_progress(ProgressState {
            ratio: Some(0.5),
            message: "Loading tensors".into(),
            ..state
        });
        let lines = plain(&view.render(60));
        assert_eq!(lines[1], " Loading model");
        assert_eq!(lines[2], " m");
        assert_eq!(lines[4], " Loading tensors");
        assert!(lines[5].ends_with(" 50%"));
        assert!(rx.try_recv().is_err());
        view.handle(&Input::key(KeyCode::Esc));
        assert!(rx.try_recv().is_ok());
    }

    #[test]
    fn download_takes_an_exact_name() {
        let mut view = view();
        let (tx, mut rx) = oneshot::channel();
        view.show_search(tx);
        let mut last = LlamaKey::None;
        for c in "ggml-org/m:Q4_0".chars() {
            last = view.handle(&Input::key(KeyCode::Char(c)));
        }
        assert_eq!(last, LlamaKey::Search("ggml-org/m:Q4_0".into()));
        view.search_results("ggml-org/m:Q4_0", Err("fetch failed".into()));
        assert!(plain(&view.render(60)).contains(&"  fetch failed".to_owned()));
        view.handle(&Input::key(KeyCode::Enter));
        assert_eq!(rx.try_recv().unwrap().as_deref(), Some("ggml-org/m:Q4_0"));
        assert_eq!(compact_count(12_345), "12.3k");
        assert_eq!(compact_count(4_500_000), "4.5M");
        assert_eq!(compact_count(999), "999");
    }
}
