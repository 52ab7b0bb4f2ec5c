//! Runs one shell command in a sandbox (bubblewrap namespaces, or a plain process group)
//! with a time limit and bounded output; it knows nothing about workflows.
