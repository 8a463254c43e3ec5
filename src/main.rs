//! The `issuer` binary: all work is in the library (`ticket_issuer::cli`).

fn main() {
    std::process::exit(ticket_issuer::cli::main());
}
