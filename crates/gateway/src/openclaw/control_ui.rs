//! OpenClaw's web Control UI, served from the `openclaw` package's own static files
//! (`dist/control-ui`) on the OpenClaw listener: the page connects back to the same origin.
//! Paths are resolved inside the folder (no `..`, no symlink out); unknown paths get the
//! page, as the UI routes on the client.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

/// The content type of a file by its extension.
fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "txt" => "text/plain; charset=utf-8",
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

/// The file a request path names inside `root`, or `None` when it leads elsewhere.
fn file_for(root: &Path, request: &str) -> Option<PathBuf> {
    let relative = request
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_start_matches('/');
    if relative.split('/').any(|part| part == "..") {
        return None;
    }
    let root = std::fs::canonicalize(root).ok()?;
    let candidate = std::fs::canonicalize(root.join(relative)).ok()?;
    (candidate.starts_with(&root) && candidate.is_file()).then_some(candidate)
}

fn respond(status: StatusCode, kind: &str, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    if let Ok(value) = HeaderValue::from_str(kind) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Answers a GET for `path` from `root`: the file, else the page itself.
pub async fn serve(root: PathBuf, path: String) -> Response {
    let found = tokio::task::spawn_blocking(move || {
        let file = file_for(&root, &path).or_else(|| file_for(&root, "index.html"))?;
        let body = std::fs::read(&file).ok()?;
        Some((content_type(&file), body))
    })
    .await
    .ok()
    .flatten();
    match found {
        Some((kind, body)) => respond(StatusCode::OK, kind, body),
        None => respond(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            b"The Control UI is not installed here.".to_vec(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_ui_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ui");
        std::fs::create_dir_all(root.join("assets")).unwrap();
        std::fs::write(root.join("index.html"), "<html>").unwrap();
        std::fs::write(root.join("assets/app.js"), "x").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
        assert!(file_for(&root, "/assets/app.js?v=1").is_some());
        assert!(file_for(&root, "/../secret").is_none());
        assert!(file_for(&root, "/link").is_none());
        assert!(file_for(&root, "/nothing").is_none());
        assert_eq!(
            content_type(Path::new("a.mjs")),
            "text/javascript; charset=utf-8"
        );
    }
}
