//! `little graph`: the picture is drawn by `little_embed::graph`, which the MCP server shares.

pub use little_embed::graph::{Picture, draw_checked};
