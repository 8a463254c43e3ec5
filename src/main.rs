//! The `issuer` binary: the command line ([`ticket_issuer::cli`]) parses,
//! calls the library and prints; all the work is in the library.

fn main() {
    std::process::exit(ticket_issuer::cli::main());
}
