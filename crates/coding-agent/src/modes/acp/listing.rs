//! `session/list`: pi's saved sessions for the editor's session picker, newest first, those
//! of one folder when the editor names it, a page at a time (the cursor is the offset).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use agent_client_protocol::v1::schema::{ListSessionsResponse, SessionInfo as AcpSession};

use crate::session::list::{SessionInfo, list_all_sessions, list_sessions};
use crate::session::time::iso_from_millis;

/// Sessions per page.
pub const PAGE: usize = 50;

/// The longest title taken from a first message, in characters.
const TITLE_CHARS: usize = 100;

/// Every saved session: each project's folder under the agent dir, and `current` (the
/// folder the open session is saved in) when it lies elsewhere (`--session-dir`).
pub fn gather(agent_dir: &Path, current: Option<&Path>) -> Vec<SessionInfo> {
    let root = agent_dir.join("sessions");
    let mut all = list_all_sessions(&root);
    if let Some(dir) = current.filter(|dir| !dir.starts_with(&root)) {
        let known: HashSet<PathBuf> = all.iter().map(|s| s.path.clone()).collect();
        all.extend(
            list_sessions(dir)
                .into_iter()
                .filter(|s| !known.contains(&s.path)),
        );
    }
    all.sort_by_key(|s| std::cmp::Reverse(s.modified));
    all
}

/// The page of `sessions` (of folder `cwd` when given) from `cursor` on.
pub fn page(
    sessions: &[SessionInfo],
    cwd: Option<&Path>,
    cursor: Option<&str>,
) -> Result<ListSessionsResponse, String> {
    let start = match cursor {
        None => 0,
        Some(text) => text
            .parse::<usize>()
            .map_err(|_| format!("Not a cursor of session/list: {text}"))?,
    };
    let wanted: Vec<&SessionInfo> = sessions
        .iter()
        .filter(|s| cwd.is_none_or(|cwd| Path::new(&s.cwd) == cwd))
        .collect();
    let listed = wanted
        .iter()
        .skip(start)
        .take(PAGE)
        .map(|s| to_acp(s))
        .collect();
    let next = start + PAGE;
    Ok(ListSessionsResponse::new(listed)
        .next_cursor((next < wanted.len()).then(|| next.to_string())))
}

fn to_acp(session: &SessionInfo) -> AcpSession {
    let updated = session
        .modified
        .duration_since(UNIX_EPOCH)
        .map(|d| iso_from_millis(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
        .ok();
    AcpSession::new(session.id.clone(), PathBuf::from(&session.cwd))
        .title(title(session))
        .updated_at(updated)
}

/// The session's name, else the first line of its first message.
fn title(session: &SessionInfo) -> Option<String> {
    if let Some(name) = session.name.as_ref().filter(|n| !n.trim().is_empty()) {
        return Some(name.clone());
    }
    if session.message_count == 0 {
        return None;
    }
    let line = session
        .first_message
        .lines()
        .next()
        .unwrap_or_default()
        .trim();
    if line.is_empty() {
        return None;
    }
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    Some(title)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn session(id: &str, cwd: &str, age: u64, first: &str) -> SessionInfo {
        SessionInfo {
            path: PathBuf::from(format!("/s/{id}.jsonl")),
            id: id.to_owned(),
            cwd: cwd.to_owned(),
            name: None,
            parent_session: None,
            created: String::new(),
            modified: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 - age),
            message_count: usize::from(!first.is_empty()),
            first_message: first.to_owned(),
            all_messages_text: String::new(),
        }
    }

    #[test]
    fn a_folder_is_listed_a_page_at_a_time() {
        let all: Vec<SessionInfo> = (0..120)
            .map(|i| {
                session(
                    &format!("s{i}"),
                    if i % 2 == 0 { "/a" } else { "/b" },
                    i,
                    "hi",
                )
            })
            .collect();
        let first = page(&all, Some(Path::new("/a")), None).unwrap();
        assert_eq!(first.sessions.len(), 50);
        assert_eq!(first.next_cursor.as_deref(), Some("50"));
        let rest = page(&all, Some(Path::new("/a")), Some("50")).unwrap();
        assert_eq!(rest.sessions.len(), 10);
        assert_eq!(rest.next_cursor, None);
        assert_eq!(page(&all, None, None).unwrap().sessions.len(), 50);
        assert!(page(&all, None, Some("x")).is_err());
    }

    #[test]
    fn the_title_is_the_name_or_the_first_line() {
        let mut named = session("n", "/a", 0, "first\nsecond");
        assert_eq!(title(&named).as_deref(), Some("first"));
        named.name = Some("Refactor".to_owned());
        assert_eq!(title(&named).as_deref(), Some("Refactor"));
        assert_eq!(title(&session("e", "/a", 0, "")), None);
        let long = session("l", "/a", 0, &"x".repeat(150));
        assert_eq!(title(&long).unwrap().chars().count(), 101);
        let listed = to_acp(&session("t", "/a", 0, "hi"));
        assert_eq!(
            listed.updated_at.as_deref(),
            Some("1970-01-12T13:46:40.000Z")
        );
    }
}
