//! Package bindings of one node: malformed, unknown to the registry, stale.

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::context::Context;
use little_ir::draft::PackageBinding;

/// `MAJOR.MINOR.PATCH` with optional `-pre` and `+build` (semver 2.0 shape).
pub fn is_semver(version: &str) -> bool {
    let (core, _build) = version.split_once('+').unwrap_or((version, ""));
    let (core, pre) = match core.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (core, None),
    };
    let numeric = |part: &str| {
        !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) && (part == "0" || !part.starts_with('0'))
    };
    let parts: Vec<&str> = core.split('.').collect();
    let identifiers_ok =
        |s: &str| s.split('.').all(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    parts.len() == 3
        && parts.iter().all(|p| numeric(p))
        && pre.is_none_or(identifiers_ok)
        && (_build.is_empty() || identifiers_ok(_build))
}

/// `sha256:` followed by 64 lowercase hex digits.
pub fn is_sha256_digest(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

pub fn check(node_id: &str, at: &Anchor, packages: &[PackageBinding], context: Option<&Context>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, package) in packages.iter().enumerate() {
        let at = at.at("packages").at(i);
        let mut faults = Vec::new();
        match &package.name {
            Some(name) if !name.is_empty() => {}
            _ => faults.push("a `name`".to_string()),
        }
        match &package.version {
            Some(v) if is_semver(v) => {}
            Some(v) => faults.push(format!("a semver `version` (found `{v}`)")),
            None => faults.push("a `version`".to_string()),
        }
        match &package.digest {
            Some(d) if is_sha256_digest(d) => {}
            Some(_) => faults.push("a `digest` of the form `sha256:` + 64 lowercase hex".to_string()),
            None => faults.push("a `digest`".to_string()),
        }
        if !faults.is_empty() {
            findings.push(
                Finding::new(
                    Code::PackageMalformedBinding,
                    at,
                    format!("a package binding of node `{node_id}` needs {}", faults.join(", ")),
                )
                .node(node_id),
            );
            continue;
        }
        let Some(context) = context else { continue };
        let (name, version, digest) = (
            package.name.as_deref().unwrap_or_default(),
            package.version.as_deref().unwrap_or_default(),
            package.digest.as_deref().unwrap_or_default(),
        );
        match context.packages.iter().find(|p| p.name == name) {
            None => {
                let help = suggest::did_you_mean(name, context.packages.iter().map(|p| p.name.as_str()));
                findings.push(
                    Finding::new(
                        Code::PackageUnknown,
                        at.at("name"),
                        format!(
                            "node `{node_id}` binds package `{name}`, which tenant `{}`'s registry does not have",
                            context.tenant_id
                        ),
                    )
                    .node(node_id)
                    .help(help),
                );
            }
            Some(current) if current.version != version => findings.push(
                Finding::new(
                    Code::PackageStaleBinding,
                    at.at("version"),
                    format!(
                        "node `{node_id}` binds `{name}` {version}, but the registry's current version is {}",
                        current.version
                    ),
                )
                .node(node_id),
            ),
            Some(current) if current.digest != digest => findings.push(
                Finding::new(
                    Code::PackageStaleBinding,
                    at.at("digest"),
                    format!(
                        "node `{node_id}` binds `{name}` {version} with digest {digest}, but the registry has {}",
                        current.digest
                    ),
                )
                .node(node_id),
            ),
            Some(_) => {}
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_shapes() {
        for ok in ["1.4.2", "0.0.0", "1.0.0-rc.1", "1.0.0+build.5", "10.20.30-alpha-1+x"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["1.4", "01.2.3", "1.2.3-", "1.2.x", "", "1.2.3.4", "v1.2.3"] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn digest_shape() {
        assert!(is_sha256_digest(&format!("sha256:{}", "a".repeat(64))));
        assert!(!is_sha256_digest(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_sha256_digest("sha256:abc"));
    }
}
