//! Load and download progress as the router reports it (in `/models/sse` events and in a
//! downloading model's status), turned into what `/llama` shows.

use serde_json::Value;

use super::format::format_bytes;

/// One progress state: a message, how far (0–1) when known, and a detail line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Progress {
    pub message: String,
    pub ratio: Option<f64>,
    pub detail: Option<String>,
}

impl Progress {
    /// A message alone.
    pub fn message(text: &str) -> Self {
        Progress {
            message: text.to_owned(),
            ..Self::default()
        }
    }
}

/// `data.progress` of a model-status event: the stage being loaded (`current` or `stage`),
/// the list of stages, and how far the stage is (`value`).
pub fn load_progress(data: &Value) -> Option<Progress> {
    let progress = data.get("progress")?.as_object()?;
    let stage = progress
        .get("current")
        .and_then(Value::as_str)
        .or_else(|| progress.get("stage").and_then(Value::as_str));
    let stages: Vec<&str> = progress
        .get("stages")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let stage_ratio = progress
        .get("value")
        .and_then(Value::as_f64)
        .map(|v| v.clamp(0.0, 1.0));
    let mut ratio = stage_ratio;
    if let Some(stage) = stage
        && let Some(index) = stages.iter().position(|s| *s == stage)
    {
        ratio = Some((index as f64 + stage_ratio.unwrap_or(0.0)) / stages.len() as f64);
    }
    Some(Progress {
        message: match stage {
            Some(stage) => format!("Loading {}", stage.replace('_', " ")),
            None => "Loading model".to_owned(),
        },
        ratio,
        detail: None,
    })
}

/// Download progress: per-file `{done, total}` byte counts, directly or under `progress`;
/// `None` until a total is known.
pub fn download_progress(data: &Value) -> Option<Progress> {
    let files = match data.get("progress") {
        Some(nested @ Value::Object(_)) => nested,
        _ => data,
    };
    let (mut done, mut total) = (0f64, 0f64);
    for entry in files.as_object()?.values() {
        let (Some(d), Some(t)) = (
            entry.get("done").and_then(Value::as_f64),
            entry.get("total").and_then(Value::as_f64),
        ) else {
            continue;
        };
        done += d;
        total += t;
    }
    if total <= 0.0 {
        return None;
    }
    Some(Progress {
        message: "Downloading model".to_owned(),
        ratio: Some(done / total),
        detail: Some(format!(
            "{} / {}",
            format_bytes(done.max(0.0) as u64),
            format_bytes(total as u64)
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn load_stages() {
        let p = load_progress(&json!({"status": "loading", "progress": {
            "current": "tensor_data", "stages": ["metadata", "tensor_data", "warmup"], "value": 0.5}}))
        .unwrap();
        assert_eq!(p.message, "Loading tensor data");
        assert_eq!(p.ratio, Some(0.5));
        let p = load_progress(&json!({"progress": {"value": 3}})).unwrap();
        assert_eq!((p.message.as_str(), p.ratio), ("Loading model", Some(1.0)));
        assert_eq!(load_progress(&json!({"status": "loaded"})), None);
    }

    #[test]
    fn download_bytes() {
        let p = download_progress(&json!({"a.gguf": {"done": 512, "total": 1024},
            "b.gguf": {"done": 0, "total": 1024}, "other": 1}))
        .unwrap();
        assert_eq!(p.ratio, Some(0.25));
        assert_eq!(p.detail.as_deref(), Some("512 B / 2.00 KiB"));
        let nested =
            download_progress(&json!({"progress": {"f": {"done": 1, "total": 2}}})).unwrap();
        assert_eq!(nested.ratio, Some(0.5));
        assert_eq!(
            download_progress(&json!({"f": {"done": 0, "total": 0}})),
            None
        );
    }
}
