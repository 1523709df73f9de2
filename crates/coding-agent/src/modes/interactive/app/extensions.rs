//! The app's side of the extension UI: `ctx.ui` calls, dialog answers, extension errors
//! and shutdown, applied to the view (the state lives in `extension_ui`).

use pi_tui::Input;
use serde_json::{Value, json};

use super::App;
use crate::extensions::{ExtensionErrorInfo, UiNotice};
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::extension_ui::dialogs::DialogOutcome;
use crate::modes::interactive::extension_ui::key_bytes::{decode_inputs, encode_input};
use crate::modes::interactive::extension_ui::widgets::WidgetContent;
use crate::modes::interactive::extension_ui::{ExtEvent, bridge};
use crate::modes::interactive::theme::ThemeColor;

impl App {
    /// Binds the extensions (the UI runs by now) and fills the host's mirror.
    pub(crate) fn bind_extensions(&mut self) {
        self.mirror_terminal();
        self.session
            .set_extension_ui_state("toolsExpanded", Value::Bool(self.chat.tools_expanded()));
        self.session
            .set_extension_ui_state("themeName", Value::String(self.theme.name().to_owned()));
        self.mirror_footer();
        self.sync_editor_mirror();
        bridge::spawn_bind(&self.session, self.tx.clone());
    }

    /// The terminal size in the host's mirror (`tui.terminal.rows/columns`).
    pub(super) fn mirror_terminal(&mut self) {
        let (columns, rows) = pi_tui::terminal::Terminal::size(self.renderer.terminal());
        self.session
            .set_extension_ui_state("terminal", json!({"rows": rows, "columns": columns}));
    }

    /// The footer data provider's fields in the host's mirror.
    fn mirror_footer(&mut self) {
        let providers: std::collections::HashSet<String> = self
            .session
            .registry()
            .available()
            .iter()
            .map(|m| m.provider.clone())
            .collect();
        self.session.set_extension_ui_state(
            "footer",
            json!({
                "gitBranch": super::git_branch(self.session.cwd()),
                "availableProviderCount": providers.len(),
            }),
        );
    }

    /// The text of the editor in use: an extension's custom editor, or pi's.
    pub(super) fn current_editor_text(&self) -> String {
        if self.ext.editor.is_some() {
            self.ext.editor_text.clone()
        } else {
            self.editor.expanded_text()
        }
    }

    /// The editor text in the host's mirror (`ctx.ui.getEditorText()`), when it changed.
    pub(super) fn sync_editor_mirror(&mut self) {
        let text = self.current_editor_text();
        if self.ext.mirrored_editor_text.as_deref() != Some(text.as_str()) {
            self.session
                .set_extension_ui_state("editorText", Value::String(text.clone()));
            self.ext.mirrored_editor_text = Some(text);
        }
    }

    pub(super) async fn on_ext_event(&mut self, event: ExtEvent) {
        match event {
            ExtEvent::Notice(notice) => self.on_ui_notice(notice).await,
            ExtEvent::Dialog {
                dialog,
                reply,
                cancel,
            } => {
                self.ext
                    .open(dialog, reply, cancel, &self.theme, &self.keys);
            }
            ExtEvent::DialogCancelled => self.ext.purge(&self.theme, &self.keys),
            ExtEvent::Error(error) => self.show_extension_error(&error),
            ExtEvent::Shutdown => {
                if self.session.is_streaming() {
                    self.ext.shutdown_requested = true;
                } else {
                    self.quit = Some(0);
                }
            }
            ExtEvent::Bound => {
                self.ext.bound = true;
                for prompt in std::mem::take(&mut self.ext.deferred_prompts) {
                    self.submit_initial(prompt);
                }
            }
            ExtEvent::Redraw => {}
            ExtEvent::TerminalInput {
                input,
                consume,
                data,
            } => {
                if consume {
                    return;
                }
                if data == encode_input(&input) {
                    self.route_input(&input).await;
                } else {
                    for input in decode_inputs(&data) {
                        self.route_input(&input).await;
                    }
                }
            }
            ExtEvent::ShortcutFailed(error) => {
                self.notice(
                    NoticeKind::Error,
                    &format!("Shortcut handler error: {error}"),
                );
            }
        }
    }

    /// `Extension "<path>" error: <message>` in the error color, the stack dim below.
    fn show_extension_error(&mut self, error: &ExtensionErrorInfo) {
        let message = format!(
            "Extension \"{}\" error: {}",
            error.extension_path, error.error
        );
        let mut text = self.theme.fg(ThemeColor::Error).paint(&message);
        if let Some(stack) = &error.stack {
            let dim = self.theme.fg(ThemeColor::Dim);
            let lines: Vec<String> = stack
                .lines()
                .skip(1)
                .map(|l| dim.paint(&format!("  {}", l.trim())))
                .collect();
            if !lines.is_empty() {
                text = format!("{text}\n{}", lines.join("\n"));
            }
        }
        self.chat.add_text_block(&text);
    }

    async fn on_ui_notice(&mut self, notice: UiNotice) {
        match notice {
            UiNotice::Notify {
                message,
                notify_type,
            } => {
                let kind = match notify_type.as_deref() {
                    Some("error") => NoticeKind::Error,
                    Some("warning") => NoticeKind::Warning,
                    _ => NoticeKind::Info,
                };
                self.notice(kind, &message);
            }
            UiNotice::SetStatus {
                status_key,
                status_text,
            } => {
                match status_text {
                    Some(text) => self.ext.statuses.insert(status_key, text),
                    None => self.ext.statuses.remove(&status_key),
                };
            }
            UiNotice::SetWidget {
                widget_key,
                widget_lines,
                component_id,
                widget_placement,
            } => {
                let content = match (component_id, widget_lines) {
                    (Some(id), _) => Some(WidgetContent::Component(id)),
                    (None, Some(lines)) => Some(WidgetContent::Lines(lines)),
                    (None, None) => None,
                };
                let below = widget_placement.as_deref() == Some("belowEditor");
                if let Some(WidgetContent::Component(old)) =
                    self.ext.widgets.set(&widget_key, content, below)
                {
                    self.ext.remote.forget(old);
                }
            }
            UiNotice::SetTitle { title } => {
                let osc = format!("\x1b]0;{title}\x07");
                let terminal = self.renderer.terminal_mut();
                let _ = pi_tui::terminal::Terminal::write(terminal, &osc);
                let _ = pi_tui::terminal::Terminal::flush(terminal);
            }
            UiNotice::SetEditorText { text } => {
                // The host set its custom editor's text itself.
                self.editor.set_text(text.as_deref().unwrap_or_default());
                self.on_editor_text_set();
            }
            UiNotice::PasteToEditor { text } => match self.ext.editor {
                Some(id) => self.ext.remote.input(id, encode_input(&Input::Paste(text))),
                None => {
                    self.editor.handle(&Input::Paste(text));
                    self.on_editor_text_set();
                }
            },
            UiNotice::SetWorkingMessage { message } => {
                self.ext.working_message = message;
                self.apply_working_settings();
            }
            UiNotice::SetWorkingVisible { visible } => self.ext.working_visible = visible,
            UiNotice::SetWorkingIndicator { options } => {
                self.ext.working_indicator = options;
                self.apply_working_settings();
            }
            UiNotice::SetHiddenThinkingLabel { label } => {
                self.chat.set_hidden_thinking_label(label);
            }
            UiNotice::SetFooter { component_id } => {
                if let Some(old) = std::mem::replace(&mut self.ext.footer, component_id) {
                    self.ext.remote.forget(old);
                }
            }
            UiNotice::SetHeader { component_id } => {
                if let Some(old) = std::mem::replace(&mut self.ext.header, component_id) {
                    self.ext.remote.forget(old);
                }
                self.chat.set_header_component(component_id);
            }
            UiNotice::SetEditorComponent { component_id } => {
                self.set_custom_editor(component_id);
            }
            UiNotice::SetToolsExpanded { expanded } => self.set_tools_expanded(expanded),
            UiNotice::SetTheme { name } => self.apply_extension_theme(&name),
            UiNotice::RequestRender { component_id } => {
                self.ext.remote.request_render(component_id);
            }
            UiNotice::Done { component_id, .. } => self.ext.done(component_id),
            UiNotice::EditorSubmit { text, .. } => {
                self.ext.editor_text.clear();
                self.sync_editor_mirror();
                self.on_submit(text).await;
            }
            UiNotice::EditorChange { text, .. } => {
                self.ext.editor_text = text;
                self.sync_editor_mirror();
            }
            UiNotice::EditorAction { action, .. } => {
                self.run_app_action(&action).await;
            }
            UiNotice::ShowOverlay {
                component_id,
                parent_component_id,
                overlay_options,
            } => self
                .ext
                .show_overlay(component_id, parent_component_id, overlay_options),
            UiNotice::HideOverlay {
                parent_component_id,
            } => self.ext.hide_overlay(parent_component_id),
            UiNotice::Overlay {
                component_id,
                action,
            } => self.ext.overlay_action(component_id, &action),
            UiNotice::SetFocus { component_id } => self.ext.set_focus(component_id),
            UiNotice::TuiStop {} => self.release_terminal(),
            UiNotice::TuiStart {} => self.reclaim_terminal(),
            UiNotice::SetTerminalInputListening { active } => self.ext.terminal_input = active,
            UiNotice::SetAutocomplete {
                active,
                trigger_characters,
            } => {
                self.ext
                    .autocomplete
                    .store(active, std::sync::atomic::Ordering::SeqCst);
                self.editor
                    .set_autocomplete_trigger_characters(&trigger_characters);
                self.ext.trigger_characters = trigger_characters;
            }
        }
    }

    /// Sets the text of the editor the user sees: pi's, and the extension's custom editor
    /// when one replaces it (`component_set_text`).
    pub(super) fn set_editor_text(&mut self, text: &str) {
        self.editor.set_text(text);
        if let Some(id) = self.ext.editor {
            self.ext.remote.notify(
                "component_set_text",
                serde_json::json!({ "componentId": id, "text": text }),
            );
        }
    }

    /// After pi changed the editor's text: bash mode and the host's mirror follow.
    pub(super) fn on_editor_text_set(&mut self) {
        let bash = self.editor.text().trim_start().starts_with('!');
        if bash != self.bash_mode {
            self.bash_mode = bash;
            self.update_editor_border();
        }
        self.sync_editor_mirror();
    }

    /// `setEditorComponent`: keys go to the host's editor; `None` restores pi's editor
    /// with the custom editor's text.
    fn set_custom_editor(&mut self, component: Option<u64>) {
        let previous = std::mem::replace(&mut self.ext.editor, component);
        if let Some(old) = previous {
            self.ext.remote.forget(old);
        }
        match component {
            Some(_) => self.ext.editor_text = self.editor.expanded_text(),
            None if previous.is_some() => {
                let text = std::mem::take(&mut self.ext.editor_text);
                self.editor.set_text(&text);
                self.on_editor_text_set();
            }
            None => {}
        }
    }

    /// `ctx.ui.setToolsExpanded`.
    pub(super) fn set_tools_expanded(&mut self, expanded: bool) {
        if self.chat.tools_expanded() != expanded {
            self.chat.toggle_tools_expanded();
            let state = if expanded { "expanded" } else { "collapsed" };
            self.notice(NoticeKind::Info, &format!("Tool output: {state}"));
        }
        self.session
            .set_extension_ui_state("toolsExpanded", Value::Bool(expanded));
    }

    /// `ctx.ui.setTheme(name)`: pi's theme switches too (and is saved, as in the
    /// TypeScript pi); an in-memory theme instance only restyles host components.
    fn apply_extension_theme(&mut self, name: &str) {
        self.ext.remote.invalidate_all();
        let settings = self.session.settings().get();
        let (theme, warnings) = crate::modes::interactive::theme::load_theme(
            Some(name),
            &self.agent_dir,
            self.session.cwd(),
            &self.theme_sources(),
        );
        if theme.name() != name || !warnings.is_empty() {
            return;
        }
        if settings.theme.as_deref() != Some(name) {
            self.session
                .settings()
                .set("theme", Value::String(name.to_owned()));
        }
        self.set_theme(theme);
    }

    /// Restyles everything with `theme` and tells the host.
    pub(super) fn set_theme(&mut self, theme: crate::modes::interactive::theme::Theme) {
        self.theme = theme;
        self.chat.set_theme(&self.theme);
        // The header and the resource listing are drawn in the new colors too.
        let details = self.startup_details();
        let (compact, expanded) = self.header_variants(crate::PI_VERSION, details);
        self.chat.set_header_variants(&compact, &expanded);
        let (compact, expanded) = self.loaded_resources_lines();
        self.chat.set_resources(compact, expanded);
        self.footer.set_theme(&self.theme);
        self.editor.set_theme(super::editor_theme(&self.theme));
        self.update_editor_border();
        self.session
            .set_extension_ui_state("themeName", Value::String(self.theme.name().to_owned()));
        self.sync_color_scheme_reports();
        self.renderer.request_full_redraw();
    }

    /// The working loader's message and indicator as extensions set them.
    pub(super) fn apply_working_settings(&mut self) {
        let message = self.working_message();
        let (frames, interval) = indicator_options(self.ext.working_indicator.as_ref());
        if let super::Status::Working(loader) = &mut self.status {
            loader.set_message(message);
            loader.set_indicator(frames, interval);
        }
    }

    /// The working message: the extension's, or pi 1.6's `Working` (drawn in the editor's
    /// top border).
    pub(super) fn working_message(&self) -> String {
        self.ext
            .working_message
            .clone()
            .unwrap_or_else(|| "Working".to_owned())
    }

    /// A dialog got a key.
    pub(super) fn on_dialog_input(&mut self, input: &Input) {
        let Some(dialog) = self.ext.dialog_mut() else {
            return;
        };
        match dialog.handle(input) {
            DialogOutcome::Pending => {}
            DialogOutcome::Answer(answer) => {
                self.ext.answer_dialog(answer, &self.theme, &self.keys);
            }
            DialogOutcome::ExternalEditor(text) => {
                if let Some(edited) = self.edit_externally(&text)
                    && let Some(dialog) = self.ext.dialog_mut()
                {
                    dialog.set_editor_text(&edited);
                }
            }
        }
    }
}

/// `WorkingIndicatorOptions` (`{frames?, intervalMs?}`) as loader settings; `None`
/// restores pi's spinner.
fn indicator_options(options: Option<&Value>) -> (Option<Vec<String>>, Option<u64>) {
    let Some(options) = options.filter(|o| o.is_object()) else {
        return (None, None);
    };
    let frames = options.get("frames").and_then(Value::as_array).map(|f| {
        f.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    });
    let interval = options.get("intervalMs").and_then(Value::as_u64);
    (frames, interval)
}
