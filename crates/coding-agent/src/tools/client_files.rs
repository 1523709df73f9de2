//! Text files read and written through the client when it offers to (an editor under ACP
//! with `fs.readTextFile` / `fs.writeTextFile`): the model then sees the editor's buffers,
//! unsaved changes included, and the editor's undo covers the agent's writes. One client
//! per process, as ACP mode serves one; unset, the tools use the disk.

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use futures_util::future::BoxFuture;

/// What the client offers.
pub trait ClientFiles: Send + Sync {
    /// The file's text as the client has it; `None` when it does not read files.
    fn read_text<'a>(&'a self, path: &'a Path) -> Option<BoxFuture<'a, Result<String, String>>>;
    /// Replaces the file's text; `None` when it does not write files.
    fn write_text<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> Option<BoxFuture<'a, Result<(), String>>>;
}

static CLIENT: RwLock<Option<Arc<dyn ClientFiles>>> = RwLock::new(None);

/// Routes text file reads and writes through `client` from now on (`None`: the disk).
pub fn set(client: Option<Arc<dyn ClientFiles>>) {
    *CLIENT.write().unwrap_or_else(PoisonError::into_inner) = client;
}

/// The client, when one is set.
pub fn get() -> Option<Arc<dyn ClientFiles>> {
    CLIENT
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}
