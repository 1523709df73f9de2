//! `/bug`'s report (pi 1.6's `core/bug-report.ts`): what is collected, how secrets are
//! redacted, the zip archive it can be exported as, and the upload to Radius (which
//! `/share` uses too).

pub mod bundle;
pub mod crash_log;
pub mod redact;
pub mod summary;
pub mod upload;
pub mod zip;

use std::path::Path;

use serde_json::Value;

/// The custom entry recording a report in the session.
pub const BUG_REPORT_CUSTOM_ENTRY_TYPE: &str = "pi.bug-report";

/// Why making, writing or sending a report failed (the texts pi 1.6 shows).
#[derive(Debug, thiserror::Error)]
pub enum BugReportError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The request could not be made (`fetch failed`) or the client not built.
    #[error("{0}")]
    Request(String),
    /// The gateway refused the report.
    #[error("Bug report upload failed: {0}")]
    Upload(String),
    /// The gateway refused the artifact (`/share`).
    #[error("{0}")]
    Artifact(String),
    #[error("cancelled")]
    Cancelled,
}

/// A report ready to upload or export.
#[derive(Debug, Clone)]
pub struct BugReportBundle {
    /// `report.json`'s object.
    pub metadata: Value,
    /// `diagnostics.json`'s object.
    pub diagnostics: Value,
    /// The transcript (`session.jsonl`), when included.
    pub session_jsonl: Option<String>,
    /// The model's summary (`summary.md`), when one was written.
    pub summary: Option<String>,
}

/// One file of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFile {
    pub name: &'static str,
    pub content_type: &'static str,
    pub data: String,
}

/// `JSON.stringify(value, null, 2) + "\n"`.
pub fn pretty_json(value: &Value) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(text)
}

impl BugReportBundle {
    /// The report's id (`report.json`'s `id`).
    pub fn id(&self) -> &str {
        self.metadata["id"].as_str().unwrap_or_default()
    }

    /// The files uploaded or archived, in pi 1.6's order.
    pub fn files(&self) -> Result<Vec<ReportFile>, serde_json::Error> {
        let mut files = vec![
            ReportFile {
                name: "report.json",
                content_type: "application/json",
                data: pretty_json(&self.metadata)?,
            },
            ReportFile {
                name: "diagnostics.json",
                content_type: "application/json",
                data: pretty_json(&self.diagnostics)?,
            },
        ];
        if let Some(jsonl) = &self.session_jsonl {
            files.push(ReportFile {
                name: "session.jsonl",
                content_type: "application/x-ndjson",
                data: jsonl.clone(),
            });
        }
        if let Some(summary) = &self.summary {
            let data = if summary.ends_with('\n') {
                summary.clone()
            } else {
                format!("{summary}\n")
            };
            files.push(ReportFile {
                name: "summary.md",
                content_type: "text/markdown",
                data,
            });
        }
        Ok(files)
    }

    /// Writes the report as a zip archive.
    pub fn write_archive(&self, path: &Path) -> Result<(), BugReportError> {
        let files = self.files()?;
        let entries: Vec<zip::ZipEntry<'_>> = files
            .iter()
            .map(|f| zip::ZipEntry {
                name: f.name,
                data: f.data.as_bytes(),
            })
            .collect();
        let now = crate::session::time::now_millis().div_euclid(1000);
        std::fs::write(path, zip::create_zip(&entries, now)?)?;
        Ok(())
    }

    /// The `pi.bug-report` entry's data: how the report left.
    pub fn entry_data(&self, delivery: &str, path: Option<&Path>) -> Value {
        let session = &self.metadata["session"];
        let mut data = serde_json::json!({
            "id": self.metadata["id"],
            "createdAt": self.metadata["createdAt"],
            "hint": self.metadata["hint"],
            "sessionIncluded": session["included"],
            "summaryIncluded": session["summaryIncluded"],
            "delivery": delivery,
        });
        if let (Some(path), Value::Object(map)) = (path, &mut data) {
            map.insert("path".into(), Value::String(path.display().to_string()));
        }
        data
    }
}

/// `pi-bug-report-<id>.zip`.
pub fn archive_file_name(id: &str) -> String {
    format!("pi-bug-report-{id}.zip")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn files_come_in_order_and_end_with_newlines() {
        let bundle = BugReportBundle {
            metadata: json!({"schemaVersion": 1, "id": "r1", "createdAt": "t", "hint": null,
                "session": {"included": true, "summaryIncluded": true}}),
            diagnostics: json!({"schemaVersion": 1}),
            session_jsonl: Some("{}\n".into()),
            summary: Some("# Report".into()),
        };
        let files = bundle.files().unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [
                "report.json",
                "diagnostics.json",
                "session.jsonl",
                "summary.md"
            ]
        );
        assert_eq!(files[1].data, "{\n  \"schemaVersion\": 1\n}\n");
        assert_eq!(files[3].data, "# Report\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(archive_file_name(bundle.id()));
        bundle.write_archive(&path).unwrap();
        let read = zip::tests::read_zip(&std::fs::read(&path).unwrap());
        assert_eq!(read.len(), 4);
        assert_eq!(read[0].1, files[0].data.as_bytes());
        let keys: Vec<String> = bundle
            .entry_data("zip", Some(&path))
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(
            keys,
            [
                "id",
                "createdAt",
                "hint",
                "sessionIncluded",
                "summaryIncluded",
                "delivery",
                "path"
            ]
        );
    }
}
