//! How `/llama` writes sizes, contexts and model states (pi 1.6.0's texts).

use super::wire::RouterModel;

/// JavaScript's `Number.prototype.toFixed`: ties round up, not to even.
fn to_fixed(value: f64, digits: i32) -> String {
    let scale = 10f64.powi(digits);
    let rounded = (value * scale).round() / scale;
    format!("{rounded:.prec$}", prec = digits as usize)
}

/// A byte count in binary units: `512 B`, `1.50 KiB`, `12.3 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    let digits = if value >= 10.0 { 1 } else { 2 };
    format!("{} {unit}", to_fixed(value, digits))
}

/// A context size as the model list shows it: `4k`, `131k`, `512`.
fn context_text(tokens: f64) -> String {
    if tokens >= 1000.0 {
        format!("{}k", (tokens / 1000.0).round())
    } else {
        format!("{tokens}")
    }
}

/// The context a loaded model runs with, from its metadata or command line.
pub fn context_label(model: &RouterModel) -> Option<String> {
    let meta = model.meta.clone().unwrap_or_default();
    // As pi reads it: a reported `n_ctx` of 0 does not fall back to `n_ctx_train`.
    if let Some(tokens) = meta.n_ctx.or(meta.n_ctx_train).filter(|n| *n > 0) {
        return Some(context_text(tokens as f64));
    }
    let args = model.status.args.as_deref().unwrap_or_default();
    args.windows(2)
        .filter(|pair| matches!(pair[0].as_str(), "--ctx-size" | "-c" | "-ctx"))
        .find_map(|pair| {
            let value: f64 = pair[1].trim().parse().ok()?;
            (value.is_finite() && value > 0.0).then(|| context_text(value))
        })
}

/// The description beside a model in `/llama`: `loaded · 4k context`, `loading`, or nothing
/// for an unloaded one.
pub fn model_description(model: &RouterModel) -> String {
    let mut details = Vec::new();
    let loaded = model.is_loaded();
    if loaded {
        details.push("loaded".to_owned());
    } else if !model.has_status("unloaded") {
        details.push(model.status.value.clone());
    }
    if loaded && let Some(context) = context_label(model) {
        details.push(format!("{context} context"));
    }
    details.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bytes() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1024), "1.00 KiB");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(10 * 1024), "10.0 KiB");
        assert_eq!(format_bytes(1024 * 1024 - 1), "1024.0 KiB");
        assert_eq!(format_bytes(1024 * 1024), "1.00 MiB");
        assert_eq!(format_bytes(4_683_779_072), "4.36 GiB");
        assert_eq!(format_bytes(2 * 1024u64.pow(4)), "2.00 TiB");
        assert_eq!(format_bytes(5000 * 1024u64.pow(4)), "5000.0 TiB");
        // 1.125 KiB is a tie: JavaScript rounds it up.
        assert_eq!(format_bytes(1152), "1.13 KiB");
    }

    #[test]
    fn descriptions() {
        let m = |v: serde_json::Value| -> RouterModel { serde_json::from_value(v).unwrap() };
        assert_eq!(
            model_description(&m(
                json!({"id": "a", "status": {"value": "loaded"}, "meta": {"n_ctx": 4096}})
            )),
            "loaded · 4k context"
        );
        assert_eq!(
            model_description(&m(
                json!({"id": "a", "status": {"value": "sleeping", "args": ["-c", "131072"]}})
            )),
            "loaded · 131k context"
        );
        assert_eq!(
            model_description(&m(
                json!({"id": "a", "status": {"value": "loaded"}, "meta": {"n_ctx": 512}})
            )),
            "loaded · 512 context"
        );
        assert_eq!(
            model_description(&m(json!({"id": "a", "status": {"value": "loaded"}}))),
            "loaded"
        );
        assert_eq!(
            model_description(&m(
                json!({"id": "a", "status": {"value": "unloaded"}, "meta": {"n_ctx": 4096}})
            )),
            ""
        );
        assert_eq!(
            model_description(&m(json!({"id": "a", "status": {"value": "downloading"}}))),
            "downloading"
        );
    }
}
