//! `little`: the command line (SPEC §5).

mod cli;
mod discover;
mod github;
mod graph;
mod pipeline;
mod progress;
mod sarif;
mod schema;

fn main() {
    std::process::exit(cli::run(std::env::args_os().collect(), &mut std::io::stdout()));
}
