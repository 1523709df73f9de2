//! `/login` and `/logout` in the interactive UI: choose how and where to sign in, run the
//! provider's sign-in (its URL and codes shown in the chat, its questions as a one-line
//! input), save it, and make the session use it.

use pi_ai::oauth::{
    LoginInteraction, LoginNotice, LoginPrompt, OAuthError, OAuthProvider, SelectOption,
};
use pi_tui::Input;
use pi_tui::components::select_list::{SelectAction, SelectItem, SelectList};
use tokio::sync::{mpsc::UnboundedSender, oneshot};
use tokio_util::sync::CancellationToken;

use super::{App, Overlay};
use crate::config::auth::{AuthStorage, update_auth_file};
use crate::config::paths;
use crate::llama;
use crate::modes::auth::provider_display_name;
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::{NoticeKind, select_theme};
use crate::modes::interactive::extension_ui::line_input::LineInput;

/// What the sign-in task tells the UI.
#[derive(Debug)]
pub(crate) enum LoginEvent {
    Notice(LoginNotice),
    /// A question; the answer (or `Err` when dismissed) goes back on `reply`.
    Prompt {
        prompt: LoginPrompt,
        reply: oneshot::Sender<Result<String, OAuthError>>,
        cancel: CancellationToken,
    },
    /// The sign-in ended; on success the login is saved.
    Finished {
        provider: String,
        result: Result<(), OAuthError>,
    },
}

/// What a choice list is for.
pub(crate) enum ChoicePurpose {
    /// Account or API key.
    Method,
    /// Which provider (`oauth`: account sign-in, else API key).
    Provider {
        oauth: bool,
    },
    Logout,
    /// Sign in to `provider` with its account or with an API key.
    ProviderMethod {
        provider: String,
    },
    /// A choice the sign-in asked for.
    Flow(Option<oneshot::Sender<Result<String, OAuthError>>>),
}

/// What a one-line input is for.
pub(crate) enum InputPurpose {
    ApiKey {
        provider: String,
    },
    Flow {
        reply: Option<oneshot::Sender<Result<String, OAuthError>>>,
        cancel: CancellationToken,
    },
}

/// A titled choice list in the editor's place.
pub(crate) struct Choice {
    title: String,
    list: SelectList,
    purpose: ChoicePurpose,
}

/// A titled one-line input in the editor's place.
pub(crate) struct TextInput {
    title: String,
    hint: Option<String>,
    input: LineInput,
    secret: bool,
    purpose: InputPurpose,
}

impl Choice {
    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![String::new(), format!(" {}", self.title)];
        lines.extend(pi_tui::Component::render(&mut self.list, width));
        lines
    }
}

impl TextInput {
    pub(crate) fn render(&self, width: usize) -> Vec<String> {
        let mut lines = vec![String::new(), format!(" {}", self.title)];
        if let Some(hint) = &self.hint {
            lines.push(format!(" {hint}"));
        }
        if self.secret {
            let mut masked = LineInput::new();
            masked.set_focused(true);
            for _ in self.input.value().chars() {
                masked.handle(&Input::key(pi_tui::KeyCode::Char('*')));
            }
            lines.extend(masked.render(width));
        } else {
            lines.extend(self.input.render(width));
        }
        lines.push(" enter to submit · esc to cancel".into());
        lines
    }

    /// Whether the sign-in no longer needs the answer (the browser finished first).
    pub(crate) fn is_stale(&self) -> bool {
        matches!(&self.purpose, InputPurpose::Flow { cancel, .. } if cancel.is_cancelled())
    }
}

/// The sign-in's side of the UI: questions and notices become app events.
pub(super) struct TuiLogin {
    tx: UnboundedSender<AppEvent>,
    cancel: CancellationToken,
    /// The global settings.json, which keeps the device id (`None`: no device id).
    settings_path: Option<std::path::PathBuf>,
}

impl TuiLogin {
    pub(super) fn new(tx: UnboundedSender<AppEvent>) -> Self {
        TuiLogin {
            tx,
            cancel: CancellationToken::new(),
            settings_path: None,
        }
    }
}

impl LoginInteraction for TuiLogin {
    fn notify(&self, notice: LoginNotice) {
        let _ = self.tx.send(AppEvent::Login(LoginEvent::Notice(notice)));
    }

    fn prompt<'a>(
        &'a self,
        prompt: LoginPrompt,
        cancel: CancellationToken,
    ) -> futures_util::future::BoxFuture<'a, Result<String, OAuthError>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let event = LoginEvent::Prompt {
                prompt,
                reply,
                cancel: cancel.clone(),
            };
            if self.tx.send(AppEvent::Login(event)).is_err() {
                return Err(OAuthError::Cancelled);
            }
            tokio::select! {
                answer = answer => answer.unwrap_or(Err(OAuthError::Cancelled)),
                () = cancel.cancelled() => Err(OAuthError::Cancelled),
                () = self.cancel.cancelled() => Err(OAuthError::Cancelled),
            }
        })
    }

    fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    fn device_id(&self) -> Option<String> {
        crate::config::device_id::get_or_create(self.settings_path.as_deref()?)
    }
}

fn choice_list(items: Vec<SelectItem>, app: &App) -> SelectList {
    SelectList::new(items, 10, select_theme(&app.theme))
}

impl App {
    /// `/login [provider]`.
    pub(super) fn login_command(&mut self, provider: Option<String>) {
        match provider {
            Some(id) if id == llama::PROVIDER_ID && self.session.registry().llama_enabled() => {
                self.start_llama_login()
            }
            Some(id) => match OAuthProvider::from_id(&id).filter(|p| p.is_offered()) {
                Some(login) if login.login_label().is_some() && login.has_api_key_login() => {
                    self.open_provider_method_picker(login)
                }
                Some(login) => self.start_oauth_login(login),
                None if self.session.registry().has_provider(&id) => self.open_api_key_input(id),
                None => {
                    self.notice(NoticeKind::Error, &format!("Unknown provider \"{id}\"."));
                    self.open_login_provider_picker(true);
                }
            },
            None => {
                let items = vec![
                    SelectItem::new("oauth", "Sign in with an account"),
                    SelectItem::new("api_key", "Sign in with an API key"),
                ];
                self.overlay = Some(Overlay::Choice(Choice {
                    title: "Select authentication method:".into(),
                    list: choice_list(items, self),
                    purpose: ChoicePurpose::Method,
                }));
            }
        }
    }

    fn open_login_provider_picker(&mut self, oauth: bool) {
        let stored = AuthStorage::load(&paths::auth_path(&self.agent_dir));
        let mark = |id: &str| {
            if stored.credential(id).is_some() {
                " ✓ logged in"
            } else {
                ""
            }
        };
        let items: Vec<SelectItem> = if oauth {
            OAuthProvider::ALL
                .iter()
                .map(|p| SelectItem::new(p.id(), format!("{}{}", p.name(), mark(p.id()))))
                .collect()
        } else {
            let mut ids: Vec<String> = self
                .session
                .registry()
                .all()
                .iter()
                .map(|m| m.provider.clone())
                .filter(|p| OAuthProvider::from_id(p).is_none_or(OAuthProvider::has_api_key_login))
                .collect();
            if self.session.registry().llama_enabled() {
                ids.push(llama::PROVIDER_ID.to_owned());
            }
            ids.sort();
            ids.dedup();
            ids.iter()
                .map(|id| {
                    SelectItem::new(
                        id.clone(),
                        format!("{}{}", provider_display_name(id), mark(id)),
                    )
                })
                .collect()
        };
        self.overlay = Some(Overlay::Choice(Choice {
            title: if oauth {
                "Select a provider to sign in to:".into()
            } else {
                "Select a provider to save an API key for:".into()
            },
            list: choice_list(items, self),
            purpose: ChoicePurpose::Provider { oauth },
        }));
    }

    /// `/login <provider>` for a provider with an account sign-in and an API key: which one
    /// (pi 1.6.0's "Select authentication method for <provider>:").
    fn open_provider_method_picker(&mut self, login: OAuthProvider) {
        let items = vec![
            SelectItem::new(login.id(), login.login_label().unwrap_or_default()),
            SelectItem::new("api_key", "Sign in with an API key"),
        ];
        self.overlay = Some(Overlay::Choice(Choice {
            title: format!(
                "Select authentication method for {}:",
                crate::modes::auth::provider_display_name(login.id())
            ),
            list: choice_list(items, self),
            purpose: ChoicePurpose::ProviderMethod {
                provider: login.id().to_owned(),
            },
        }));
    }

    /// Enter on an empty editor while a device-code sign-in waits: opens its page and copies
    /// its code. `false` when no sign-in waits.
    pub(super) fn act_on_device_code(&mut self) -> bool {
        let Some((page, code)) = self.device_code.take() else {
            return false;
        };
        crate::modes::auth_login::open_browser(&page);
        super::super::clipboard::copy_with_program(&code);
        let _ = pi_tui::terminal::Terminal::write(
            self.renderer.terminal_mut(),
            &super::super::clipboard::osc52(&code),
        );
        self.notice(
            NoticeKind::Info,
            "Browser open requested; code copied to clipboard",
        );
        true
    }

    /// `/logout`: the providers with stored credentials.
    pub(super) fn logout_command(&mut self) {
        let stored = AuthStorage::load(&paths::auth_path(&self.agent_dir));
        let providers = stored.providers();
        if providers.is_empty() {
            self.notice(
                NoticeKind::Info,
                "No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.",
            );
            return;
        }
        let items = providers
            .iter()
            .map(|id| SelectItem::new(*id, provider_display_name(id)))
            .collect();
        self.overlay = Some(Overlay::Choice(Choice {
            title: "Select a provider to log out of:".into(),
            list: choice_list(items, self),
            purpose: ChoicePurpose::Logout,
        }));
    }

    fn open_api_key_input(&mut self, provider: String) {
        self.overlay = Some(Overlay::Input(TextInput {
            title: format!("Enter API key for {}:", provider_display_name(&provider)),
            hint: None,
            input: focused_input(),
            secret: true,
            purpose: InputPurpose::ApiKey { provider },
        }));
    }

    fn start_oauth_login(&mut self, login: OAuthProvider) {
        self.notice(
            NoticeKind::Info,
            &format!("Signing in to {}...", login.name()),
        );
        self.signing_in = Some(login.name().to_owned());
        let tx = self.tx.clone();
        let auth_path = paths::auth_path(&self.agent_dir);
        let settings_path = paths::settings_path(&self.agent_dir);
        tokio::spawn(async move {
            let ui = TuiLogin {
                tx: tx.clone(),
                cancel: CancellationToken::new(),
                settings_path: Some(settings_path),
            };
            let result = match login.login(&ui).await {
                Ok(credentials) => {
                    crate::modes::auth_login::save_login(&auth_path, login.id(), &credentials)
                        .map_err(|e| OAuthError::Failed(format!("could not save the login: {e}")))
                }
                Err(e) => Err(e),
            };
            let _ = tx.send(AppEvent::Login(LoginEvent::Finished {
                provider: login.id().to_owned(),
                result,
            }));
        });
    }

    pub(super) fn on_login_event(&mut self, event: LoginEvent) {
        match event {
            LoginEvent::Notice(LoginNotice::AuthUrl { url, instructions }) => {
                let mut text = format!("Open this URL to sign in:\n{url}");
                if let Some(instructions) = instructions {
                    text.push_str(&format!("\n{instructions}"));
                }
                self.notice(NoticeKind::Info, &text);
                crate::modes::auth_login::open_browser(&url);
            }
            LoginEvent::Notice(LoginNotice::DeviceCode {
                verification_uri,
                user_code,
            }) => {
                self.notice(
                    NoticeKind::Info,
                    &format!("Open {verification_uri} and enter code: {user_code}\n(enter to open browser and copy code)\nWaiting for authentication..."),
                );
                self.device_code = Some((verification_uri, user_code));
            }
            LoginEvent::Notice(LoginNotice::Progress(message)) => {
                self.notice(NoticeKind::Info, &message);
            }
            LoginEvent::Prompt {
                prompt,
                reply,
                cancel,
            } => match prompt {
                LoginPrompt::Select { message, options } => {
                    let items = options
                        .into_iter()
                        .map(|SelectOption { id, label }| SelectItem::new(id, label))
                        .collect();
                    self.overlay = Some(Overlay::Choice(Choice {
                        title: message,
                        list: choice_list(items, self),
                        purpose: ChoicePurpose::Flow(Some(reply)),
                    }));
                }
                LoginPrompt::Text {
                    message,
                    placeholder,
                }
                | LoginPrompt::ManualCode {
                    message,
                    placeholder,
                } => {
                    self.overlay = Some(Overlay::Input(TextInput {
                        title: format!("{message}:"),
                        hint: placeholder.map(|p| format!("e.g. {p}")),
                        input: focused_input(),
                        secret: false,
                        purpose: InputPurpose::Flow {
                            reply: Some(reply),
                            cancel,
                        },
                    }));
                }
                LoginPrompt::Secret { message } => {
                    self.overlay = Some(Overlay::Input(TextInput {
                        title: format!("{message}:"),
                        hint: None,
                        input: focused_input(),
                        secret: true,
                        purpose: InputPurpose::Flow {
                            reply: Some(reply),
                            cancel,
                        },
                    }));
                }
            },
            LoginEvent::Finished { provider, result } => {
                self.device_code = None;
                self.signing_in = None;
                if matches!(self.overlay, Some(Overlay::Choice(_) | Overlay::Input(_))) {
                    self.overlay = None;
                }
                let action = if provider == llama::PROVIDER_ID {
                    "Saved API key for"
                } else {
                    "Logged in to"
                };
                match result {
                    Ok(()) => self.after_login(&provider, action),
                    Err(OAuthError::Cancelled) => {
                        self.notice(NoticeKind::Warning, "Login cancelled")
                    }
                    Err(error) => self.notice(
                        NoticeKind::Error,
                        &format!(
                            "Failed to log in to {}: {error}",
                            provider_display_name(&provider)
                        ),
                    ),
                }
            }
        }
    }

    /// The session takes the new credentials; with no usable model yet, it selects the
    /// provider's default one.
    fn after_login(&mut self, provider: &str, action: &str) {
        let name = provider_display_name(provider);
        let path = paths::auth_path(&self.agent_dir);
        if let Err(e) = self.session.reload_credentials() {
            self.notice(NoticeKind::Error, &e);
        }
        let mut selected = None;
        // llama.cpp has no default model: pi says where to go next instead (below).
        if self.no_model && provider != llama::PROVIDER_ID {
            let registry = self.session.registry();
            let default = crate::model_registry::default_model_for(provider)
                .and_then(|id| registry.find(provider, id))
                .or_else(|| {
                    registry
                        .available()
                        .into_iter()
                        .find(|m| m.provider == provider)
                })
                .cloned();
            match default {
                Some(model) => match self.session.set_model_as_default(model.clone()) {
                    Ok(()) => {
                        self.no_model = false;
                        selected = Some(model.id);
                    }
                    Err(e) => self.notice(NoticeKind::Error, &e.0),
                },
                None => self.notice(
                    NoticeKind::Warning,
                    &format!("{action} {name}, but no models are available for that provider. Use /model to select a model."),
                ),
            }
        }
        let text = match selected {
            Some(id) => format!(
                "{action} {name}. Selected {id}. Credentials saved to {}",
                path.display()
            ),
            None => format!("{action} {name}. Credentials saved to {}", path.display()),
        };
        self.notice(NoticeKind::Info, &text);
        if provider == llama::PROVIDER_ID {
            self.after_llama_login(&format!("{action} {name}"));
        }
        self.footer_dirty = true;
        self.update_editor_border();
    }

    pub(super) fn on_choice_input(&mut self, input: &Input) {
        let keys = std::sync::Arc::clone(&self.keys);
        let Some(Overlay::Choice(choice)) = self.overlay.as_mut() else {
            return;
        };
        match choice.list.handle_key(input, &keys) {
            SelectAction::Confirm(value) => {
                let Some(Overlay::Choice(choice)) = self.overlay.take() else {
                    return;
                };
                match choice.purpose {
                    ChoicePurpose::Method => self.open_login_provider_picker(value == "oauth"),
                    ChoicePurpose::Provider { oauth: true } => {
                        if let Some(login) = OAuthProvider::from_id(&value) {
                            self.start_oauth_login(login);
                        }
                    }
                    ChoicePurpose::Provider { oauth: false } if value == llama::PROVIDER_ID => {
                        self.start_llama_login()
                    }
                    ChoicePurpose::Provider { oauth: false } => self.open_api_key_input(value),
                    ChoicePurpose::Logout => self.logout(&value),
                    ChoicePurpose::ProviderMethod { provider } if value == "api_key" => {
                        self.open_api_key_input(provider)
                    }
                    ChoicePurpose::ProviderMethod { .. } => {
                        if let Some(login) = OAuthProvider::from_id(&value) {
                            self.start_oauth_login(login);
                        }
                    }
                    ChoicePurpose::Flow(reply) => {
                        if let Some(reply) = reply {
                            let _ = reply.send(Ok(value));
                        }
                    }
                }
            }
            SelectAction::Cancel => {
                if let Some(Overlay::Choice(Choice {
                    purpose: ChoicePurpose::Flow(Some(reply)),
                    ..
                })) = self.overlay.take()
                {
                    let _ = reply.send(Err(OAuthError::Cancelled));
                }
            }
            SelectAction::None | SelectAction::Changed => {}
        }
    }

    pub(super) fn on_text_input(&mut self, input: &Input) {
        let Some(Overlay::Input(text)) = self.overlay.as_mut() else {
            return;
        };
        let code = match input {
            Input::Key(key) => Some(key.code),
            Input::Paste(_) => None,
        };
        match code {
            Some(pi_tui::KeyCode::Esc) => {
                if let Some(Overlay::Input(TextInput {
                    purpose:
                        InputPurpose::Flow {
                            reply: Some(reply), ..
                        },
                    ..
                })) = self.overlay.take()
                {
                    let _ = reply.send(Err(OAuthError::Cancelled));
                }
            }
            Some(pi_tui::KeyCode::Enter) => {
                let value = text.input.value().trim().to_owned();
                let Some(Overlay::Input(text)) = self.overlay.take() else {
                    return;
                };
                match text.purpose {
                    InputPurpose::ApiKey { provider } => self.save_api_key(&provider, &value),
                    InputPurpose::Flow { reply, .. } => {
                        if let Some(reply) = reply {
                            let _ = reply.send(Ok(value));
                        }
                    }
                }
            }
            _ => {
                text.input.handle(input);
            }
        }
    }

    fn save_api_key(&mut self, provider: &str, key: &str) {
        if key.is_empty() {
            self.notice(NoticeKind::Warning, "No API key entered");
            return;
        }
        let path = paths::auth_path(&self.agent_dir);
        let saved = update_auth_file(&path, |map| {
            map.insert(
                provider.to_owned(),
                serde_json::json!({"type": "api_key", "key": key}),
            );
        });
        match saved {
            Ok(()) => self.after_login(provider, "Saved API key for"),
            Err(e) => self.notice(NoticeKind::Error, &format!("Could not save the key: {e}")),
        }
    }

    fn logout(&mut self, provider: &str) {
        let path = paths::auth_path(&self.agent_dir);
        let removed = update_auth_file(&path, |map| map.shift_remove(provider));
        let name = provider_display_name(provider);
        match removed {
            Ok(Some(entry)) => {
                let oauth = entry.get("type").and_then(|t| t.as_str()) == Some("oauth");
                if let Err(e) = self.session.reload_credentials() {
                    self.notice(NoticeKind::Error, &e);
                }
                self.notice(
                    NoticeKind::Info,
                    &if oauth {
                        format!("Logged out of {name}")
                    } else {
                        format!("Removed stored API key for {name}. Environment variables and models.json config are unchanged.")
                    },
                );
                self.footer_dirty = true;
            }
            Ok(None) => self.notice(
                NoticeKind::Info,
                &format!("No stored credentials for {name}."),
            ),
            Err(e) => self.notice(NoticeKind::Error, &format!("Logout failed: {e}")),
        }
    }
}

fn focused_input() -> LineInput {
    let mut input = LineInput::new();
    input.set_focused(true);
    input
}
