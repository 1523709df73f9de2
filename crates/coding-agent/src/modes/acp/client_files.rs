//! The editor's `fs/read_text_file` and `fs/write_text_file` as pi's text file access
//! (tools::client_files), when the editor offers them: the agent reads the buffers the
//! user sees, unsaved changes included, and its writes go through the editor.

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    FileSystemCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use futures_util::future::BoxFuture;

use super::link::Link;
use crate::tools::client_files::ClientFiles;

pub struct EditorFiles {
    link: Arc<Link>,
    read: bool,
    write: bool,
}

impl EditorFiles {
    /// The editor's file access, when it offers any.
    pub fn offered(link: Arc<Link>, fs: &FileSystemCapabilities) -> Option<Self> {
        (fs.read_text_file || fs.write_text_file).then(|| EditorFiles {
            link,
            read: fs.read_text_file,
            write: fs.write_text_file,
        })
    }
}

impl ClientFiles for EditorFiles {
    fn read_text<'a>(&'a self, path: &'a Path) -> Option<BoxFuture<'a, Result<String, String>>> {
        if !self.read {
            return None;
        }
        let connection = self.link.connection()?.clone();
        let session = self.link.session_id()?;
        Some(Box::pin(
            async move { read(&connection, session, path).await },
        ))
    }

    fn write_text<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> Option<BoxFuture<'a, Result<(), String>>> {
        if !self.write {
            return None;
        }
        let connection = self.link.connection()?.clone();
        let session = self.link.session_id()?;
        let link = self.link.clone();
        let can_read = self.read;
        Some(Box::pin(async move {
            // The text replaced, for the call's diff: the editor's (none for a new file).
            let old_text = if can_read {
                read(&connection, session.clone(), path).await.ok()
            } else {
                std::fs::read_to_string(path).ok()
            };
            let request =
                WriteTextFileRequest::new(session, path.to_path_buf(), content.to_owned());
            connection
                .send_request(request)
                .block_task()
                .await
                .map_err(|error| error.message)?;
            link.edits.written(path, old_text, content);
            Ok(())
        }))
    }
}

/// `fs/read_text_file` of a whole file.
async fn read(
    connection: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Client>,
    session: String,
    path: &Path,
) -> Result<String, String> {
    connection
        .send_request(ReadTextFileRequest::new(session, path.to_path_buf()))
        .block_task()
        .await
        .map(|response| response.content)
        .map_err(|error| error.message)
}
