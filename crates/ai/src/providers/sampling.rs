//! A model's `samplingParams` merged into a request body as pi-ai 1.6 does it
//! (`Object.assign(params, samplingParams)`): its keys win, existing keys keep their place.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// A body with the model's sampling fields laid over it when it sets any.
pub struct WithSampling<'a, B> {
    pub body: &'a B,
    pub params: Option<Map<String, Value>>,
}

impl<'a, B> WithSampling<'a, B> {
    /// `body` with the sampling fields `model` sets for the request's thinking level.
    pub fn new(
        body: &'a B,
        model: &crate::types::Model,
        options: &crate::types::StreamOptions,
    ) -> Self {
        let level = options
            .reasoning_effort
            .unwrap_or(crate::types::ThinkingLevel::Off);
        WithSampling {
            body,
            params: model.sampling_params(level),
        }
    }
}

impl<B: Serialize> Serialize for WithSampling<'_, B> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(params) = &self.params else {
            return self.body.serialize(serializer);
        };
        let mut value = serde_json::to_value(self.body).map_err(serde::ser::Error::custom)?;
        if let Value::Object(fields) = &mut value {
            for (key, field) in params {
                fields.insert(key.clone(), field.clone());
            }
        }
        value.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sampling_fields_replace_in_place_and_new_ones_go_last() {
        let body = json!({"model": "m", "temperature": 0.5, "stream": true});
        let params = json!({"temperature": 0.9, "top_k": 40});
        let merged = WithSampling {
            body: &body,
            params: params.as_object().cloned(),
        };
        assert_eq!(
            serde_json::to_string(&merged).unwrap(),
            r#"{"model":"m","temperature":0.9,"stream":true,"top_k":40}"#
        );
        let plain = WithSampling {
            body: &body,
            params: None,
        };
        assert_eq!(serde_json::to_value(&plain).unwrap(), body);
    }
}
