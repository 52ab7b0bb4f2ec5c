//! `little lsp`: a language server over the same salsa database as `little check`.
//!
//! The main loop ([`server`]) owns the database and applies edits in order; the features
//! ([`features`]) run on workers from database clones; [`analysis`] reads the JSON tree
//! under the cursor; [`settings`] says where the catalog, context, binding rows and
//! snapshot come from; [`transport`] carries messages, and answers already written as JSON.

pub mod analysis;
pub mod features;
pub mod ownership;
pub mod server;
pub mod settings;
pub mod transport;

pub use server::serve;

/// Serves one client over stdin and stdout until it exits.
pub fn run_stdio() -> Result<(), String> {
    let (connection, io_threads) = transport::Connection::stdio();
    serve(connection, little_passes::Database::default())?;
    io_threads.join().map_err(|e| format!("the connection failed: {e}"))
}
