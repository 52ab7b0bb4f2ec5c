//! `little`: the command line (docs/reference/command-line.md).

mod cli;
mod discover;
mod pipeline;
mod progress;
mod schema;

fn main() {
    std::process::exit(cli::run(std::env::args_os().collect(), &mut std::io::stdout()));
}
