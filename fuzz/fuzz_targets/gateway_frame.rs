//! pi-gateway's own WebSocket protocol: an arbitrary client frame read as the connection
//! reads it (the request, then the parameters of its method), and the response written for
//! it. Properties: nothing panics, a request survives a trip through its JSON form, and a
//! response reads back as it was written.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_gateway::server::channel_binding::ToolReply;
use pi_gateway::server::protocol::{
    ApiError, AuthParams, BranchParams, CreateParams, HistoryParams, NavigateParams, PromptParams,
    Request, Response, ResumeParams, SessionParams, SubscribeParams, codes, params,
};
use serde_json::Value;

/// The parameters of `request` as its method reads them; the error text when they do not.
fn read_params(request: &Request) -> Result<(), ApiError> {
    let p = &request.params;
    match request.method.as_str() {
        "auth" => params::<AuthParams>(p).map(drop),
        "session.create" => params::<CreateParams>(p).map(drop),
        "session.resume" | "session.describe" => params::<ResumeParams>(p).map(drop),
        "session.branch" => params::<BranchParams>(p).map(drop),
        "session.navigate" => params::<NavigateParams>(p).map(drop),
        "session.prompt" | "session.steer" | "session.followUp" => {
            params::<PromptParams>(p).map(drop)
        }
        "session.subscribe" => params::<SubscribeParams>(p).map(drop),
        "session.history" => params::<HistoryParams>(p).map(drop),
        "tool.result" => params::<ToolReply>(p).map(drop),
        _ => params::<SessionParams>(p).map(drop),
    }
}

/// `response` written as a frame and read back.
fn check_response(response: Response) {
    let text = response.to_text();
    match serde_json::from_str::<Response>(&text) {
        Ok(back) => assert_eq!(back, response, "the response changed through {text}"),
        Err(e) => panic!("the response frame {text} does not read back: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let request = match serde_json::from_str::<Request>(&text) {
        Ok(request) => request,
        Err(e) => {
            let error = ApiError::new(codes::BAD_REQUEST, e.to_string());
            return check_response(Response::new(Value::Null, Err(error)));
        }
    };
    let written = match serde_json::to_string(&request) {
        Ok(written) => written,
        Err(e) => panic!("a request read does not write back: {e}"),
    };
    match serde_json::from_str::<Request>(&written) {
        Ok(back) => assert_eq!(back, request, "the request changed through {written}"),
        Err(e) => panic!("the request written as {written} does not read back: {e}"),
    }
    let outcome = read_params(&request).map(|()| request.params.clone());
    check_response(Response::new(request.id.clone(), outcome));
});
