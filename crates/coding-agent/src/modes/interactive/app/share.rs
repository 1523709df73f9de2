//! `/share` (pi 1.6's `session-share.ts`): the session as a Radius artifact when the
//! `radius` provider has a credential (unless the `sessionShareDestination` setting says
//! `gist`), else as a secret GitHub gist of the HTML export, made with `gh`.

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use super::overlay::Overlay;
use super::{App, Completion};
use crate::bug_report::upload;
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;

/// How a background step of `/share` ended.
#[derive(Debug)]
pub(crate) enum ShareEvent {
    /// The Radius upload: the artifact's URL; `None` when no token turned up after all
    /// (then the gist is tried, or the destination's error shown); or the error text.
    Radius(Result<Option<String>, String>),
    /// `gh gist create` ended: its exit status, stdout and stderr.
    Gist(Result<(bool, String, String), String>),
}

/// pi 1.6's OSC 8 hyperlink.
fn hyperlink(url: &str) -> String {
    format!("\x1b]8;;{url}\x07{url}\x1b]8;;\x07")
}

/// The session viewer's page for a gist: `PI_SHARE_VIEWER_URL` or pi.dev's, then `#<id>`.
fn viewer_url(gist_id: &str) -> String {
    let base = std::env::var("PI_SHARE_VIEWER_URL")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "https://pi.dev/session/".to_owned());
    format!("{base}#{gist_id}")
}

impl App {
    pub(super) fn share_command(&mut self) {
        let jsonl = match self.session.share_jsonl() {
            Ok(jsonl) => jsonl,
            Err(e) => {
                self.notice(NoticeKind::Error, &format!("Failed to export session: {e}"));
                return;
            }
        };
        let destination = self
            .session
            .settings()
            .value(&["sessionShareDestination"])
            .and_then(|v| v.as_str().map(str::to_owned));
        let destination = match destination.as_deref() {
            Some("gist") => "gist",
            Some("radius") => "radius",
            _ => "auto",
        };
        let registry = self.session.registry();
        let radius = registry.has_provider(upload::RADIUS_PROVIDER_ID)
            && registry.has_auth(upload::RADIUS_PROVIDER_ID);
        if destination != "gist" && radius {
            let cancel = self.show_loader("Uploading to Radius...", super::LoaderPurpose::Share);
            let tx = self.tx.clone();
            let id = self.loader_id();
            tokio::spawn(async move {
                let result = match upload::radius_token(&registry).await {
                    None => Ok(None),
                    Some(token) => upload::upload_artifact(
                        jsonl.into_bytes(),
                        &token,
                        &upload::gateway_url(),
                        &cancel,
                    )
                    .await
                    .map(Some)
                    .map_err(|e| e.to_string()),
                };
                let _ = tx.send(AppEvent::Done(Completion::Share(
                    id,
                    ShareEvent::Radius(result),
                )));
            });
            return;
        }
        if destination == "radius" {
            self.notice(
                NoticeKind::Error,
                "Radius authentication is not configured. Run '/login radius' first.",
            );
            return;
        }
        self.share_gist();
    }

    /// The gist way: `gh auth status`, the HTML export, then `gh gist create`.
    fn share_gist(&mut self) {
        let logged_in = std::process::Command::new("gh")
            .args(["auth", "status"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !logged_in {
            self.notice(
                NoticeKind::Error,
                "GitHub CLI is not logged in. Run 'gh auth login' first.",
            );
            return;
        }
        let dir = match tempfile::Builder::new().prefix("pi-share-").tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                self.notice(NoticeKind::Error, &format!("Failed to export session: {e}"));
                return;
            }
        };
        let html: PathBuf = dir.path().join("session.html");
        let exported = self.session.with_session(|s| {
            crate::export::export_session_html_themed(
                s,
                Some(&html),
                self.session.cwd(),
                Some(&self.theme),
            )
        });
        if let Err(e) = exported {
            self.notice(NoticeKind::Error, &format!("Failed to export session: {e}"));
            return;
        }
        let cancel = self.show_loader("Creating gist...", super::LoaderPurpose::Share);
        let tx = self.tx.clone();
        let id = self.loader_id();
        tokio::spawn(async move {
            let child = tokio::process::Command::new("gh")
                .args(["gist", "create", "--public=false"])
                .arg(&html)
                .stdin(std::process::Stdio::null())
                .kill_on_drop(true)
                .output();
            let result = tokio::select! {
                output = child => output
                    .map(|o| (
                        o.status.success(),
                        String::from_utf8_lossy(&o.stdout).into_owned(),
                        String::from_utf8_lossy(&o.stderr).into_owned(),
                    ))
                    .map_err(|e| e.to_string()),
                () = cancel.cancelled() => Err("cancelled".to_owned()),
            };
            drop(dir);
            let _ = tx.send(AppEvent::Done(Completion::Share(
                id,
                ShareEvent::Gist(result),
            )));
        });
    }

    pub(super) fn on_share_event(&mut self, id: u64, event: ShareEvent) {
        if !self.take_loader(id) {
            return;
        }
        match event {
            ShareEvent::Radius(Ok(Some(url))) => {
                self.notice(NoticeKind::Info, &format!("Share URL: {}", hyperlink(&url)));
            }
            ShareEvent::Radius(Ok(None)) => {
                let destination = self
                    .session
                    .settings()
                    .value(&["sessionShareDestination"])
                    .and_then(|v| v.as_str().map(str::to_owned));
                if destination.as_deref() == Some("radius") {
                    self.notice(
                        NoticeKind::Error,
                        "Radius authentication is not configured. Run '/login radius' first.",
                    );
                } else {
                    self.share_gist();
                }
            }
            ShareEvent::Radius(Err(e)) => self.notice(
                NoticeKind::Error,
                &format!("Failed to upload Radius artifact: {e}"),
            ),
            ShareEvent::Gist(Err(e)) => {
                self.notice(NoticeKind::Error, &format!("Failed to create gist: {e}"));
            }
            ShareEvent::Gist(Ok((false, _, stderr))) => {
                let stderr = stderr.trim();
                let message = if stderr.is_empty() {
                    "Unknown error"
                } else {
                    stderr
                };
                self.notice(
                    NoticeKind::Error,
                    &format!("Failed to create gist: {message}"),
                );
            }
            ShareEvent::Gist(Ok((true, stdout, _))) => {
                let gist_url = stdout.trim();
                let gist_id = gist_url.rsplit('/').next().unwrap_or_default();
                if gist_id.is_empty() {
                    self.notice(NoticeKind::Error, "Failed to parse gist ID from gh output");
                    return;
                }
                let preview = viewer_url(gist_id);
                self.notice(
                    NoticeKind::Info,
                    &format!(
                        "Share URL: {}\nGist: {}",
                        hyperlink(&preview),
                        hyperlink(gist_url)
                    ),
                );
            }
        }
    }

    /// A loader in the editor's place; Esc cancels the token it returns.
    pub(super) fn show_loader(
        &mut self,
        message: &str,
        purpose: super::LoaderPurpose,
    ) -> CancellationToken {
        let cancel = CancellationToken::new();
        self.next_loader_id += 1;
        let view = crate::modes::interactive::components::bordered_loader::BorderedLoader::new(
            message,
            &self.theme,
            &self.keys,
        );
        self.overlay = Some(Overlay::Loader(Box::new(super::LoaderOverlay {
            id: self.next_loader_id,
            view,
            cancel: cancel.clone(),
            purpose,
        })));
        cancel
    }

    /// The id of the loader shown last.
    pub(super) fn loader_id(&self) -> u64 {
        self.next_loader_id
    }

    /// Closes the loader `id` when it is still shown (its work ended); false when it was
    /// cancelled or replaced.
    pub(super) fn take_loader(&mut self, id: u64) -> bool {
        if matches!(&self.overlay, Some(Overlay::Loader(l)) if l.id == id) {
            self.overlay = None;
            true
        } else {
            false
        }
    }

    /// Esc on a loader: the work is cancelled and its status shown.
    pub(super) fn on_loader_input(&mut self, input: &pi_tui::Input) {
        if !self.keys.matches(input, "tui.select.cancel") {
            return;
        }
        let Some(Overlay::Loader(loader)) = self.overlay.take() else {
            return;
        };
        loader.cancel.cancel();
        let status = match loader.purpose {
            super::LoaderPurpose::Share => "Share cancelled",
            super::LoaderPurpose::BugSummary(_) | super::LoaderPurpose::BugUpload(_) => {
                "Bug report cancelled"
            }
        };
        self.notice(NoticeKind::Info, status);
    }
}
