//! `pi-sandbox`: confines itself with Landlock, then runs the command (see
//! `pi_gateway::sandbox::launcher` for the command line and exit codes).

fn main() -> std::process::ExitCode {
    pi_gateway::sandbox::launcher::main()
}
