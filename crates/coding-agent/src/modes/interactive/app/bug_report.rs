//! `/bug [description]` (pi 1.6's `modes/interactive/bug-report.ts`): asks what went wrong,
//! whether to include the transcript (or a summary written by the model instead), then
//! uploads the report to Radius or writes it as a zip archive, and records it in the
//! session as a `pi.bug-report` entry.

use serde_json::Value;

use super::overlay::Overlay;
use super::{App, Completion, LoaderPurpose};
use crate::agent_session::BugReportChoices;
use crate::bug_report::{BugReportBundle, upload};
use crate::extensions::UiDialog;
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::extension_ui::dialogs::{DialogOutcome, DialogView};

const DISCLAIMER: &str = "This report goes to the Pi developers (Earendil) and is not shared publicly. It includes your pi version, operating system, the current model and provider configuration (without API keys), loaded extensions, settings, and provider error diagnostics from this session.";
const TRANSCRIPT_NOTE: &str = "The transcript contains your messages, model output, tool calls and their results, including file contents and command output read during this session.";
const CANCELLED: &str = "Bug report cancelled";

/// What the user chose so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct BugFlow {
    /// The description, trimmed (`None` when empty).
    hint: Option<String>,
    include_session: bool,
    include_summary: bool,
    upload: bool,
}

/// Which question of `/bug` a dialog asks.
pub(crate) enum BugStep {
    Hint,
    Transcript(BugFlow),
    Summary(BugFlow),
    Delivery(BugFlow),
    UploadFailed(Box<BugReportBundle>),
}

/// How a background step of `/bug` ended.
#[derive(Debug)]
pub(crate) enum BugEvent {
    Summary(Result<String, String>),
    Upload(Result<String, String>),
}

impl App {
    fn model_name(&self) -> String {
        let model = self.session.model();
        if model.name.is_empty() {
            model.id
        } else {
            model.name
        }
    }

    fn bug_dialog(&mut self, dialog: UiDialog, description: String, step: BugStep) {
        let editor = matches!(dialog, UiDialog::Editor { .. });
        if let Some(mut view) = DialogView::new(&dialog, &self.theme, &self.keys) {
            view = view.with_description(description);
            if editor {
                view = view.with_external_editor_hint();
            }
            self.overlay = Some(Overlay::Bug(Box::new(view), step));
        }
    }

    fn bug_select(&mut self, title: String, options: &[&str], description: String, step: BugStep) {
        let dialog = UiDialog::Select {
            title,
            options: options.iter().map(|o| (*o).to_owned()).collect(),
            timeout: None,
        };
        self.bug_dialog(dialog, description, step);
    }

    pub(super) fn bug_command(&mut self, initial: Option<String>) {
        let dialog = UiDialog::Editor {
            title: "Report a bug".to_owned(),
            prefill: initial,
        };
        self.bug_dialog(
            dialog,
            format!("{DISCLAIMER}\n\nWhat went wrong? (optional)"),
            BugStep::Hint,
        );
    }

    pub(super) fn on_bug_input(&mut self, input: &pi_tui::Input) {
        let Some(Overlay::Bug(view, _)) = self.overlay.as_mut() else {
            return;
        };
        let answer = match view.handle(input) {
            DialogOutcome::Pending => return,
            DialogOutcome::ExternalEditor(text) => {
                if let Some(edited) = self.edit_externally(&text)
                    && let Some(Overlay::Bug(view, _)) = self.overlay.as_mut()
                {
                    view.set_editor_text(&edited);
                }
                return;
            }
            DialogOutcome::Answer(answer) => answer,
        };
        let Some(Overlay::Bug(_, step)) = self.overlay.take() else {
            return;
        };
        let Value::String(answer) = answer else {
            self.notice(NoticeKind::Info, CANCELLED);
            return;
        };
        match step {
            BugStep::Hint => {
                let trimmed = answer.trim();
                let flow = BugFlow {
                    hint: (!trimmed.is_empty()).then(|| trimmed.to_owned()),
                    ..BugFlow::default()
                };
                self.bug_select(
                    "Include the session transcript?".to_owned(),
                    &["Yes, include the transcript", "No"],
                    TRANSCRIPT_NOTE.to_owned(),
                    BugStep::Transcript(flow),
                );
            }
            BugStep::Transcript(mut flow) => {
                flow.include_session = answer != "No";
                if flow.include_session {
                    return self.ask_delivery(flow);
                }
                let model = self.session.model();
                self.bug_select(
                    format!("Attach a summary written by {} instead?", self.model_name()),
                    &["Yes, generate a summary", "No"],
                    format!(
                        "The transcript is sent to {} with your credentials and tokens. Only the generated summary is attached; the transcript stays on your machine.",
                        model.provider
                    ),
                    BugStep::Summary(flow),
                );
            }
            BugStep::Summary(mut flow) => {
                flow.include_summary = answer != "No";
                self.ask_delivery(flow);
            }
            BugStep::Delivery(mut flow) => {
                if answer == "Cancel" {
                    self.notice(NoticeKind::Info, CANCELLED);
                    return;
                }
                flow.upload = answer == "Upload Report";
                self.run_bug_report(flow);
            }
            BugStep::UploadFailed(bundle) => {
                if answer == "Export as Zip" {
                    self.export_bug_zip(&bundle);
                } else {
                    self.notice(NoticeKind::Info, CANCELLED);
                }
            }
        }
    }

    fn ask_delivery(&mut self, flow: BugFlow) {
        let summary = if flow.include_summary {
            format!("written by {}", self.model_name())
        } else {
            "none".to_owned()
        };
        let description = format!(
            "Description: {}\nTranscript: {}\nSummary: {summary}\n\nUpload sends the report to {}. Export writes a zip archive to the current directory instead.",
            flow.hint.as_deref().unwrap_or("none"),
            if flow.include_session {
                "included"
            } else {
                "not included"
            },
            upload::gateway_host(),
        );
        self.bug_select(
            "Bug report".to_owned(),
            &["Upload Report", "Export as Zip", "Cancel"],
            description,
            BugStep::Delivery(flow),
        );
    }

    fn run_bug_report(&mut self, flow: BugFlow) {
        if flow.upload && std::env::var_os("PI_OFFLINE").is_some_and(|v| !v.is_empty()) {
            self.notice(
                NoticeKind::Error,
                "Uploading bug reports requires online mode. Use Export as Zip instead.",
            );
            return;
        }
        if flow.include_summary {
            let message = format!("Writing summary with {}...", self.model_name());
            let hint = flow.hint.clone();
            let cancel = self.show_loader(&message, LoaderPurpose::BugSummary(flow));
            let id = self.loader_id();
            let session = self.session.clone();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let result = session
                    .summarize_for_bug_report(hint.as_deref(), cancel)
                    .await;
                let _ = tx.send(AppEvent::Done(Completion::Bug(
                    id,
                    BugEvent::Summary(result),
                )));
            });
            return;
        }
        self.deliver_bug_report(flow, None);
    }

    fn deliver_bug_report(&mut self, flow: BugFlow, summary: Option<String>) {
        let choices = BugReportChoices {
            hint: flow.hint.clone(),
            include_session: flow.include_session,
        };
        let bundle = match self
            .session
            .bug_report_bundle(&choices, summary, &self.agent_dir)
        {
            Ok(bundle) => bundle,
            Err(e) => {
                self.notice(
                    NoticeKind::Error,
                    &format!("Failed to build bug report: {e}"),
                );
                return;
            }
        };
        if !flow.upload {
            return self.export_bug_zip(&bundle);
        }
        let files = match bundle.files() {
            Ok(files) => files,
            Err(e) => {
                self.notice(
                    NoticeKind::Error,
                    &format!("Failed to build bug report: {e}"),
                );
                return;
            }
        };
        let cancel = self.show_loader(
            "Uploading bug report...",
            LoaderPurpose::BugUpload(Box::new(bundle)),
        );
        let id = self.loader_id();
        let registry = self.session.registry();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let token = upload::radius_token(&registry).await;
            let result = upload::upload_bug_report(
                &files,
                token.as_deref(),
                &upload::gateway_url(),
                &cancel,
            )
            .await
            .map_err(|e| e.to_string());
            let _ = tx.send(AppEvent::Done(Completion::Bug(
                id,
                BugEvent::Upload(result),
            )));
        });
    }

    pub(super) fn on_bug_event(&mut self, id: u64, event: BugEvent) {
        let Some(Overlay::Loader(loader)) = self
            .overlay
            .take_if(|o| matches!(o, Overlay::Loader(l) if l.id == id))
        else {
            return;
        };
        match (loader.purpose, event) {
            (LoaderPurpose::BugSummary(flow), BugEvent::Summary(Ok(summary))) => {
                self.deliver_bug_report(flow, Some(summary));
            }
            (LoaderPurpose::BugSummary(_), BugEvent::Summary(Err(e))) => self.notice(
                NoticeKind::Error,
                &format!("Failed to write bug report summary: {e}"),
            ),
            (LoaderPurpose::BugUpload(bundle), BugEvent::Upload(Ok(report_id))) => {
                self.record_bug_report(&bundle, "upload", None);
                self.notice(
                    NoticeKind::Info,
                    &format!("Bug report uploaded. Report ID: {report_id}"),
                );
            }
            (LoaderPurpose::BugUpload(bundle), BugEvent::Upload(Err(message))) => {
                self.bug_select(
                    "Upload failed".to_owned(),
                    &["Export as Zip", "Cancel"],
                    format!("{message}\n\nExport the report as a zip archive instead?"),
                    BugStep::UploadFailed(bundle),
                );
            }
            _ => {}
        }
    }

    fn export_bug_zip(&mut self, bundle: &BugReportBundle) {
        let path = std::env::current_dir()
            .unwrap_or_default()
            .join(crate::bug_report::archive_file_name(bundle.id()));
        if let Err(e) = bundle.write_archive(&path) {
            self.notice(
                NoticeKind::Error,
                &format!("Failed to write bug report: {e}"),
            );
            return;
        }
        self.record_bug_report(bundle, "zip", Some(&path));
        self.notice(
            NoticeKind::Info,
            &format!(
                "Bug report exported to: {}\nReport ID: {}",
                path.display(),
                bundle.id()
            ),
        );
    }

    fn record_bug_report(
        &mut self,
        bundle: &BugReportBundle,
        delivery: &str,
        path: Option<&std::path::Path>,
    ) {
        if let Err(e) = self
            .session
            .record_bug_report(bundle.entry_data(delivery, path))
        {
            self.notice(NoticeKind::Error, &e);
        }
        let crashes = bundle.diagnostics["crashes"]
            .as_array()
            .is_some_and(|c| !c.is_empty());
        if crashes {
            crate::bug_report::crash_log::clear_crash_log(&self.agent_dir);
        }
    }
}
