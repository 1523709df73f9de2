//! `pi auth login <provider>`: a subscription sign-in in the terminal (URLs and codes
//! printed, the browser opened, answers read from stdin), with pi 1.5.2's texts.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use pi_ai::oauth::{
    LoginInteraction, LoginNotice, LoginPrompt, OAuthCredentials, OAuthError, OAuthProvider,
    SelectOption,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::auth::{oauth_entry, update_auth_file};

/// Opens `url` in the user's browser: `$BROWSER` (a command, `%s` for the URL) when set,
/// else `xdg-open` / `open`; failures are silent since the URL is printed anyway.
pub fn open_browser(url: &str) {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let mut command = match browser {
        Some(browser) => {
            let line = if browser.contains("%s") {
                browser.replace("%s", &shell_quote(url))
            } else {
                format!("{browser} {}", shell_quote(url))
            };
            let mut command = std::process::Command::new("sh");
            command.arg("-c").arg(line);
            command
        }
        None => {
            let opener = if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            };
            let mut command = std::process::Command::new(opener);
            command.arg(url);
            command
        }
    };
    let _ = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .current_dir("/")
        .spawn();
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Stores a login in auth.json as `{"type":"oauth", ...}` (under the lock).
pub fn save_login(
    auth_path: &Path,
    provider: &str,
    credentials: &OAuthCredentials,
) -> std::io::Result<()> {
    update_auth_file(auth_path, |map| {
        map.insert(provider.to_owned(), oauth_entry(credentials));
    })
}

/// How the method prompt is answered: the browser sign-in, or another one (`--no-browser`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum MethodChoice {
    Browser,
    Other,
}

/// The terminal side of a sign-in.
struct TerminalLogin {
    provider: &'static str,
    choice: MethodChoice,
    browser: bool,
    skipped: Mutex<Vec<String>>,
    lines: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
    cancel: CancellationToken,
    /// The global settings.json, which keeps the device id.
    settings_path: std::path::PathBuf,
}

fn say(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

impl TerminalLogin {
    /// Prints `message` and waits for a line of input (EOF cancels the sign-in).
    async fn question(
        &self,
        message: &str,
        cancel: &CancellationToken,
    ) -> Result<String, OAuthError> {
        print!("{message}");
        let _ = std::io::stdout().flush();
        let mut lines = self.lines.lock().await;
        let answer = tokio::select! {
            line = lines.recv() => line.ok_or(OAuthError::Cancelled),
            () = cancel.cancelled() => Err(OAuthError::Cancelled),
            () = self.cancel.cancelled() => Err(OAuthError::Cancelled),
        };
        if answer.is_err() {
            // The question ends unanswered (the browser finished first): end its line.
            say("");
        }
        answer
    }

    async fn select(
        &self,
        message: &str,
        options: &[SelectOption],
        cancel: &CancellationToken,
    ) -> Result<String, OAuthError> {
        say(message);
        for (index, option) in options.iter().enumerate() {
            say(&format!("  {}. {}", index + 1, option.label));
        }
        loop {
            let answer = self
                .question(&format!("Select 1-{}: ", options.len()), cancel)
                .await?;
            if let Some(option) = answer
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| options.get(i))
            {
                return Ok(option.id.clone());
            }
            say(&format!("Enter a number from 1 to {}.", options.len()));
        }
    }
}

impl LoginInteraction for TerminalLogin {
    fn notify(&self, notice: LoginNotice) {
        match notice {
            LoginNotice::AuthUrl { url, instructions } => {
                say(&format!("Open this URL to sign in:\n  {url}"));
                if let Some(instructions) = instructions {
                    say(&instructions);
                }
                if self.browser {
                    open_browser(&url);
                }
                let skipped = self
                    .skipped
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                let rerun = format!("\"pi auth login {} --no-browser\"", self.provider);
                match skipped.as_slice() {
                    [] => {}
                    [only] => say(&format!("To use \"{only}\" instead, run {rerun}")),
                    many => say(&format!(
                        "Other sign-in methods: {}. Run {rerun} to choose one.",
                        many.iter()
                            .map(|l| format!("\"{l}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
            LoginNotice::DeviceCode {
                verification_uri,
                user_code,
            } => {
                say(&format!(
                    "Open {verification_uri} and enter code: {user_code}"
                ));
                if self.browser {
                    open_browser(&verification_uri);
                }
                say("Waiting for authentication...");
            }
            LoginNotice::Progress(message) => say(&message),
        }
    }

    fn prompt<'a>(
        &'a self,
        prompt: LoginPrompt,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, OAuthError>> {
        Box::pin(async move {
            match prompt {
                LoginPrompt::Select { message, options } => {
                    let Some((first, others)) = options.split_first() else {
                        return Err(OAuthError::Failed("No sign-in method offered".into()));
                    };
                    match (self.choice, others) {
                        (MethodChoice::Browser, _) => {
                            *self.skipped.lock().unwrap_or_else(PoisonError::into_inner) =
                                others.iter().map(|o| o.label.clone()).collect();
                            Ok(first.id.clone())
                        }
                        (MethodChoice::Other, []) => Ok(first.id.clone()),
                        (MethodChoice::Other, [only]) => {
                            say(&format!("{message} {}", only.label));
                            Ok(only.id.clone())
                        }
                        (MethodChoice::Other, many) => self.select(&message, many, &cancel).await,
                    }
                }
                LoginPrompt::Text {
                    message,
                    placeholder,
                }
                | LoginPrompt::ManualCode {
                    message,
                    placeholder,
                } => {
                    let placeholder = placeholder.map(|p| format!(" ({p})")).unwrap_or_default();
                    self.question(&format!("{message}{placeholder}: "), &cancel)
                        .await
                }
                LoginPrompt::Secret { message } => {
                    self.question(&format!("{message}: "), &cancel).await
                }
            }
        })
    }

    fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    fn device_id(&self) -> Option<String> {
        crate::config::device_id::get_or_create(&self.settings_path)
    }
}

/// Lines of stdin, read on their own thread (a blocking read cannot be cancelled; the
/// thread ends with the process).
fn stdin_lines() -> mpsc::UnboundedReceiver<String> {
    let (sender, receiver) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        loop {
            let mut line = String::new();
            match stdin.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if sender
                        .send(line.trim_end_matches(['\r', '\n']).to_owned())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    receiver
}

/// Runs the sign-in of `provider` and saves it; returns the exit code.
pub fn run_oauth_login(
    login: OAuthProvider,
    browser: bool,
    display_name: &str,
    auth_path: &Path,
) -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let terminal = Arc::new(TerminalLogin {
        provider: login.id(),
        choice: if browser {
            MethodChoice::Browser
        } else {
            MethodChoice::Other
        },
        browser,
        skipped: Mutex::new(Vec::new()),
        lines: tokio::sync::Mutex::new(stdin_lines()),
        cancel: CancellationToken::new(),
        settings_path: auth_path.with_file_name("settings.json"),
    });
    let result = runtime.block_on(async {
        let cancel = terminal.cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        login.login(terminal.as_ref()).await
    });
    match result {
        Ok(credentials) => match save_login(auth_path, login.id(), &credentials) {
            Ok(()) => {
                say(&format!(
                    "Logged in to {display_name}. Credentials saved to {}",
                    auth_path.display()
                ));
                0
            }
            Err(e) => {
                eprintln!("Failed to log in to {display_name}: could not save the login: {e}");
                1
            }
        },
        Err(OAuthError::Cancelled) => {
            eprintln!("Login cancelled.");
            1
        }
        Err(error) => {
            eprintln!("Failed to log in to {display_name}: {error}");
            1
        }
    }
}
