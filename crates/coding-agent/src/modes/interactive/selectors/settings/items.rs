//! The rows of pi 1.6's `/settings`, in its order, with its labels, descriptions and
//! values, and where each one is written in `settings.json`.

use serde_json::Value;

use super::list::SettingItem;
use crate::config::settings_store::SettingsStore;

/// The `httpIdleTimeoutMs` choices and their labels.
pub const HTTP_IDLE_TIMEOUT_CHOICES: [(&str, u64); 5] = [
    ("30 sec", 30_000),
    ("1 min", 60_000),
    ("2 min", 120_000),
    ("5 min", 300_000),
    ("disabled", 0),
];

/// `defaultProjectTrust` values and their labels.
pub const PROJECT_TRUST_LABELS: [(&str, &str); 3] = [
    ("ask", "Ask"),
    ("always", "Always trust"),
    ("never", "Never trust"),
];

/// The label of an idle timeout (`N sec` when it is not one of the choices).
pub fn format_idle_timeout(ms: u64) -> String {
    HTTP_IDLE_TIMEOUT_CHOICES
        .iter()
        .find(|(_, v)| *v == ms)
        .map_or_else(
            || format!("{} sec", ms as f64 / 1000.0),
            |(l, _)| (*l).to_owned(),
        )
}

/// What the rows show that the settings files alone do not say.
pub struct LiveState {
    pub auto_compact: bool,
    pub steering_mode: String,
    pub follow_up_mode: String,
    pub hide_thinking: bool,
    pub tui_mode: String,
    pub theme: String,
    pub model_thinking_overrides: usize,
    /// Display text of `app.message.followUp` and `app.thinking.cycle`.
    pub follow_up_key: String,
    pub cycle_thinking_key: String,
}

/// Where a row's new value goes in the global `settings.json`.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    Top(&'static str, Value),
    Nested(&'static str, &'static str, Value),
}

fn flag(store: &SettingsStore, path: &[&str], default: bool) -> String {
    store
        .value(path)
        .and_then(|v| v.as_bool())
        .unwrap_or(default)
        .to_string()
}

fn text(store: &SettingsStore, path: &[&str], allowed: &[&str], default: &str) -> String {
    store
        .value(path)
        .and_then(|v| v.as_str().map(str::to_owned))
        .filter(|v| allowed.contains(&v.as_str()))
        .unwrap_or_else(|| default.to_owned())
}

fn number(store: &SettingsStore, path: &[&str], range: (i64, i64), default: i64) -> String {
    store
        .value(path)
        .and_then(|v| v.as_f64())
        .map_or(default, |n| (n.floor() as i64).clamp(range.0, range.1))
        .to_string()
}

/// The summary shown on the per-model thinking row.
pub fn overrides_summary(count: usize) -> String {
    if count == 0 {
        "none".to_owned()
    } else {
        format!("{count} configured")
    }
}

/// Every row, in pi 1.6.0's order; "Show images" and "Image width" only where the terminal
/// shows inline images.
pub fn build_items(store: &SettingsStore, live: &LiveState) -> Vec<SettingItem> {
    let mut items = base_items(store, live);
    if pi_tui::capabilities::get().images.is_some() {
        let width = store
            .value(&["terminal", "imageWidthCells"])
            .and_then(|v| v.as_f64())
            .filter(|n| n.is_finite())
            .map_or(60, |n| (n.floor() as i64).max(1));
        items.splice(
            1..1,
            [
                SettingItem::cycle(
                    "show-images",
                    "Show images",
                    "Render images inline in terminal",
                    flag(store, &["terminal", "showImages"], true),
                    &["true", "false"],
                ),
                SettingItem::cycle(
                    "image-width-cells",
                    "Image width",
                    "Preferred inline image width in terminal cells",
                    width.to_string(),
                    &["60", "80", "120"],
                ),
            ],
        );
    }
    items
}

fn base_items(store: &SettingsStore, live: &LiveState) -> Vec<SettingItem> {
    let settings = store.get();
    let bools = ["true", "false"];
    let idle = format_idle_timeout(settings.http_idle_timeout_ms().unwrap_or(0));
    let quiet = match store.value(&["quietStartup"]) {
        Some(Value::String(s)) if s == "header" => "header".to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => "false".to_owned(),
    };
    let trust = store
        .global_value("defaultProjectTrust")
        .and_then(|v| v.as_str().map(str::to_owned))
        .and_then(|v| PROJECT_TRUST_LABELS.iter().find(|(k, _)| *k == v))
        .map_or("Ask", |(_, label)| label);
    let wheel = settings.fullscreen_wheel_scroll_lines();
    let wheel_current = wheel.to_string();
    let mut wheel_values: Vec<String> = vec!["auto".to_owned()];
    let mut numbers: Vec<u16> = vec![1, 2, 3, 5, 10];
    if let crate::config::tui_settings::WheelLines::Fixed(n) = wheel {
        numbers.push(n);
    }
    numbers.sort_unstable();
    numbers.dedup();
    wheel_values.extend(numbers.iter().map(u16::to_string));
    let wheel_refs: Vec<&str> = wheel_values.iter().map(String::as_str).collect();
    let idle_labels: Vec<&str> = HTTP_IDLE_TIMEOUT_CHOICES.iter().map(|(l, _)| *l).collect();
    let trust_labels: Vec<&str> = PROJECT_TRUST_LABELS.iter().map(|(_, l)| *l).collect();
    vec![
        SettingItem::cycle(
            "autocompact",
            "Auto-compact",
            "Automatically compact context when it gets too large",
            live.auto_compact.to_string(),
            &bools,
        ),
        SettingItem::cycle(
            "auto-resize-images",
            "Auto-resize images",
            "Resize large images to 2000x2000 max for better model compatibility",
            flag(store, &["images", "autoResize"], true),
            &bools,
        ),
        SettingItem::cycle(
            "block-images",
            "Block images",
            "Prevent images from being sent to LLM providers",
            flag(store, &["images", "blockImages"], false),
            &bools,
        ),
        SettingItem::cycle(
            "skill-commands",
            "Skill commands",
            "Register skills as /skill:name commands",
            flag(store, &["enableSkillCommands"], true),
            &bools,
        ),
        SettingItem::cycle(
            "show-hardware-cursor",
            "Show hardware cursor",
            "Use the terminal cursor instead of Pi's drawn cursor",
            flag(store, &["showHardwareCursor"], false),
            &bools,
        ),
        SettingItem::cycle(
            "editor-padding",
            "Editor padding",
            "Horizontal padding for input editor (0-3)",
            number(store, &["editorPaddingX"], (0, 3), 0),
            &["0", "1", "2", "3"],
        ),
        SettingItem::cycle(
            "output-padding",
            "Output padding",
            "Horizontal padding for messages, tool output, and command output",
            number(store, &["outputPad"], (0, 1), 1),
            &["0", "1"],
        ),
        SettingItem::cycle(
            "autocomplete-max-visible",
            "Autocomplete max items",
            "Max visible items in autocomplete dropdown (3-20)",
            number(store, &["autocompleteMaxVisible"], (3, 20), 5),
            &["3", "5", "7", "10", "15", "20"],
        ),
        SettingItem::cycle(
            "clear-on-shrink",
            "Clear on shrink",
            "Clear empty rows when content shrinks (may cause flicker)",
            flag(store, &["terminal", "clearOnShrink"], false),
            &bools,
        ),
        SettingItem::cycle(
            "terminal-progress",
            "Terminal progress",
            "Show OSC 9;4 progress indicators in the terminal tab bar",
            flag(store, &["terminal", "showTerminalProgress"], false),
            &bools,
        ),
        SettingItem::cycle(
            "steering-mode",
            "Steering mode",
            "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.",
            live.steering_mode.clone(),
            &["one-at-a-time", "all"],
        ),
        SettingItem::cycle(
            "follow-up-mode",
            "Follow-up mode",
            &format!(
                "{} queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.",
                live.follow_up_key
            ),
            live.follow_up_mode.clone(),
            &["one-at-a-time", "all"],
        ),
        SettingItem::cycle(
            "transport",
            "Transport",
            "Preferred transport for providers that support multiple transports",
            text(
                store,
                &["transport"],
                &["sse", "websocket", "websocket-cached", "auto"],
                "auto",
            ),
            &["sse", "websocket", "websocket-cached", "auto"],
        ),
        SettingItem::cycle(
            "share-destination",
            "Session share destination",
            "Where to upload sessions with /share (auto prefers Radius when authenticated, otherwise GitHub Gist)",
            text(
                store,
                &["sessionShareDestination"],
                &["auto", "gist", "radius"],
                "auto",
            ),
            &["auto", "gist", "radius"],
        ),
        SettingItem::cycle(
            "http-idle-timeout",
            "HTTP idle timeout",
            "Maximum idle gap while waiting for HTTP headers or body chunks. Disable for local models that pause longer than five minutes.",
            idle,
            &idle_labels,
        ),
        SettingItem::cycle(
            "cache-warming-mode",
            "Cache warming",
            "off; streaming while the agent runs; idle also between runs while continuation stays profitable",
            store
                .global_value("cacheWarming")
                .and_then(|v| v.as_str().map(str::to_owned))
                .filter(|v| ["off", "streaming", "idle"].contains(&v.as_str()))
                .unwrap_or_else(|| "idle".to_owned()),
            &["off", "streaming", "idle"],
        ),
        SettingItem::cycle(
            "hide-thinking",
            "Hide thinking",
            "Hide thinking blocks in assistant responses",
            live.hide_thinking.to_string(),
            &bools,
        ),
        SettingItem::cycle(
            "mermaid-rendering",
            "Mermaid diagrams",
            "Render Mermaid code blocks as Unicode diagrams",
            text(
                store,
                &["markdown", "mermaid"],
                &["off", "final", "streaming"],
                "streaming",
            ),
            &["off", "final", "streaming"],
        ),
        SettingItem::cycle(
            "cache-miss-notices",
            "Cache miss notices",
            "Show transcript notices for cache costs and provider recovery diagnostics",
            flag(store, &["showCacheMissNotices"], false),
            &bools,
        ),
        SettingItem::cycle(
            "collapse-changelog",
            "Collapse changelog",
            "Show condensed changelog after updates",
            flag(store, &["collapseChangelog"], false),
            &bools,
        ),
        SettingItem::cycle(
            "quiet-startup",
            "Quiet startup",
            "Disable verbose printing at startup (header: keep only the startup header)",
            quiet,
            &["true", "header", "false"],
        ),
        SettingItem::cycle(
            "install-telemetry",
            "Install telemetry",
            "Send an anonymous version/update ping after changelog-detected updates",
            flag(store, &["enableInstallTelemetry"], true),
            &bools,
        ),
        SettingItem::cycle(
            "default-project-trust",
            "Default project trust",
            "Fallback behavior when no extension or saved trust decision decides project trust",
            trust,
            &trust_labels,
        ),
        SettingItem::cycle(
            "double-escape-action",
            "Double-escape action",
            "Action when pressing Escape twice with empty editor",
            text(
                store,
                &["doubleEscapeAction"],
                &["tree", "fork", "none"],
                "tree",
            ),
            &["tree", "fork", "none"],
        ),
        SettingItem::cycle(
            "tree-filter-mode",
            "Tree filter mode",
            "Default filter when opening /tree",
            text(
                store,
                &["treeFilterMode"],
                &["default", "no-tools", "user-only", "labeled-only", "all"],
                "default",
            ),
            &["default", "no-tools", "user-only", "labeled-only", "all"],
        ),
        SettingItem::submenu(
            "warnings",
            "Warnings",
            "Enable or disable individual warnings",
            "configure",
        ),
        SettingItem::submenu(
            "model-thinking",
            "Default thinking level per model",
            &format!(
                "Override the default thinking level for specific models. {} cycles in-session.",
                live.cycle_thinking_key
            ),
            overrides_summary(live.model_thinking_overrides),
        ),
        SettingItem::cycle(
            "tui-mode",
            "TUI mode",
            "Interface layout; regular mode uses the terminal's normal scrollback",
            live.tui_mode.clone(),
            &["regular", "fullscreen"],
        ),
        SettingItem::cycle(
            "fullscreen-exit-output",
            "Fullscreen exit output",
            "Print the transcript or only a session resume hint when exiting fullscreen mode",
            settings.fullscreen_exit_output().as_str(),
            &["transcript", "resume-hint"],
        ),
        SettingItem::cycle(
            "fullscreen-scrollbar",
            "Fullscreen scrollbar",
            "Scrollbar behavior in fullscreen mode; has no effect in regular mode",
            settings.fullscreen_scrollbar().as_str(),
            &["auto", "always", "hidden"],
        ),
        SettingItem::cycle(
            "fullscreen-copy-on-select",
            "Fullscreen copy on select",
            "Automatically copy selected text in fullscreen mode; disable to copy selections with Ctrl+X",
            settings.fullscreen_copy_on_select().to_string(),
            &bools,
        ),
        SettingItem::cycle(
            "fullscreen-wheel-scroll-lines",
            "Fullscreen wheel scrolling",
            "Lines per mouse-wheel event in fullscreen mode; 'auto' speeds up fast wheel spins where the terminal does not",
            wheel_current,
            &wheel_refs,
        ),
        SettingItem::submenu(
            "theme",
            "Theme",
            "Color theme for the interface",
            live.theme.clone(),
        ),
    ]
}

/// Where the value `value` of row `id` is written, as pi 1.6's settings manager writes it.
pub fn write_for(id: &str, value: &str) -> Option<Write> {
    let boolean = || Value::Bool(value == "true");
    let string = || Value::String(value.to_owned());
    let int = || value.parse::<i64>().ok().map(Value::from);
    Some(match id {
        "autocompact" => Write::Nested("compaction", "enabled", boolean()),
        "show-images" => Write::Nested("terminal", "showImages", boolean()),
        "image-width-cells" => Write::Nested("terminal", "imageWidthCells", int()?),
        "auto-resize-images" => Write::Nested("images", "autoResize", boolean()),
        "block-images" => Write::Nested("images", "blockImages", boolean()),
        "skill-commands" => Write::Top("enableSkillCommands", boolean()),
        "show-hardware-cursor" => Write::Top("showHardwareCursor", boolean()),
        "editor-padding" => Write::Top("editorPaddingX", int()?),
        "output-padding" => Write::Top("outputPad", int()?),
        "autocomplete-max-visible" => Write::Top("autocompleteMaxVisible", int()?),
        "clear-on-shrink" => Write::Nested("terminal", "clearOnShrink", boolean()),
        "terminal-progress" => Write::Nested("terminal", "showTerminalProgress", boolean()),
        "steering-mode" => Write::Top("steeringMode", string()),
        "follow-up-mode" => Write::Top("followUpMode", string()),
        "transport" => Write::Top("transport", string()),
        "share-destination" => Write::Top("sessionShareDestination", string()),
        "http-idle-timeout" => {
            let (_, ms) = HTTP_IDLE_TIMEOUT_CHOICES
                .iter()
                .find(|(l, _)| *l == value)?;
            Write::Top("httpIdleTimeoutMs", Value::from(*ms))
        }
        "cache-warming-mode" => Write::Top("cacheWarming", string()),
        "hide-thinking" => Write::Top("hideThinkingBlock", boolean()),
        "mermaid-rendering" => Write::Nested("markdown", "mermaid", string()),
        "cache-miss-notices" => Write::Top("showCacheMissNotices", boolean()),
        "collapse-changelog" => Write::Top("collapseChangelog", boolean()),
        "quiet-startup" => Write::Top(
            "quietStartup",
            if value == "header" {
                string()
            } else {
                boolean()
            },
        ),
        "install-telemetry" => Write::Top("enableInstallTelemetry", boolean()),
        "default-project-trust" => {
            let (key, _) = PROJECT_TRUST_LABELS.iter().find(|(_, l)| *l == value)?;
            Write::Top("defaultProjectTrust", Value::from(*key))
        }
        "double-escape-action" => Write::Top("doubleEscapeAction", string()),
        "tree-filter-mode" => Write::Top("treeFilterMode", string()),
        "tui-mode" => Write::Top("tuiMode", string()),
        "fullscreen-exit-output" => Write::Top("fullscreenExitOutput", string()),
        "fullscreen-scrollbar" => Write::Top("fullscreenScrollbar", string()),
        "fullscreen-copy-on-select" => Write::Top("fullscreenCopyOnSelect", boolean()),
        "fullscreen-wheel-scroll-lines" => Write::Top(
            "fullscreenWheelScrollLines",
            if value == "auto" {
                string()
            } else {
                Value::from(int()?.as_i64()?.clamp(1, 100))
            },
        ),
        "theme" => Write::Top("theme", string()),
        _ => return None,
    })
}

impl Write {
    /// Writes it to the global settings file.
    pub fn apply(self, store: &SettingsStore) {
        match self {
            Write::Top(key, value) => store.set(key, value),
            Write::Nested(key, nested, value) => store.set_nested(key, nested, value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_timeouts_are_labelled_as_pi_labels_them() {
        assert_eq!(format_idle_timeout(300_000), "5 min");
        assert_eq!(format_idle_timeout(0), "disabled");
        assert_eq!(format_idle_timeout(45_000), "45 sec");
        assert_eq!(format_idle_timeout(1_500), "1.5 sec");
    }

    #[test]
    fn values_are_written_with_their_json_types() {
        assert_eq!(
            write_for("autocompact", "false"),
            Some(Write::Nested("compaction", "enabled", Value::Bool(false)))
        );
        assert_eq!(
            write_for("quiet-startup", "header"),
            Some(Write::Top("quietStartup", Value::from("header")))
        );
        assert_eq!(
            write_for("fullscreen-wheel-scroll-lines", "5"),
            Some(Write::Top("fullscreenWheelScrollLines", Value::from(5)))
        );
        assert_eq!(
            write_for("default-project-trust", "Never trust"),
            Some(Write::Top("defaultProjectTrust", Value::from("never")))
        );
        assert_eq!(
            write_for("http-idle-timeout", "disabled"),
            Some(Write::Top("httpIdleTimeoutMs", Value::from(0)))
        );
    }
}
