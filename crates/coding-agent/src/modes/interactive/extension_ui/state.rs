//! What extensions put on the screen, owned by the UI task: the open dialog (and those
//! waiting behind it), `ui.custom` components in the editor's place or as overlays,
//! overlays components opened themselves, widgets, statuses, replaced footer / header /
//! editor, the working indicator settings — and who gets the keys.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use pi_tui::keybindings::Keybindings;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::dialogs::DialogView;
use super::overlay_layout::{PlacedOverlay, resolve_layout};
use super::remote::RemoteView;
use super::widgets::Widgets;
use crate::extensions::{ExtensionRuntime, UiDialog};
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::theme::Theme;
use crate::modes::run::RunPrompt;

/// A request waiting for pi's answer (a dialog or a `ui.custom`).
struct Pending {
    reply: Option<oneshot::Sender<Value>>,
    cancel: CancellationToken,
}

impl Pending {
    fn answer(&mut self, value: Value) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(value);
        }
    }

    /// Cancelled by the host (timeout, signal, host gone) or no longer awaited.
    fn is_dead(&self) -> bool {
        self.cancel.is_cancelled() || self.reply.as_ref().is_none_or(|r| r.is_closed())
    }
}

struct OpenDialog {
    view: DialogView,
    pending: Pending,
}

/// A `ui.custom` component in the editor's place.
struct InlineCustom {
    id: u64,
    pending: Pending,
}

/// A component drawn over the frame.
struct OverlayEntry {
    id: u64,
    options: Value,
    /// The component whose `tui.showOverlay` opened it (none for `ui.custom`).
    parent: Option<u64>,
    hidden: bool,
    /// Hidden for good (`handle.hide()`), kept until its `ui.custom` is done.
    gone: bool,
    focused: bool,
    /// The `ui.custom` request it answers.
    pending: Option<Pending>,
}

impl OverlayEntry {
    fn visible(&self) -> bool {
        !self.hidden && !self.gone
    }

    fn captures_keys(&self) -> bool {
        self.visible() && self.focused
    }
}

/// Whether an overlay takes the keys when shown (`nonCapturing` ones do not until
/// focused).
fn captures_on_show(options: &Value) -> bool {
    options.get("nonCapturing").and_then(Value::as_bool) != Some(true)
}

/// Who gets a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyTarget {
    /// The open dialog.
    Dialog,
    /// A host component (`component_input`).
    Component(u64),
    /// pi itself: pickers, the editor (or a custom editor), app keys.
    App,
}

/// The extension UI state of interactive mode.
pub(crate) struct ExtensionUiState {
    pub runtime: Arc<ExtensionRuntime>,
    pub remote: RemoteView,
    dialog: Option<OpenDialog>,
    queued: VecDeque<(UiDialog, Pending)>,
    customs: Vec<InlineCustom>,
    overlays: Vec<OverlayEntry>,
    pub widgets: Widgets,
    pub statuses: BTreeMap<String, String>,
    /// Host components replacing pi's footer, header and editor.
    pub footer: Option<u64>,
    pub header: Option<u64>,
    pub editor: Option<u64>,
    /// The custom editor's text (from its `editorChange` notices).
    pub editor_text: String,
    focus_override: Option<u64>,
    /// The component last told it has focus (`component_focus`).
    told_focus: Option<u64>,
    pub working_message: Option<String>,
    pub working_visible: bool,
    pub working_indicator: Option<Value>,
    /// Keys go to the host's input listeners first.
    pub terminal_input: bool,
    /// Extensions added autocomplete providers (`ctx.ui.addAutocompleteProvider`): the
    /// editor's completion asks the host first.
    pub autocomplete: Arc<std::sync::atomic::AtomicBool>,
    /// The trigger characters those providers declared (kept for a new editor).
    pub trigger_characters: Vec<String>,
    /// `ctx.shutdown()` while the agent ran: quit when it ends.
    pub shutdown_requested: bool,
    /// `session_start` went out; prompts from the command line wait for it.
    pub bound: bool,
    pub deferred_prompts: Vec<RunPrompt>,
    /// The editor text last written to the host's mirror.
    pub mirrored_editor_text: Option<String>,
}

impl ExtensionUiState {
    pub(crate) fn new(runtime: Arc<ExtensionRuntime>, tx: UnboundedSender<AppEvent>) -> Self {
        let remote = RemoteView::start(Arc::clone(&runtime), tx);
        ExtensionUiState {
            bound: runtime.is_empty(),
            runtime,
            remote,
            dialog: None,
            queued: VecDeque::new(),
            customs: Vec::new(),
            overlays: Vec::new(),
            widgets: Widgets::default(),
            statuses: BTreeMap::new(),
            footer: None,
            header: None,
            editor: None,
            editor_text: String::new(),
            focus_override: None,
            told_focus: None,
            working_message: None,
            working_visible: true,
            working_indicator: None,
            terminal_input: false,
            autocomplete: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            trigger_characters: Vec::new(),
            shutdown_requested: false,
            deferred_prompts: Vec::new(),
            mirrored_editor_text: None,
        }
    }

    /// Shows a dialog (or queues it behind the open one); `ui.custom` components go in
    /// the editor's place or over the frame.
    pub(crate) fn open(
        &mut self,
        dialog: UiDialog,
        reply: oneshot::Sender<Value>,
        cancel: CancellationToken,
        theme: &Theme,
        keys: &Arc<Keybindings>,
    ) {
        let pending = Pending {
            reply: Some(reply),
            cancel,
        };
        if let UiDialog::Custom {
            component_id,
            overlay,
            overlay_options,
            ..
        } = dialog
        {
            if overlay {
                let options = overlay_options.unwrap_or(Value::Null);
                self.overlays.push(OverlayEntry {
                    id: component_id,
                    focused: captures_on_show(&options),
                    options,
                    parent: None,
                    hidden: false,
                    gone: false,
                    pending: Some(pending),
                });
            } else {
                self.customs.push(InlineCustom {
                    id: component_id,
                    pending,
                });
            }
            return;
        }
        self.queued.push_back((dialog, pending));
        self.promote(theme, keys);
    }

    /// Opens the next queued dialog when none is open.
    fn promote(&mut self, theme: &Theme, keys: &Arc<Keybindings>) {
        while self.dialog.is_none() {
            let Some((dialog, mut pending)) = self.queued.pop_front() else {
                return;
            };
            if pending.is_dead() {
                continue;
            }
            match DialogView::new(&dialog, theme, keys) {
                Some(view) => self.dialog = Some(OpenDialog { view, pending }),
                None => pending.answer(dialog.empty_answer()),
            }
        }
    }

    /// Closes every dialog and `ui.custom` with its empty answer (pi is quitting: a
    /// handler waiting for one must not hold up the abort).
    pub(crate) fn close_all(&mut self) {
        if let Some(mut open) = self.dialog.take() {
            let empty = open.view.empty();
            open.pending.answer(empty);
        }
        for (dialog, mut pending) in self.queued.drain(..) {
            pending.answer(dialog.empty_answer());
        }
        for mut custom in self.customs.drain(..) {
            custom.pending.answer(Value::Null);
        }
        for overlay in &mut self.overlays {
            if let Some(pending) = &mut overlay.pending {
                pending.answer(Value::Null);
            }
        }
        self.overlays.clear();
    }

    /// Drops dialogs and components whose request was cancelled (or is no longer
    /// awaited).
    pub(crate) fn purge(&mut self, theme: &Theme, keys: &Arc<Keybindings>) {
        if self.dialog.as_ref().is_some_and(|d| d.pending.is_dead()) {
            self.dialog = None;
        }
        self.queued.retain(|(_, pending)| !pending.is_dead());
        let mut dropped = Vec::new();
        self.customs.retain(|c| {
            let dead = c.pending.is_dead();
            if dead {
                dropped.push(c.id);
            }
            !dead
        });
        self.overlays.retain(|o| {
            let dead = o.pending.as_ref().is_some_and(Pending::is_dead);
            if dead {
                dropped.push(o.id);
            }
            !dead
        });
        for id in dropped {
            self.remote.dispose(id);
        }
        self.promote(theme, keys);
    }

    /// Whether a dialog has the editor's place.
    pub(crate) fn has_dialog(&self) -> bool {
        self.dialog.is_some()
    }

    pub(crate) fn dialog_mut(&mut self) -> Option<&mut DialogView> {
        self.dialog.as_mut().map(|d| &mut d.view)
    }

    /// Closes the open dialog with `answer` and opens the next one.
    pub(crate) fn answer_dialog(&mut self, answer: Value, theme: &Theme, keys: &Arc<Keybindings>) {
        if let Some(mut open) = self.dialog.take() {
            open.pending.answer(answer);
        }
        self.promote(theme, keys);
    }

    /// Closes a dialog whose countdown ran out; true when one did.
    pub(crate) fn expire_dialog(&mut self, theme: &Theme, keys: &Arc<Keybindings>) -> bool {
        let expired = self.dialog.as_ref().and_then(|d| d.view.expired());
        match expired {
            Some(answer) => {
                self.answer_dialog(answer, theme, keys);
                true
            }
            None => false,
        }
    }

    pub(crate) fn has_countdown(&self) -> bool {
        self.dialog.as_ref().is_some_and(|d| d.view.has_countdown())
    }

    /// `done` of a `ui.custom` component: it closes and its request is answered.
    pub(crate) fn done(&mut self, id: u64) {
        if let Some(at) = self.customs.iter().position(|c| c.id == id) {
            let mut custom = self.customs.remove(at);
            custom.pending.answer(Value::Null);
        }
        if let Some(at) = self.overlays.iter().position(|o| o.id == id) {
            let mut overlay = self.overlays.remove(at);
            if let Some(pending) = &mut overlay.pending {
                pending.answer(Value::Null);
            }
        }
        if self.focus_override == Some(id) {
            self.focus_override = None;
        }
        self.remote.forget(id);
    }

    /// `tui.showOverlay` of a component.
    pub(crate) fn show_overlay(&mut self, id: u64, parent: Option<u64>, options: Option<Value>) {
        self.overlays.retain(|o| o.id != id || o.pending.is_some());
        let options = options.unwrap_or(Value::Null);
        self.overlays.push(OverlayEntry {
            id,
            focused: captures_on_show(&options),
            options,
            parent,
            hidden: false,
            gone: false,
            pending: None,
        });
    }

    /// `tui.hideOverlay()`: the topmost overlay that component opened (else the topmost).
    pub(crate) fn hide_overlay(&mut self, parent: Option<u64>) {
        let at = self
            .overlays
            .iter()
            .rposition(|o| o.visible() && o.pending.is_none() && o.parent == parent)
            .or_else(|| self.overlays.iter().rposition(OverlayEntry::visible));
        if let Some(at) = at {
            self.close_overlay(at);
        }
    }

    fn close_overlay(&mut self, at: usize) {
        if self.overlays[at].pending.is_some() {
            self.overlays[at].gone = true;
        } else {
            let overlay = self.overlays.remove(at);
            self.remote.forget(overlay.id);
        }
    }

    /// An OverlayHandle call.
    pub(crate) fn overlay_action(&mut self, id: u64, action: &str) {
        let Some(at) = self.overlays.iter().position(|o| o.id == id) else {
            return;
        };
        match action {
            "hide" => self.close_overlay(at),
            "setHidden" => self.overlays[at].hidden = true,
            "setVisible" => self.overlays[at].hidden = false,
            "focus" => {
                let mut overlay = self.overlays.remove(at);
                overlay.focused = true;
                self.overlays.push(overlay);
            }
            "unfocus" => self.overlays[at].focused = false,
            _ => {}
        }
    }

    /// `tui.setFocus(component | null)`.
    pub(crate) fn set_focus(&mut self, id: Option<u64>) {
        self.focus_override = id;
    }

    fn is_shown(&self, id: u64) -> bool {
        self.customs.iter().any(|c| c.id == id)
            || self.overlays.iter().any(|o| o.id == id && o.visible())
            || self.editor == Some(id)
    }

    /// Who gets the next key.
    pub(crate) fn key_target(&self) -> KeyTarget {
        if self.dialog.is_some() {
            return KeyTarget::Dialog;
        }
        if let Some(id) = self.focus_override.filter(|id| self.is_shown(*id)) {
            return KeyTarget::Component(id);
        }
        if let Some(overlay) = self.overlays.iter().rev().find(|o| o.captures_keys()) {
            return KeyTarget::Component(overlay.id);
        }
        match self.customs.last() {
            Some(custom) => KeyTarget::Component(custom.id),
            None => KeyTarget::App,
        }
    }

    /// The `ui.custom` component shown in the editor's place, if any.
    pub(crate) fn inline_custom(&self) -> Option<u64> {
        self.customs.last().map(|c| c.id)
    }

    /// The visible overlays, drawn at their layout width, bottom first.
    /// Whether an extension overlay is open (pi 1.6 then refuses a layout switch).
    pub(crate) fn has_overlays(&self) -> bool {
        !self.overlays.is_empty()
    }

    pub(crate) fn placed_overlays(&self, width: usize, rows: usize) -> Vec<PlacedOverlay> {
        self.overlays
            .iter()
            .filter(|o| o.visible())
            .map(|o| {
                let sizing = resolve_layout(&o.options, 0, width, rows);
                let mut lines = self.remote.lines(o.id, sizing.width);
                if let Some(max) = sizing.max_height {
                    lines.truncate(max);
                }
                let layout = resolve_layout(&o.options, lines.len(), width, rows);
                PlacedOverlay { lines, layout }
            })
            .collect()
    }

    /// Tells components when they gain or lose focus (`component_focus`).
    pub(crate) fn sync_focus(&mut self, focused: Option<u64>) {
        if focused == self.told_focus {
            return;
        }
        if let Some(old) = self.told_focus {
            self.remote.notify(
                "component_focus",
                serde_json::json!({"componentId": old, "focused": false}),
            );
        }
        if let Some(new) = focused {
            self.remote.notify(
                "component_focus",
                serde_json::json!({"componentId": new, "focused": true}),
            );
        }
        self.told_focus = focused;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::ColorMode;
    use serde_json::json;

    fn setup() -> (ExtensionUiState, Theme, Arc<Keybindings>) {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let state = ExtensionUiState::new(Arc::new(ExtensionRuntime::empty()), tx);
        let keys = Arc::new(crate::modes::interactive::keymap::load(
            std::path::Path::new("/nonexistent"),
        ));
        (state, Theme::dark(ColorMode::TrueColor), keys)
    }

    fn custom(id: u64, overlay: bool, options: Value) -> UiDialog {
        serde_json::from_value(json!({
            "method": "custom", "componentId": id, "overlay": overlay, "overlayOptions": options,
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn dialogs_take_keys_before_components_and_queue() {
        let (mut state, theme, keys) = setup();
        assert_eq!(state.key_target(), KeyTarget::App);
        let (reply, _custom) = oneshot::channel();
        state.open(
            custom(7, false, Value::Null),
            reply,
            CancellationToken::new(),
            &theme,
            &keys,
        );
        assert_eq!(state.key_target(), KeyTarget::Component(7));
        assert_eq!(state.inline_custom(), Some(7));
        let confirm: UiDialog =
            serde_json::from_value(json!({"method": "confirm", "title": "t", "message": "m"}))
                .unwrap();
        let (first, first_answer) = oneshot::channel();
        state.open(
            confirm.clone(),
            first,
            CancellationToken::new(),
            &theme,
            &keys,
        );
        let (second, second_answer) = oneshot::channel();
        let cancel = CancellationToken::new();
        state.open(confirm, second, cancel.clone(), &theme, &keys);
        assert_eq!(state.key_target(), KeyTarget::Dialog);
        state.answer_dialog(Value::Bool(true), &theme, &keys);
        assert_eq!(first_answer.await.unwrap(), Value::Bool(true));
        // The second one opened; cancelling it (host timeout) drops it.
        assert_eq!(state.key_target(), KeyTarget::Dialog);
        cancel.cancel();
        state.purge(&theme, &keys);
        assert_eq!(state.key_target(), KeyTarget::Component(7));
        drop(second_answer);
        state.done(7);
        assert_eq!(state.key_target(), KeyTarget::App);
    }

    #[tokio::test]
    async fn overlays_capture_keys_unless_non_capturing() {
        let (mut state, theme, keys) = setup();
        let (reply, answer) = oneshot::channel();
        state.open(
            custom(1, true, json!({"width": 20})),
            reply,
            CancellationToken::new(),
            &theme,
            &keys,
        );
        assert_eq!(state.key_target(), KeyTarget::Component(1));
        state.show_overlay(2, Some(1), Some(json!({"nonCapturing": true})));
        assert_eq!(state.key_target(), KeyTarget::Component(1));
        assert_eq!(state.placed_overlays(80, 24).len(), 2);
        state.overlay_action(2, "focus");
        assert_eq!(state.key_target(), KeyTarget::Component(2));
        state.overlay_action(2, "setHidden");
        assert_eq!(state.key_target(), KeyTarget::Component(1));
        assert_eq!(state.placed_overlays(80, 24).len(), 1);
        state.hide_overlay(Some(1));
        state.overlay_action(1, "hide");
        assert_eq!(state.key_target(), KeyTarget::App);
        state.done(1);
        assert_eq!(answer.await.unwrap(), Value::Null);
    }
}
