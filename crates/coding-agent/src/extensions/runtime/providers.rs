//! The runtime's model side: providers and virtual models extensions registered, and the
//! host requests that stream a provider's reply or route a virtual model's request.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ExtensionRuntime;
use crate::extensions::backend::BackendError;
use crate::extensions::registry::ProviderDef;

impl ExtensionRuntime {
    pub fn providers(&self) -> Vec<ProviderDef> {
        self.backends().iter().flat_map(|b| b.providers()).collect()
    }

    /// Virtual models extensions registered while loading.
    pub fn virtual_models(&self) -> Vec<crate::virtual_models::VirtualModelDef> {
        self.backends()
            .iter()
            .flat_map(|b| b.virtual_models())
            .collect()
    }

    /// Asks the extension that registered a virtual model where a request goes (a
    /// `route_model` request to the host).
    pub async fn route_model(
        &self,
        request: Value,
        cancel: CancellationToken,
    ) -> Result<Value, String> {
        let mut last = "No extension host runs this virtual model".to_owned();
        for backend in self.backends() {
            match backend
                .call_streaming(
                    "route_model",
                    request.clone(),
                    cancel.clone(),
                    Arc::new(|_| {}),
                )
                .await
            {
                Ok(value) => return Ok(value),
                Err(BackendError(error)) if error == "not supported by this backend" => {}
                Err(BackendError(error)) => last = error,
            }
        }
        Err(last)
    }

    /// Streams with the `streamSimple` of the provider named in `request` (a
    /// `provider_stream` request); the first backend that can answers.
    pub async fn stream_provider(
        &self,
        request: Value,
        cancel: CancellationToken,
        on_event: Arc<dyn Fn(Value) + Send + Sync>,
    ) -> Result<Value, String> {
        let mut last = "No extension host runs this provider".to_owned();
        for backend in self.backends() {
            match backend
                .call_streaming(
                    "provider_stream",
                    request.clone(),
                    cancel.clone(),
                    on_event.clone(),
                )
                .await
            {
                Ok(value) => return Ok(value),
                Err(BackendError(error)) if error == "not supported by this backend" => {}
                Err(BackendError(error)) => last = error,
            }
        }
        Err(last)
    }
}
