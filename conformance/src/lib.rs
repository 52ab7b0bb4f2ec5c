//! little-conformance
