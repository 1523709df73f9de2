//! Where a session's JSONL lines go besides its file: a sink that sees every line the
//! manager writes, in order (the gateway's cluster mode appends them to a replicated log).

use std::sync::Arc;

/// Receives each line written to a session file, without its newline.
#[derive(Clone)]
pub struct LineSink(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for LineSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineSink")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use pi_ai::{AssistantMessage, UserMessage};

    use super::*;
    use crate::session::manager::SessionManager;

    #[test]
    fn the_sink_sees_every_line_the_file_gets_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = SessionManager::create(dir.path(), dir.path());
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&seen);
        session.set_line_sink(LineSink(Arc::new(move |line| {
            sink.lock().unwrap().push(line.to_owned());
        })));
        session
            .append_message(UserMessage::text("question").into())
            .unwrap();
        // pi 1.6 writes the file from the first prompt on: the header and the question.
        assert_eq!(seen.lock().unwrap().len(), 2);
        session
            .append_message(AssistantMessage::empty("api", "p", "m").into())
            .unwrap();
        session
            .append_message(UserMessage::text("again").into())
            .unwrap();
        let file = std::fs::read_to_string(session.session_file().unwrap()).unwrap();
        let lines: Vec<String> = file.lines().map(str::to_owned).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(*seen.lock().unwrap(), lines);
    }
}
