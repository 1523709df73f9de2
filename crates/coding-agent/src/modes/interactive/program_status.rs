//! OSC 7501 program status (pi 1.6's `ProgramStatusReporter`): tells the terminal whether
//! pi is working, waiting for the user (a dialog or a login), done, failed or idle. Reports
//! carry only the session name, dialog titles and the first line of an error, never prompts
//! or model output, and are sent only to a terminal that answered the support query (or
//! with `PI_PROGRAM_STATUS=1`).

use base64::Engine;
use pi_agent_core::{AgentEvent, AgentMessage};
use pi_ai::{Message, StopReason};

use crate::session_event::{AgentSessionEvent, CompactionReason, SessionOnlyEvent};

/// The app name reported.
const APP: &str = "pi";
/// The longest message sent, in bytes.
const MAX_MESSAGE_BYTES: usize = 2048;

/// A state as the protocol names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Working,
    Blocked,
    Done,
    Error,
    Idle,
    /// Forget the status (sent on exit).
    Clear,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Working => "working",
            State::Blocked => "blocked",
            State::Done => "done",
            State::Error => "error",
            State::Idle => "idle",
            State::Clear => "clear",
        }
    }
}

/// One report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramStatus {
    pub state: State,
    /// What blocks (`dialog`, `auth`), for `blocked`.
    pub kind: Option<String>,
    pub message: Option<String>,
}

impl ProgramStatus {
    fn new(state: State) -> Self {
        ProgramStatus {
            state,
            kind: None,
            message: None,
        }
    }

    fn with_message(mut self, message: Option<String>) -> Self {
        self.message = message;
        self
    }

    /// The escape sequence: `ESC ] 7501 ; state=…:app=pi[:kind=…][:msg=<base64>] ST`.
    pub fn sequence(&self) -> String {
        let mut pairs = vec![
            format!("state={}", self.state.as_str()),
            format!("app={APP}"),
        ];
        if self.state == State::Blocked
            && let Some(kind) = &self.kind
        {
            pairs.push(format!("kind={kind}"));
        }
        let message = self
            .message
            .as_deref()
            .map(|m| {
                truncate_bytes(
                    m.replace(|c: char| c.is_control(), " ").trim(),
                    MAX_MESSAGE_BYTES,
                )
            })
            .unwrap_or_default();
        if !message.is_empty() {
            let encoded = base64::engine::general_purpose::STANDARD.encode(message.as_bytes());
            pairs.push(format!("msg={encoded}"));
        }
        format!("\x1b]7501;{}\x1b\\", pairs.join(":"))
    }
}

/// `text` cut to at most `max` bytes at a character boundary.
fn truncate_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

fn first_line(text: Option<&str>) -> String {
    text.and_then(|t| t.lines().next())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .unwrap_or("Error")
        .to_owned()
}

/// The state machine deciding what to report.
#[derive(Debug)]
pub struct Reporter {
    supported: bool,
    run_active: bool,
    compacting: bool,
    run_result: ProgramStatus,
    resting: ProgramStatus,
    /// Open dialogs by source, in the order they opened; the newest is reported.
    blocked: Vec<(String, String, String)>,
    last: Option<String>,
}

impl Reporter {
    /// A reporter that writes only when `supported`.
    pub fn new(supported: bool) -> Self {
        Reporter {
            supported,
            run_active: false,
            compacting: false,
            run_result: ProgramStatus::new(State::Done),
            resting: ProgramStatus::new(State::Idle),
            blocked: Vec::new(),
            last: None,
        }
    }

    /// Whether reports are sent at all.
    pub fn supported(&self) -> bool {
        self.supported
    }

    /// Follows a session event; the report to write when the status changed.
    pub fn handle(
        &mut self,
        event: &AgentSessionEvent,
        session_name: Option<&str>,
    ) -> Option<String> {
        match event {
            AgentSessionEvent::Agent(AgentEvent::AgentStart) => {
                self.run_active = true;
                self.run_result = ProgramStatus::new(State::Done);
            }
            AgentSessionEvent::Agent(AgentEvent::MessageEnd { message }) => {
                let AgentMessage::Llm(Message::Assistant(assistant)) = message else {
                    return None;
                };
                self.run_result = if assistant.stop_reason == StopReason::Error {
                    ProgramStatus::new(State::Error)
                        .with_message(Some(first_line(assistant.error_message.as_deref())))
                } else {
                    ProgramStatus::new(State::Done)
                };
            }
            AgentSessionEvent::Session(SessionOnlyEvent::CompactionStart { .. }) => {
                self.compacting = true;
            }
            AgentSessionEvent::Session(SessionOnlyEvent::CompactionEnd {
                reason,
                aborted,
                error_message,
                ..
            }) => {
                self.compacting = false;
                let failed = error_message.as_deref().map(|e| {
                    ProgramStatus::new(State::Error).with_message(Some(first_line(Some(e))))
                });
                if self.run_active {
                    if *aborted {
                        self.run_result = ProgramStatus::new(State::Idle);
                    } else if let Some(failed) = failed {
                        self.run_result = failed;
                    }
                } else if *aborted {
                    self.resting = ProgramStatus::new(State::Idle);
                } else if *reason == CompactionReason::Manual {
                    self.resting = failed.unwrap_or_else(|| ProgramStatus::new(State::Done));
                }
            }
            AgentSessionEvent::Session(SessionOnlyEvent::AgentSettled { aborted }) => {
                self.run_active = false;
                self.resting = if *aborted {
                    ProgramStatus::new(State::Idle)
                } else {
                    self.run_result.clone()
                };
            }
            AgentSessionEvent::Session(SessionOnlyEvent::SessionInfoChanged { .. }) => {}
            _ => return None,
        }
        self.report(session_name)
    }

    /// Reports `blocked` for a dialog of `source` (`kind` and title), or clears it.
    pub fn set_blocked(
        &mut self,
        source: &str,
        blocked: Option<(&str, &str)>,
        session_name: Option<&str>,
    ) -> Option<String> {
        self.blocked.retain(|(s, _, _)| s != source);
        if let Some((kind, message)) = blocked {
            self.blocked
                .push((source.to_owned(), kind.to_owned(), message.to_owned()));
        }
        self.report(session_name)
    }

    /// Forgets the previous session's run (after a session switch).
    pub fn reset(&mut self, session_name: Option<&str>) -> Option<String> {
        self.run_active = false;
        self.compacting = false;
        self.run_result = ProgramStatus::new(State::Done);
        self.resting = ProgramStatus::new(State::Idle);
        self.report(session_name)
    }

    /// The current status, when it differs from the last one written.
    pub fn report(&mut self, session_name: Option<&str>) -> Option<String> {
        if !self.supported {
            return None;
        }
        let sequence = self.current(session_name).sequence();
        if self.last.as_deref() == Some(sequence.as_str()) {
            return None;
        }
        self.last = Some(sequence.clone());
        Some(sequence)
    }

    /// What to write on exit (`clear`), if anything was reported.
    pub fn clear(&mut self) -> Option<String> {
        (self.supported && self.last.take().is_some())
            .then(|| ProgramStatus::new(State::Clear).sequence())
    }

    fn current(&self, session_name: Option<&str>) -> ProgramStatus {
        if let Some((_, kind, message)) = self.blocked.last() {
            return ProgramStatus {
                state: State::Blocked,
                kind: Some(kind.clone()),
                message: Some(message.clone()),
            };
        }
        if self.compacting {
            return ProgramStatus::new(State::Working)
                .with_message(Some("Compacting context".to_owned()));
        }
        let status = if self.run_active {
            ProgramStatus::new(State::Working)
        } else {
            self.resting.clone()
        };
        match status.state {
            State::Working | State::Done => status.with_message(session_name.map(str::to_owned)),
            _ => status,
        }
    }
}

/// Whether to report: `PI_PROGRAM_STATUS=1` always, `0` never, otherwise once the
/// terminal answered the support query.
pub fn enabled(override_value: Option<&str>, terminal_answered: bool) -> bool {
    match override_value {
        Some("1") => true,
        Some("0") => false,
        _ => terminal_answered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(sequence: &str) -> String {
        let msg = sequence
            .trim_end_matches("\x1b\\")
            .split(':')
            .find_map(|p| p.strip_prefix("msg="))
            .unwrap_or("");
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(msg)
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn formats_as_the_protocol_says() {
        let status = ProgramStatus {
            state: State::Blocked,
            kind: Some("dialog".into()),
            message: Some("Import session\nmore".into()),
        };
        let sequence = status.sequence();
        assert!(sequence.starts_with("\x1b]7501;state=blocked:app=pi:kind=dialog:msg="));
        assert_eq!(decode(&sequence), "Import session more");
        assert_eq!(
            ProgramStatus::new(State::Idle).sequence(),
            "\x1b]7501;state=idle:app=pi\x1b\\"
        );
    }

    #[test]
    fn a_run_goes_working_then_done_and_repeats_nothing() {
        let mut reporter = Reporter::new(true);
        assert!(reporter.report(None).unwrap().contains("state=idle"));
        assert_eq!(reporter.report(None), None);
        let start = AgentSessionEvent::Agent(AgentEvent::AgentStart);
        let working = reporter.handle(&start, Some("work")).unwrap();
        assert!(working.contains("state=working"));
        assert_eq!(decode(&working), "work");
        let settled = AgentSessionEvent::Session(SessionOnlyEvent::AgentSettled { aborted: false });
        assert!(
            reporter
                .handle(&settled, Some("work"))
                .unwrap()
                .contains("state=done")
        );
        let blocked = reporter
            .set_blocked("dialog", Some(("dialog", "Pick one")), None)
            .unwrap();
        assert!(blocked.contains("state=blocked:app=pi:kind=dialog"));
        assert!(
            reporter
                .set_blocked("dialog", None, None)
                .unwrap()
                .contains("state=done")
        );
        assert!(reporter.clear().unwrap().contains("state=clear"));
        assert!(Reporter::new(false).report(None).is_none());
    }

    #[test]
    fn the_override_decides_first() {
        assert!(enabled(Some("1"), false));
        assert!(!enabled(Some("0"), true));
        assert!(enabled(None, true) && !enabled(Some("auto"), false));
    }
}
