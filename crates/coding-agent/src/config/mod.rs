//! Files under the agent dir (`~/.pi/agent`) and the project's `.pi/`, read as the
//! TypeScript pi reads them.

pub mod auth;
pub mod device_id;
pub mod experimental;
pub mod http_proxy;
pub mod oauth_refresh;
pub mod paths;
pub mod settings;
pub mod settings_file;
pub mod settings_store;
pub mod tui_settings;
pub mod values;
