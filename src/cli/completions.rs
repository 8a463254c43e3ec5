//! `issuer completions SHELL` and `issuer man`: generated from the clap
//! definitions, so they never drift from the real options.

use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;
use ticket_issuer::error::Error;

/// Arguments of `completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script for a shell.
pub fn completions(args: &CompletionArgs) -> Result<i32, Error> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "issuer", &mut script);
    super::out::bytes(&script);
    Ok(0)
}

/// Prints the manual page (roff).
pub fn man() -> Result<i32, Error> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| Error::io("<standard output>".as_ref(), e))?;
    super::out::bytes(&page);
    Ok(0)
}
