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
        Some(Box::pin(async move {
            let request = ReadTextFileRequest::new(session, path.to_path_buf());
            connection
                .send_request(request)
                .block_task()
                .await
                .map(|response| response.content)
                .map_err(|error| error.message)
        }))
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
        Some(Box::pin(async move {
            let request =
                WriteTextFileRequest::new(session, path.to_path_buf(), content.to_owned());
            connection
                .send_request(request)
                .block_task()
                .await
                .map(drop)
                .map_err(|error| error.message)
        }))
    }
}
