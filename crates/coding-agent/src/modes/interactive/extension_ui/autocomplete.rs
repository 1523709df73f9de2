//! Slash completion with extension commands: their names and descriptions next to the
//! built-in ones (read again on every `/` query, so commands registered later show up),
//! and their argument completions (`getArgumentCompletions`, asked from the host through
//! `command_completions`) after `/name `. Providers extensions stack on top
//! (`ctx.ui.addAutocompleteProvider`) are asked first (`autocomplete`); when they defer,
//! pi completes as usual.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tui::autocomplete::{
    AutocompleteProvider, CombinedAutocompleteProvider, SlashCommand, Suggestion, Suggestions,
};
use serde_json::{Value, json};

use crate::extensions::ExtensionRuntime;

/// How long completion waits for the host before offering nothing.
const HOST_TIMEOUT: Duration = Duration::from_millis(500);

/// pi's completion plus extension commands.
pub(crate) struct ExtensionAutocomplete {
    inner: Mutex<CombinedAutocompleteProvider>,
    /// Built-in commands, templates and skills (extension commands are added per query).
    base: Vec<SlashCommand>,
    runtime: Arc<ExtensionRuntime>,
    /// Extensions added providers (set by the host's `setAutocomplete`).
    stacked: Arc<AtomicBool>,
}

impl ExtensionAutocomplete {
    pub(crate) fn new(
        base: Vec<SlashCommand>,
        cwd: std::path::PathBuf,
        runtime: Arc<ExtensionRuntime>,
        stacked: Arc<AtomicBool>,
    ) -> Self {
        let mut provider = ExtensionAutocomplete {
            inner: Mutex::new(CombinedAutocompleteProvider::new(base.clone(), cwd)),
            base,
            runtime,
            stacked,
        };
        provider.refresh_commands();
        provider
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, CombinedAutocompleteProvider> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The commands offered: pi's, then the extensions' (with descriptions).
    fn commands(&self) -> Vec<SlashCommand> {
        let mut commands = self.base.clone();
        if !self.runtime.is_empty() {
            for command in self.runtime.commands() {
                if commands.iter().any(|c| c.name == command.invocation_name) {
                    continue;
                }
                commands.push(SlashCommand {
                    name: command.invocation_name,
                    description: command.def.description.filter(|d| !d.is_empty()),
                });
            }
        }
        commands
    }

    fn refresh_commands(&mut self) {
        let commands = self.commands();
        self.inner().set_commands(commands);
    }

    /// The suggestions of the providers extensions stacked, `None` when they defer to
    /// pi's (or the host does not answer in time).
    fn stacked_suggestions(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        force: bool,
    ) -> Option<Suggestions> {
        let runtime = Arc::clone(&self.runtime);
        let fields = json!({
            "lines": lines,
            "cursorLine": cursor_line,
            "cursorCol": utf16_col(lines.get(cursor_line).map_or("", String::as_str), cursor_col),
            "force": force,
        });
        let answer = block_on_runtime(async move {
            tokio::time::timeout(HOST_TIMEOUT, runtime.host_call("autocomplete", fields))
                .await
                .ok()
                .flatten()
        })?;
        let prefix = answer.get("prefix").and_then(Value::as_str)?.to_owned();
        let items = suggestion_items(answer.get("items")?);
        (!items.is_empty()).then_some(Suggestions { items, prefix })
    }

    /// `getArgumentCompletions` of an extension command, `None` when it has none.
    fn argument_completions(&self, name: &str, prefix: &str) -> Option<Suggestions> {
        let command = self
            .runtime
            .commands()
            .into_iter()
            .find(|c| c.invocation_name == name && c.def.has_argument_completions)?;
        let runtime = Arc::clone(&self.runtime);
        let fields = json!({"name": command.invocation_name, "prefix": prefix});
        let answer = block_on_runtime(async move {
            tokio::time::timeout(
                HOST_TIMEOUT,
                runtime.host_call("command_completions", fields),
            )
            .await
            .ok()
            .flatten()
        })?;
        let items = suggestion_items(&answer);
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: prefix.to_owned(),
        })
    }
}

/// Autocomplete items as pi-tui's `AutocompleteItem`s (`value`, `label`, `description`).
fn suggestion_items(items: &Value) -> Vec<Suggestion> {
    items
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|item| {
            let value = item.get("value").and_then(Value::as_str)?.to_owned();
            let label = item
                .get("label")
                .and_then(Value::as_str)
                .map_or_else(|| value.clone(), str::to_owned);
            let description = item
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(str::to_owned);
            Some(Suggestion {
                value,
                label,
                description,
            })
        })
        .collect()
}

/// A byte column as the UTF-16 column JavaScript strings count.
fn utf16_col(line: &str, byte_col: usize) -> usize {
    let mut col = byte_col.min(line.len());
    while !line.is_char_boundary(col) {
        col -= 1;
    }
    line[..col].encode_utf16().count()
}

/// Runs `future` to completion from synchronous code on the UI thread: on a helper
/// thread through the current runtime's handle (the UI thread may itself be inside
/// `block_on`). `None` outside a runtime.
fn block_on_runtime<T: Send>(
    future: impl std::future::Future<Output = Option<T>> + Send,
) -> Option<T> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    std::thread::scope(|scope| scope.spawn(|| handle.block_on(future)).join().ok()?)
}

impl AutocompleteProvider for ExtensionAutocomplete {
    fn suggestions(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        force: bool,
    ) -> Option<Suggestions> {
        if self.stacked.load(Ordering::SeqCst)
            && let Some(found) = self.stacked_suggestions(lines, cursor_line, cursor_col, force)
        {
            return Some(found);
        }
        let line = lines.get(cursor_line).map_or("", String::as_str);
        let mut col = cursor_col.min(line.len());
        while !line.is_char_boundary(col) {
            col -= 1;
        }
        if !force && let Some(rest) = line[..col].strip_prefix('/') {
            match rest.split_once(' ') {
                Some((name, prefix)) => {
                    if !self.runtime.is_empty()
                        && let Some(found) = self.argument_completions(name, prefix)
                    {
                        return Some(found);
                    }
                }
                None => {
                    let commands = self.commands();
                    self.inner().set_commands(commands);
                }
            }
        }
        self.inner()
            .suggestions(lines, cursor_line, cursor_col, force)
    }

    fn refresh(&self) {
        self.inner().refresh();
    }

    fn should_trigger_file_completion(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
    ) -> bool {
        self.inner()
            .should_trigger_file_completion(lines, cursor_line, cursor_col)
    }
}
