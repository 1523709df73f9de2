//! `mock-llm` binary: serve scripted LLM responses until killed.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mock_llm::{MockError, MockServer, Script};

/// Scripted LLM server speaking provider wire formats (tests only).
#[derive(Debug, Parser)]
#[command(name = "mock-llm", version)]
struct Args {
    /// Port to listen on.
    #[arg(long, default_value_t = 18080)]
    port: u16,
    /// Host or IP address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// JSON file holding an array of Scripts to enqueue at start.
    #[arg(long)]
    script: Option<PathBuf>,
}

async fn run(args: Args) -> Result<(), MockError> {
    let scripts = match &args.script {
        Some(path) => Script::parse_many(&std::fs::read_to_string(path)?)?,
        None => Vec::new(),
    };
    let addr = tokio::net::lookup_host((args.host.as_str(), args.port))
        .await?
        .next()
        .ok_or_else(|| std::io::Error::other(format!("cannot resolve host {}", args.host)))?;
    let server = MockServer::start_on(addr).await?;
    server.push_all(scripts);
    let mut stdout = std::io::stdout();
    writeln!(stdout, "mock-llm listening on {}", server.url())?;
    stdout.flush()?;
    std::future::pending::<()>().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mock-llm: {err}");
            ExitCode::FAILURE
        }
    }
}
