//! Pickers that take the editor's place: models, thinking level, sessions, the session
//! tree (and its branch-summary question), fork points.

use pi_tui::Input;
use pi_tui::autocomplete::SlashCommand;
use pi_tui::components::select_list::{SelectAction, SelectItem, SelectList};

use super::{App, Completion};
use crate::agent_session::NavigateOptions;
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::commands::BUILTIN_COMMANDS;
use crate::modes::interactive::extension_ui::autocomplete::ExtensionAutocomplete;
use crate::modes::interactive::selectors::SelectorOutcome;
use crate::modes::interactive::selectors::fork::UserMessageSelector;
use crate::modes::interactive::selectors::model::{ModelItem, ModelSelector};
use crate::modes::interactive::selectors::session::SessionSelector;
use crate::modes::interactive::selectors::thinking::ThinkingSelector;
use crate::modes::interactive::selectors::tree::{FilterMode, TreeRequest, TreeSelector};
use crate::session::list::{list_all_sessions, list_sessions};

/// The picker shown instead of the editor.
pub(crate) enum Overlay {
    Model(ModelSelector),
    Thinking(ThinkingSelector),
    Session(SessionSelector),
    Tree(TreeSelector),
    /// Summarize the branch being left? Holds the target entry id.
    BranchSummary(SelectList, String),
    Fork(UserMessageSelector),
    /// A choice of `/login`, `/logout` or a sign-in.
    Choice(super::login::Choice),
    /// A question of `/login` or a sign-in.
    Input(super::login::TextInput),
    /// The `/llama` panel.
    Llama(Box<crate::modes::interactive::selectors::llama::LlamaView>),
    /// A yes/no question of pi's own (`/import`), drawn as an extension's confirm.
    Confirm(
        Box<crate::modes::interactive::extension_ui::dialogs::DialogView>,
        super::import::ConfirmPurpose,
    ),
    /// A question of `/bug`, drawn as an extension's dialog with a description.
    Bug(
        Box<crate::modes::interactive::extension_ui::dialogs::DialogView>,
        super::bug_report::BugStep,
    ),
    /// `/share`'s or `/bug`'s loader.
    Loader(Box<super::LoaderOverlay>),
    /// `/scoped-models`.
    ScopedModels(Box<crate::modes::interactive::selectors::scoped_models::ScopedModelsSelector>),
    /// `/trust`.
    Trust(Box<crate::modes::interactive::selectors::trust::TrustSelector>),
    /// `/settings`.
    Settings(Box<crate::modes::interactive::selectors::settings::SettingsSelector>),
}

impl Overlay {
    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        use pi_tui::Component;
        match self {
            Overlay::Model(s) => s.render(width),
            Overlay::Thinking(s) => s.render(width),
            Overlay::Session(s) => s.render(width),
            Overlay::Tree(s) => s.render(width),
            Overlay::BranchSummary(list, _) => {
                let mut lines = vec![
                    String::new(),
                    " Summarize the branch you are leaving?".into(),
                ];
                lines.extend(list.render(width));
                lines
            }
            Overlay::Fork(s) => s.render(width),
            Overlay::Choice(c) => c.render(width),
            Overlay::Input(i) => i.render(width),
            Overlay::Llama(view) => view.render(width),
            Overlay::Settings(menu) => menu.render(width),
            Overlay::Trust(selector) => selector.render(width),
            Overlay::Confirm(view, _) => view.render(width),
            Overlay::Bug(view, _) => view.render(width),
            Overlay::Loader(loader) => loader.render(width),
            Overlay::ScopedModels(selector) => selector.render(width),
        }
    }
}

impl App {
    /// Slash commands (built-ins, templates, skills) and @-files for the editor.
    pub(super) fn install_autocomplete(&mut self) {
        let mut commands: Vec<SlashCommand> = BUILTIN_COMMANDS
            .iter()
            .map(|(name, description)| SlashCommand {
                name: (*name).to_owned(),
                description: Some((*description).to_owned()),
            })
            .collect();
        if self.session.registry().llama_enabled() {
            let entry = crate::llama::command_entry();
            commands.push(SlashCommand {
                name: "llama".to_owned(),
                description: entry["description"].as_str().map(str::to_owned),
            });
        }
        for template in self.session.prompt_templates() {
            commands.push(SlashCommand {
                name: template.name.clone(),
                description: Some(template.description.clone()).filter(|d| !d.is_empty()),
            });
        }
        if self
            .session
            .settings()
            .get()
            .enable_skill_commands
            .unwrap_or(true)
        {
            for skill in self.session.skills() {
                commands.push(SlashCommand {
                    name: format!("skill:{}", skill.name),
                    description: Some(skill.description.clone()).filter(|d| !d.is_empty()),
                });
            }
        }
        let provider = ExtensionAutocomplete::new(
            commands,
            self.session.cwd().to_path_buf(),
            std::sync::Arc::clone(&self.ext.runtime),
            std::sync::Arc::clone(&self.ext.autocomplete),
        );
        self.editor.set_autocomplete(Box::new(provider));
        self.editor
            .set_autocomplete_trigger_characters(&self.ext.trigger_characters);
    }

    pub(super) fn open_model_picker(&mut self, search: Option<String>) {
        let current = self.session.model();
        let items: Vec<ModelItem> = self
            .session
            .registry()
            .available()
            .into_iter()
            .map(|m| ModelItem {
                provider: m.provider.clone(),
                id: m.id.clone(),
                name: Some(m.name.clone()).filter(|n| !n.is_empty()),
                is_current: m.provider == current.provider && m.id == current.id,
            })
            .collect();
        if items.is_empty() {
            self.notice(
                NoticeKind::Warning,
                "No models available (no API keys configured)",
            );
            return;
        }
        self.overlay = Some(Overlay::Model(ModelSelector::new(
            items,
            search.as_deref().unwrap_or(""),
            &self.theme,
        )));
    }

    pub(super) fn open_thinking_picker(&mut self) {
        let levels: Vec<String> = self
            .session
            .available_thinking_levels()
            .iter()
            .map(|l| l.as_str().to_owned())
            .collect();
        let current = self.session.thinking_level().as_str().to_owned();
        self.overlay = Some(Overlay::Thinking(ThinkingSelector::new(
            levels,
            &current,
            &self.theme,
        )));
    }

    pub(super) fn open_session_picker(&mut self) {
        let dir = self
            .session
            .with_session(|s| s.session_dir().map(std::path::Path::to_path_buf));
        let current = dir.as_deref().map(list_sessions).unwrap_or_default();
        let root = self.agent_dir.join("sessions");
        let all = list_all_sessions(&root);
        if current.is_empty() && all.is_empty() {
            self.notice(NoticeKind::Info, "No sessions found");
            return;
        }
        let mut selector = SessionSelector::new(current, all, &self.theme);
        selector.set_keys(&self.keys);
        if let Some(file) = self
            .session
            .with_session(|s| s.session_file().map(std::path::Path::to_path_buf))
        {
            selector.set_current_session(&file);
        }
        self.overlay = Some(Overlay::Session(selector));
    }

    pub(super) fn open_tree_picker(&mut self) {
        let mut selector = self.session.with_session(|s| {
            TreeSelector::new(s.entries(), s.leaf_id(), &self.theme, tree_rows(self))
        });
        selector.set_keys(&self.keys);
        let filter = self
            .session
            .settings()
            .value(&["treeFilterMode"])
            .and_then(|v| v.as_str().map(str::to_owned));
        if let Some(filter) = filter.as_deref().and_then(FilterMode::from_setting) {
            selector.set_filter(filter);
        }
        if self.session.message_count() == 0 {
            self.notice(NoticeKind::Info, "No entries in session");
            return;
        }
        self.overlay = Some(Overlay::Tree(selector));
    }

    pub(super) fn open_fork_picker(&mut self) {
        let messages = self.session.user_messages_for_forking();
        if messages.is_empty() {
            self.notice(NoticeKind::Info, "No messages to fork from");
            return;
        }
        self.overlay = Some(Overlay::Fork(UserMessageSelector::new(
            messages,
            &self.theme,
        )));
    }

    pub(super) async fn on_overlay_input(&mut self, input: &Input) {
        let Some(overlay) = self.overlay.as_mut() else {
            return;
        };
        let keys = std::sync::Arc::clone(&self.keys);
        match overlay {
            Overlay::Model(s) => match s.handle(input, &keys) {
                SelectorOutcome::Pending => {}
                SelectorOutcome::Cancelled => self.overlay = None,
                SelectorOutcome::Done((provider, id)) => {
                    self.overlay = None;
                    if let Some(model) = self.session.registry().find(&provider, &id).cloned() {
                        self.apply_model(model);
                    }
                }
            },
            Overlay::Thinking(s) => match s.handle(input, &keys) {
                SelectorOutcome::Pending => {}
                SelectorOutcome::Cancelled => self.overlay = None,
                SelectorOutcome::Done(level) => {
                    self.overlay = None;
                    self.set_thinking(&level);
                }
            },
            Overlay::Session(s) => match s.handle(input, &keys) {
                SelectorOutcome::Pending => {}
                SelectorOutcome::Cancelled => self.overlay = None,
                SelectorOutcome::Done(path) => {
                    self.overlay = None;
                    if let Some(cwd) = super::missing_cwd::missing_session_cwd(&path) {
                        let action = super::missing_cwd::MissingCwdAction::Resume(path);
                        self.ask_missing_cwd(&cwd, action);
                        return;
                    }
                    self.replace_session(move |s| async move {
                        let path = path.display().to_string();
                        s.switch_session_with_extensions(&path)
                            .await
                            .map_err(crate::agent_session::SessionOpError)
                            .map(|_| None)
                    });
                }
            },
            Overlay::Tree(s) => match s.handle(input, &keys) {
                SelectorOutcome::Pending => {
                    let requests = s.take_requests();
                    self.on_tree_requests(requests);
                }
                SelectorOutcome::Cancelled => self.overlay = None,
                SelectorOutcome::Done(target) => {
                    let skip_prompt = self
                        .session
                        .settings()
                        .get()
                        .branch_summary
                        .unwrap_or_default()
                        .skip_prompt;
                    let leaf = self
                        .session
                        .with_session(|s| s.leaf_id().map(str::to_owned));
                    if leaf.as_deref() == Some(target.as_str()) {
                        self.overlay = None;
                        self.notice(NoticeKind::Info, "Already at this point");
                    } else if skip_prompt {
                        self.overlay = None;
                        self.navigate(target, false);
                    } else {
                        let items = vec![
                            SelectItem::new("no", "No summary"),
                            SelectItem::new("yes", "Summarize"),
                        ];
                        let list = SelectList::new(
                            items,
                            5,
                            crate::modes::interactive::chat::select_theme(&self.theme),
                        );
                        self.overlay = Some(Overlay::BranchSummary(list, target));
                    }
                }
            },
            Overlay::BranchSummary(list, target) => match list.handle_key(input, &keys) {
                SelectAction::Confirm(value) => {
                    let target = std::mem::take(target);
                    self.overlay = None;
                    self.navigate(target, value == "yes");
                }
                SelectAction::Cancel => self.overlay = None,
                SelectAction::None | SelectAction::Changed => {}
            },
            Overlay::Choice(_) => self.on_choice_input(input),
            Overlay::Input(_) => self.on_text_input(input),
            Overlay::Llama(_) => self.on_llama_key(input),
            Overlay::Settings(menu) => {
                let event = menu.handle(input, &keys);
                self.on_settings_event(event);
            }
            Overlay::Confirm(..) => self.on_confirm_input(input),
            Overlay::Bug(..) => self.on_bug_input(input),
            Overlay::Loader(_) => self.on_loader_input(input),
            Overlay::ScopedModels(selector) => {
                let event = selector.handle(input, &keys);
                self.on_scoped_models_event(event);
            }
            Overlay::Trust(selector) => match selector.handle(input, &keys) {
                SelectorOutcome::Pending => {}
                SelectorOutcome::Cancelled => self.overlay = None,
                SelectorOutcome::Done(option) => {
                    self.overlay = None;
                    self.save_trust(&option);
                }
            },
            Overlay::Fork(s) => match s.handle(input, &keys) {
                SelectorOutcome::Pending => {}
                SelectorOutcome::Cancelled => self.overlay = None,
                SelectorOutcome::Done(entry_id) => {
                    self.overlay = None;
                    let session = self.session.clone();
                    let tx = self.tx.clone();
                    tokio::spawn(async move {
                        let result = session
                            .fork_with_extensions(&entry_id, None)
                            .await
                            .map_err(|e| e.0);
                        let _ = tx.send(AppEvent::Done(Completion::Forked(result)));
                    });
                }
            },
        }
    }

    /// Copies and labels asked for in `/tree`.
    fn on_tree_requests(&mut self, requests: Vec<TreeRequest>) {
        for request in requests {
            match request {
                TreeRequest::Copy(None) => {
                    self.notice(NoticeKind::Error, "Selected entry has no text to copy");
                }
                TreeRequest::Copy(Some(text)) => {
                    crate::modes::interactive::clipboard::copy_with_program(&text);
                    let _ = pi_tui::terminal::Terminal::write(
                        self.renderer.terminal_mut(),
                        &crate::modes::interactive::clipboard::osc52(&text),
                    );
                    self.notice(NoticeKind::Info, "Copied selected message to clipboard");
                }
                TreeRequest::Label(id, label) => {
                    if let Err(e) = self.session.set_entry_label(&id, label.as_deref()) {
                        self.notice(NoticeKind::Error, &e.0);
                    }
                }
            }
        }
    }

    fn navigate(&mut self, target: String, summarize: bool) {
        if summarize {
            self.notice(NoticeKind::Info, "Summarizing branch...");
        }
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let options = NavigateOptions {
                summarize,
                ..Default::default()
            };
            let result = session
                .navigate_tree(&target, options)
                .await
                .map_err(|e| e.0);
            let _ = tx.send(AppEvent::Done(Completion::Navigated(result)));
        });
    }
}

/// Rows the tree may use: most of the terminal.
/// The tree shows half the terminal's rows (at least 5), as pi does, so that its title and
/// the footer below it stay on screen.
fn tree_rows(app: &App) -> usize {
    let rows = pi_tui::terminal::Terminal::size(app.renderer.terminal()).1;
    (rows / 2).max(5)
}
