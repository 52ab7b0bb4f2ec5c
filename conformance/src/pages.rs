//! Reading the examples out of an explanation page (`diagnostics/explain/README.md`
//! describes the format).

/// One example section of a page: the document, and the optional setup documents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Example {
    pub document: String,
    pub context: Option<String>,
    pub bindings: Option<String>,
    pub snapshot: Option<String>,
    pub extra: Vec<(String, String)>,
}

impl Example {
    /// The documents the example is checked with (the embedded catalog).
    pub fn setup(&self) -> crate::Setup {
        crate::Setup {
            catalog: None,
            context: self.context.clone(),
            bindings: self.bindings.clone(),
            snapshot: self.snapshot.clone(),
        }
    }
}

/// The failing and fixed examples of a page.
#[derive(Clone, Debug, PartialEq)]
pub struct PageExamples {
    pub failing: Example,
    pub fixed: Example,
}

/// Splits a page into its two example sections and their fenced blocks.
pub fn examples(page: &str) -> Result<PageExamples, String> {
    let section = |heading: &str| -> Result<Example, String> {
        let start = page.find(heading).ok_or_else(|| format!("no `{heading}` section"))?;
        let rest = &page[start + heading.len()..];
        let end = rest.find("\n## ").unwrap_or(rest.len());
        let body = &rest[..end];
        let mut example = Example::default();
        let mut found = false;
        let mut lines = body.lines();
        while let Some(line) = lines.next() {
            let Some(info) = line.trim_start().strip_prefix("```") else { continue };
            let mut block = String::new();
            for line in lines.by_ref() {
                if line.trim_start().starts_with("```") {
                    break;
                }
                block.push_str(line);
                block.push('\n');
            }
            match info.trim() {
                "json" if !found => {
                    example.document = block;
                    found = true;
                }
                "json context" => example.context = Some(block),
                "json bindings" => example.bindings = Some(block),
                "json snapshot" => example.snapshot = Some(block),
                other => example.extra.push((other.to_string(), block)),
            }
        }
        if !found {
            return Err(format!("`{heading}` has no ```json block"));
        }
        Ok(example)
    };
    Ok(PageExamples { failing: section("## Failing example")?, fixed: section("## Fixed example")? })
}
