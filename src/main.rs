//! The `issuer` binary: the command line (`cli`) parses, calls the library
//! (`ticket_issuer`) and prints; all the work is in the library.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
