//! A local npm registry for the package tests: it serves packuments and tarballs of
//! packages the test publishes (and can change while pi runs), so the machine's real npm
//! installs and updates them without the network. Reached through `npm_config_registry`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One published package: its versions' tarballs and the `latest` dist-tag.
#[derive(Default)]
struct Package {
    tarballs: BTreeMap<String, Vec<u8>>,
    latest: String,
}

/// The registry server; it stops when dropped.
pub struct NpmRegistry {
    port: u16,
    packages: Arc<Mutex<HashMap<String, Package>>>,
    stop: Arc<AtomicBool>,
    dir: tempfile::TempDir,
}

/// Whether npm can run here (tests needing it skip otherwise).
pub fn npm_available() -> bool {
    let found = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: npm is not installed");
    }
    found
}

impl NpmRegistry {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let packages: Arc<Mutex<HashMap<String, Package>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, stopping) = (packages.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = shared.clone();
                std::thread::spawn(move || serve(stream, port, &shared));
            }
        });
        Self {
            port,
            packages,
            stop,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// `http://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// npm's cache for this registry's runs (kept apart from the user's).
    pub fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// Points npm (run by `command` or its children) at this registry.
    pub fn apply(&self, command: &mut Command) {
        command
            .env("npm_config_registry", self.url())
            .env("npm_config_cache", self.cache_dir())
            .env("npm_config_update_notifier", "false")
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false");
    }

    /// Publishes `version` of `name` with `files` (relative path, text) beside a
    /// `package.json` of that name and version, and makes it `latest`.
    pub fn publish(&self, name: &str, version: &str, manifest: Value, files: &[(&str, &str)]) {
        self.publish_as(name, version, version, manifest, files);
    }

    /// [`publish`](Self::publish) with the tarball's `package.json` saying `content_version`:
    /// what npm installs when its metadata is stale and it fetches the old package.
    pub fn publish_as(
        &self,
        name: &str,
        version: &str,
        content_version: &str,
        mut manifest: Value,
        files: &[(&str, &str)],
    ) {
        manifest["name"] = json!(name);
        manifest["version"] = json!(content_version);
        let root = self.dir.path().join(format!("src/{name}-{version}"));
        let package = root.join("package");
        write(&package.join("package.json"), &manifest.to_string());
        for (path, text) in files {
            write(&package.join(path), text);
        }
        let tarball = root.join("package.tgz");
        let status = Command::new("tar")
            .arg("-czf")
            .arg(&tarball)
            .arg("-C")
            .arg(&root)
            .arg("package")
            .status()
            .unwrap();
        assert!(status.success(), "tar failed");
        let mut packages = self.packages.lock().unwrap();
        let entry = packages.entry(name.to_owned()).or_default();
        entry
            .tarballs
            .insert(version.to_owned(), std::fs::read(&tarball).unwrap());
        entry.latest = version.to_owned();
    }

    /// Moves the `latest` dist-tag (a registry whose newest is older than what is
    /// installed).
    pub fn set_latest(&self, name: &str, version: &str) {
        let mut packages = self.packages.lock().unwrap();
        packages.get_mut(name).unwrap().latest = version.to_owned();
    }
}

impl Drop for NpmRegistry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Answers one request: `GET /<name>` (the packument) or `GET /<name>/-/<file>.tgz`.
fn serve(stream: TcpStream, port: u16, packages: &Mutex<HashMap<String, Package>>) {
    let mut reader = BufReader::new(stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header.trim().is_empty() => break,
            Ok(_) => {}
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let path = path
        .trim_start_matches('/')
        .replace("%2f", "/")
        .replace("%2F", "/");
    let (status, body, kind) = {
        let packages = packages.lock().unwrap();
        match path.split_once("/-/") {
            Some((name, file)) => {
                let version = file
                    .strip_suffix(".tgz")
                    .and_then(|f| f.rsplit_once('-'))
                    .map(|(_, v)| v.to_owned());
                match packages
                    .get(name)
                    .and_then(|p| p.tarballs.get(version.as_deref().unwrap_or_default()))
                {
                    Some(bytes) => ("200 OK", bytes.clone(), "application/octet-stream"),
                    None => ("404 Not Found", b"{}".to_vec(), "application/json"),
                }
            }
            None => match packages.get(&path) {
                Some(package) => {
                    let short = path.rsplit('/').next().unwrap_or(&path);
                    let versions: serde_json::Map<String, Value> = package
                        .tarballs
                        .keys()
                        .map(|v| {
                            let tarball =
                                format!("http://127.0.0.1:{port}/{path}/-/{short}-{v}.tgz");
                            (
                                v.clone(),
                                json!({"name": path, "version": v, "dist": {"tarball": tarball}}),
                            )
                        })
                        .collect();
                    let doc = json!({
                        "name": path,
                        "dist-tags": {"latest": package.latest},
                        "versions": versions,
                    });
                    ("200 OK", doc.to_string().into_bytes(), "application/json")
                }
                None => (
                    "404 Not Found",
                    br#"{"error":"Not found"}"#.to_vec(),
                    "application/json",
                ),
            },
        }
    };
    let mut stream = reader.into_inner();
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}
