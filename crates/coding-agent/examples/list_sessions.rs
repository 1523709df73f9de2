//! Lists every session under `$PI_CODING_AGENT_DIR/sessions` as `pi -r` and `/resume`
//! do (the "all" view), for bench/session_list.sh.
//!
//! usage: list_sessions [SESSIONS_ROOT]

use pi_coding_agent::session::list::list_all_sessions;

fn main() {
    let root = std::env::args().nth(1).map_or_else(
        || {
            let agent = std::env::var("PI_CODING_AGENT_DIR").unwrap_or_else(|_| ".".into());
            std::path::PathBuf::from(agent).join("sessions")
        },
        std::path::PathBuf::from,
    );
    let sessions = list_all_sessions(&root);
    let messages: usize = sessions.iter().map(|s| s.message_count).sum();
    println!("{} sessions, {messages} messages", sessions.len());
}
