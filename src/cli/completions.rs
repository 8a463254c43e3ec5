//! `issuer completions SHELL` and `issuer man`: generated from the clap
//! definitions, so they never drift from the real options.

use clap_complete::Shell;

use ticket_issuer::error::Error;

/// Arguments of `completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script for a shell, of `cli` (the whole command
/// line's definition).
pub fn completions(args: &CompletionArgs, mut cli: clap::Command) -> Result<i32, Error> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "issuer", &mut script);
    super::out::bytes(&script);
    Ok(0)
}

/// Arguments of `man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write issuer.1 and a page per command (issuer-generate.1, …, which
    /// issuer.1 refers to) into this folder instead of printing issuer.1.
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
}

/// Prints the manual page (roff) of `cli` (the whole command line's
/// definition), or writes every page into a folder.
pub fn man(args: &ManArgs, cli: clap::Command) -> Result<i32, Error> {
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        clap_mangen::generate_to(cli, dir).map_err(|e| Error::io(dir, e))?;
        outln!("wrote the manual pages into {}", dir.display());
        return Ok(0);
    }
    let mut page = Vec::new();
    // As `--dir` writes them: no page for the `help` subcommand.
    clap_mangen::Man::new(cli.disable_help_subcommand(true))
        .render(&mut page)
        .map_err(|e| Error::io("<standard output>".as_ref(), e))?;
    super::out::bytes(&page);
    Ok(0)
}
