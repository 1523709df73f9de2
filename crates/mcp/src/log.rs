//! `mcp.log`: what servers log (`notifications/message`) and write to stderr, one line per
//! message as `<time> [<server>] <level> <logger>: <text>`, continuation lines indented.
//! Several pi processes may append to it; past 5 MB it moves to `mcp.log.1`. Writing is best
//! effort: a log that cannot be written never fails a tool.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;

const MAX_LOG_BYTES: u64 = 5 * 1024 * 1024;

/// The shared log file.
pub struct ServerLog {
    path: PathBuf,
    now: fn() -> String,
    size: Mutex<Option<u64>>,
}

impl ServerLog {
    /// A log at `path`; `now` gives the ISO time of each line.
    pub fn new(path: PathBuf, now: fn() -> String) -> Self {
        Self {
            path,
            now,
            size: Mutex::new(None),
        }
    }

    /// Appends one `notifications/message`.
    pub fn message(&self, server: &str, level: &str, logger: Option<&str>, data: &Value) {
        let text = match data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        self.append(&format_line(&(self.now)(), server, level, logger, &text));
    }

    /// Appends a line a server wrote to stderr.
    pub fn stderr(&self, server: &str, line: &str) {
        self.append(&format_line(&(self.now)(), server, "stderr", None, line));
    }

    fn append(&self, line: &str) {
        let Ok(mut size) = self.size.lock() else {
            return;
        };
        if size.is_none() {
            if let Some(dir) = self.path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            *size = Some(self.current_size());
        }
        if size.is_some_and(|s| s > MAX_LOG_BYTES) {
            // Another process may have rotated it already.
            if self.current_size() > MAX_LOG_BYTES {
                let mut rotated = self.path.clone().into_os_string();
                rotated.push(".1");
                let _ = std::fs::rename(&self.path, rotated);
            }
            *size = Some(self.current_size());
        }
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if written.is_ok() {
            *size = Some(size.unwrap_or(0) + line.len() as u64);
        }
    }

    fn current_size(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }
}

/// One log line.
pub fn format_line(
    time: &str,
    server: &str,
    level: &str,
    logger: Option<&str>,
    text: &str,
) -> String {
    let logger = logger
        .filter(|l| !l.is_empty())
        .map(|l| format!(" {l}:"))
        .unwrap_or_default();
    let text = text.replace("\r\n", "\n").replace('\n', "\n    ");
    format!("{time} [{server}] {level}{logger} {text}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_pi_writes_them() {
        assert_eq!(
            format_line("T", "demo", "info", Some("srv"), "a\nb"),
            "T [demo] info srv: a\n    b\n"
        );
        assert_eq!(
            format_line("T", "demo", "error", None, "x"),
            "T [demo] error x\n"
        );
    }
}
