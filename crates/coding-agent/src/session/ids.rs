//! Session ids (UUID v7) and entry ids (8 hex characters, collision-checked).

/// A new session id.
pub fn session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The first 8 hex characters of a random UUID that `taken` does not already use.
pub fn short_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        if !taken(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().to_string()
}
