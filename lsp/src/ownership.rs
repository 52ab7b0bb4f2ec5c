//! Which files the server speaks about: little's documents, told by the format their text
//! claims (so that a broken one still gets its errors) or by little.toml's `files` globs.
//! Any other JSON file an editor attaches the server to (a `package.json`, a JSON Schema)
//! gets no diagnostics and no answers.

use std::path::Path;

/// Whether the server checks this document.
pub fn owned(path: Option<&Path>, text: &str, files: &[String]) -> bool {
    claims_little_format(text) || path.is_some_and(|p| files.iter().any(|glob| glob_match(glob, &p.to_string_lossy())))
}

/// Whether the text has a `"format"` (or `"apiVersion"`) key whose string value names one
/// of little's documents. Read from the text, not a parse: a draft between two keystrokes
/// is not JSON, and still little's.
pub fn claims_little_format(text: &str) -> bool {
    [
        ("\"format\"", little_frontend::claims_format as fn(&str) -> bool),
        ("\"apiVersion\"", little_frontend::claims_api_version),
    ]
    .into_iter()
    .any(|(key, claims)| string_values_of(text, key).any(claims))
}

/// The string values that follow each occurrence of `key` and a colon.
fn string_values_of<'a>(text: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    memchr::memmem::find_iter(text.as_bytes(), key.as_bytes()).filter_map(move |at| {
        let rest = text[at + key.len()..].trim_start();
        let rest = rest.strip_prefix(':')?.trim_start().strip_prefix('"')?;
        // Formats hold no escapes and no quotes: the value ends at the next quote.
        let end = rest.find(['"', '\n'])?;
        Some(&rest[..end])
    })
}

/// A glob over a whole path: `**` any number of folders, `*` anything within one, `?` one
/// character within one.
pub fn glob_match(glob: &str, path: &str) -> bool {
    let (glob, path): (Vec<char>, Vec<char>) = (glob.chars().collect(), path.chars().collect());
    // Iterative matching with one backtrack point per kind of star: linear in practice,
    // and no recursion on the length of either.
    let (mut g, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None; // `*`: where in the glob, where in the path
    let mut globstar: Option<(usize, usize)> = None; // `**`
    while p < path.len() {
        if g + 1 < glob.len() && glob[g] == '*' && glob[g + 1] == '*' {
            // `**/` also matches no folder at all.
            let after = if glob.get(g + 2) == Some(&'/') { g + 3 } else { g + 2 };
            globstar = Some((after, p));
            star = None;
            g = after;
        } else if g < glob.len() && glob[g] == '*' {
            star = Some((g + 1, p));
            g += 1;
        } else if g < glob.len() && (glob[g] == path[p] || (glob[g] == '?' && path[p] != '/')) {
            g += 1;
            p += 1;
        } else if let Some((after, from)) = star.filter(|&(_, from)| path[from] != '/') {
            star = Some((after, from + 1));
            g = after;
            p = from + 1;
        } else if let Some((after, from)) = globstar {
            globstar = Some((after, from + 1));
            star = None;
            g = after;
            p = from + 1;
        } else {
            return false;
        }
    }
    while g < glob.len() && glob[g] == '*' {
        g += 1;
    }
    g == glob.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_little_format_is_claimed_in_the_text_even_when_it_is_broken() {
        assert!(claims_little_format("{ \"format\": \"workflow-draft/v1\", \"nodes\": ["));
        assert!(claims_little_format("{\n  \"format\" : \"workflow-draft/v9\"\n}"));
        assert!(claims_little_format("{ \"apiVersion\": \"littleworkflow.dev/v0.1\", \"kind\": \"Wor"));
        assert!(claims_little_format("{ \"format\": \"workflow-definition/v1\" }"));
        assert!(!claims_little_format("{ \"name\": \"app\", \"version\": \"1.0.0\", \"scripts\": {} }"));
        assert!(!claims_little_format(
            "{ \"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"format\": \"date-time\" }"
        ));
        assert!(!claims_little_format("{ \"format\": \"workflow-drafts\" }"));
    }

    #[test]
    fn globs_match_whole_paths() {
        assert!(glob_match("/ws/workflows/**/*.json", "/ws/workflows/a.json"));
        assert!(glob_match("/ws/workflows/**/*.json", "/ws/workflows/team/x/a.json"));
        assert!(!glob_match("/ws/workflows/**/*.json", "/ws/other/a.json"));
        assert!(!glob_match("/ws/workflows/*.json", "/ws/workflows/team/a.json"));
        assert!(glob_match("/ws/*/draft-?.json", "/ws/x/draft-1.json"));
        assert!(!glob_match("/ws/*/draft-?.json", "/ws/x/draft-12.json"));
        assert!(glob_match("**", "/any/thing"));
    }
}
