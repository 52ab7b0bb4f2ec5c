//! The type declarations of the npm and Python packages, generated from the JSON Schemas
//! of what little writes (`little_frontend::schemas::SCHEMAS` with `written`: the report,
//! the compiled document, the code list, the snapshot and the registration). The schemas
//! are the one source: embed's tests hold little's real output to them, and this crate
//! turns them into TypeScript interfaces (`bindings/node/types.d.ts`) and Python
//! `TypedDict`s (`bindings/python/python/little_compiler/_types.py`).
//!
//! It reads exactly the schema features those schemas use, and refuses any other with an
//! error naming where it is, rather than declaring a type it cannot vouch for:
//!
//! * `type` (one name, or primitive names with `null`), `enum` and `const` of scalars;
//! * `object` with `properties`, `required`, and `additionalProperties` (`false`, or a
//!   schema for the other keys); an object without `properties` is any JSON object, or a
//!   map when `additionalProperties` is a schema. Every object that lists properties is a
//!   named type: its `$defs` key, or else its `title` in PascalCase;
//! * `array` with `items`;
//! * `$ref` to `#/$defs/NAME` of the same schema, `anyOf` and `oneOf` (a union);
//! * a schema of annotations only (`{}`) is any JSON value;
//! * `title`, `description` (which becomes the doc comment) and validation keywords that
//!   no type expresses (`pattern`, `minimum`, …) are read and not typed.
//!
//! A `$defs` entry may recur in several schemas (each schema stands alone for editors) as
//! long as it is the same JSON in each; one type is declared for it. Types are written
//! with what they use before them, in the order the schemas first name them, so the
//! output is the same on every run.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use little_frontend::schemas::{DocumentSchema, SCHEMAS};
use serde_json::{Map, Value};

/// Why the declarations could not be generated: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// A generated file: its path from the repository's root, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub path: &'static str,
    pub text: String,
}

/// Where the TypeScript declarations go, from the repository's root.
pub const TYPESCRIPT: &str = "bindings/node/types.d.ts";
/// Where the Python `TypedDict`s go, from the repository's root.
pub const PYTHON: &str = "bindings/python/python/little_compiler/_types.py";
/// The command that regenerates them.
pub const COMMAND: &str = "cargo run -p little-typegen";

/// Both files, from the shipped schemas of what little writes.
pub fn generate() -> Result<Vec<Generated>, Error> {
    let schemas: Vec<&DocumentSchema> = SCHEMAS.iter().filter(|s| s.written).collect();
    let mut inputs = Vec::new();
    for schema in schemas {
        let value: Value = serde_json::from_str(schema.text)
            .map_err(|e| Error(format!("schemas/{}.schema.json is not JSON: {e}", schema.name)))?;
        inputs.push((format!("schemas/{}.schema.json", schema.name), value));
    }
    let model = Model::read(&inputs)?;
    Ok(vec![
        Generated { path: TYPESCRIPT, text: model.typescript() },
        Generated { path: PYTHON, text: model.python()? },
    ])
}

/// The files whose text on disk (under `root`) differs from what [`generate`] gives now.
pub fn stale(root: &Path) -> Result<Vec<&'static str>, Error> {
    let mut stale = Vec::new();
    for file in generate()? {
        let on_disk = std::fs::read_to_string(root.join(file.path)).unwrap_or_default();
        if on_disk != file.text {
            stale.push(file.path);
        }
    }
    Ok(stale)
}

/// A type, as a schema gives it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// Any JSON value (a schema of annotations only).
    Any,
    /// Any JSON object (`{"type": "object"}`).
    AnyObject,
    String,
    Integer,
    Number,
    Boolean,
    Null,
    /// One of these values (`enum`, `const`).
    Literal(Vec<Value>),
    Array(Box<Ty>),
    /// An object of any keys, each value of this type.
    Map(Box<Ty>),
    /// A named type.
    Ref(String),
    Union(Vec<Ty>),
}

/// A property of an object type.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub name: String,
    pub ty: Ty,
    pub required: bool,
    pub description: Option<String>,
}

/// What a named type is.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// An object with these properties; other keys are refused, or of type `rest`.
    Object { properties: Vec<Property>, rest: Option<Ty> },
    /// Another name for a type.
    Alias(Ty),
}

/// A named type.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub name: String,
    pub description: Option<String>,
    pub shape: Shape,
    /// Where it is first defined, and its schema there (a recurring definition must be
    /// the same JSON).
    origin: String,
    source: Value,
}

/// Every named type of a set of schemas.
#[derive(Debug, Default)]
pub struct Model {
    /// In the order the schemas first name them.
    types: Vec<Named>,
}

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &["title", "description", "$comment", "examples", "default", "deprecated"];
/// Keywords that validate what no declared type can express; read, not typed.
const VALIDATION_ONLY: &[&str] = &[
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "format",
];
/// Keywords that make the type.
const STRUCTURAL: &[&str] =
    &["type", "properties", "required", "additionalProperties", "items", "enum", "const", "$ref", "anyOf", "oneOf"];
/// Keywords only the root of a schema has.
const ROOT: &[&str] = &["$schema", "$id", "$defs"];

/// The reading of one schema document.
struct Reader<'a> {
    file: &'a str,
    root: &'a Value,
}

impl Model {
    /// Reads the schemas, `(file, schema)` each, in order.
    pub fn read(schemas: &[(String, Value)]) -> Result<Model, Error> {
        let mut model = Model::default();
        for (file, root) in schemas {
            let reader = Reader { file, root };
            let map = root.as_object().ok_or_else(|| Error(format!("{file}: a schema is an object")))?;
            let title = map
                .get("title")
                .and_then(Value::as_str)
                .ok_or_else(|| Error(format!("{file}: the root has no `title` to name its type by")))?;
            let mut body = map.clone();
            body.retain(|key, _| !ROOT.contains(&key.as_str()));
            reader.named(&mut model, &pascal_case(title), &Value::Object(body), "#", true)?;
            if let Some(defs) = map.get("$defs") {
                let defs = defs.as_object().ok_or_else(|| Error(format!("{file}#/$defs: not an object")))?;
                for (name, def) in defs {
                    if !is_identifier(name) {
                        return Err(Error(format!("{file}#/$defs/{name}: a type name must be an identifier")));
                    }
                    reader.named(&mut model, name, def, &format!("#/$defs/{name}"), false)?;
                }
            }
        }
        model.check_references()?;
        Ok(model)
    }

    /// The named types, each after the ones it uses.
    pub fn ordered(&self) -> Result<Vec<&Named>, Error> {
        let index: BTreeMap<&str, usize> = self.types.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();
        // 0 unvisited, 1 on the path, 2 written.
        let mut state = vec![0u8; self.types.len()];
        let mut order = Vec::new();
        for start in 0..self.types.len() {
            if state[start] != 0 {
                continue;
            }
            // An explicit stack of (type, its uses, next use).
            let mut stack: Vec<(usize, Vec<String>, usize)> = vec![(start, self.types[start].uses(), 0)];
            state[start] = 1;
            while let Some((at, uses, next)) = stack.last_mut() {
                if let Some(name) = uses.get(*next) {
                    *next += 1;
                    let used = index[name.as_str()];
                    match state[used] {
                        0 => {
                            state[used] = 1;
                            stack.push((used, self.types[used].uses(), 0));
                        }
                        1 => {
                            return Err(Error(format!(
                                "{}: `{}` refers to itself through `{name}`; recursive types are not supported",
                                self.types[*at].origin, self.types[*at].name
                            )));
                        }
                        _ => {}
                    }
                } else {
                    state[*at] = 2;
                    order.push(&self.types[*at]);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }

    fn add(&mut self, named: Named) -> Result<(), Error> {
        if let Some(known) = self.types.iter().find(|t| t.name == named.name) {
            if known.source == named.source {
                return Ok(());
            }
            return Err(Error(format!(
                "{}: the type `{}` is also defined at {}, differently; a type has one definition \
                 (make the two the same JSON, or rename one)",
                named.origin, named.name, known.origin
            )));
        }
        self.types.push(named);
        Ok(())
    }

    fn check_references(&self) -> Result<(), Error> {
        for named in &self.types {
            for used in named.uses() {
                if !self.types.iter().any(|t| t.name == used) {
                    return Err(Error(format!("{}: `{used}` is no type", named.origin)));
                }
            }
        }
        Ok(())
    }
}

impl Named {
    /// The names of the types it uses, in order, once each.
    fn uses(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut add = |ty: &Ty| ty.refs(&mut names);
        match &self.shape {
            Shape::Object { properties, rest } => {
                properties.iter().for_each(|p| add(&p.ty));
                rest.iter().for_each(add);
            }
            Shape::Alias(ty) => add(ty),
        }
        let mut seen = std::collections::BTreeSet::new();
        names.retain(|n| seen.insert(n.clone()));
        names
    }
}

impl Ty {
    fn refs(&self, into: &mut Vec<String>) {
        match self {
            Ty::Ref(name) => into.push(name.clone()),
            Ty::Array(item) | Ty::Map(item) => item.refs(into),
            Ty::Union(members) => members.iter().for_each(|m| m.refs(into)),
            _ => {}
        }
    }
}

impl Reader<'_> {
    fn at(&self, pointer: &str) -> String {
        format!("{}{pointer}", self.file)
    }

    fn fail<T>(&self, pointer: &str, what: impl fmt::Display) -> Result<T, Error> {
        Err(Error(format!("{}: {what}", self.at(pointer))))
    }

    /// Declares the schema at `pointer` as the type `name`: an object type when it lists
    /// properties, else an alias.
    fn named(&self, model: &mut Model, name: &str, schema: &Value, pointer: &str, root: bool) -> Result<(), Error> {
        let map = self.keywords(schema, pointer, root)?;
        let description = map.and_then(|m| m.get("description")).and_then(Value::as_str).map(str::to_string);
        let shape = match map {
            Some(map) if map.contains_key("properties") => self.object(model, map, pointer)?,
            _ => Shape::Alias(self.ty(model, schema, pointer)?),
        };
        model.add(Named {
            name: name.to_string(),
            description,
            shape,
            origin: self.at(pointer),
            source: schema.clone(),
        })
    }

    /// The keywords of a schema, each one known (`None` for a boolean schema).
    fn keywords<'v>(
        &self,
        schema: &'v Value,
        pointer: &str,
        root: bool,
    ) -> Result<Option<&'v Map<String, Value>>, Error> {
        match schema {
            Value::Bool(true) => Ok(None),
            Value::Bool(false) => self.fail(pointer, "the schema `false` (nothing is valid) has no type"),
            Value::Object(map) => {
                for key in map.keys() {
                    let known = ANNOTATIONS.contains(&key.as_str())
                        || VALIDATION_ONLY.contains(&key.as_str())
                        || STRUCTURAL.contains(&key.as_str())
                        || (root && ROOT.contains(&key.as_str()));
                    if !known {
                        return self.fail(pointer, format!("the keyword `{key}` is not supported by little-typegen"));
                    }
                }
                Ok(Some(map))
            }
            _ => self.fail(pointer, "a schema is an object or a boolean"),
        }
    }

    /// The object type of a schema that lists properties.
    fn object(&self, model: &mut Model, map: &Map<String, Value>, pointer: &str) -> Result<Shape, Error> {
        if map.get("type").is_some_and(|t| t != "object") {
            return self.fail(pointer, "`properties` on a schema whose `type` is not `object`");
        }
        for key in ["items", "enum", "const", "$ref", "anyOf", "oneOf"] {
            if map.contains_key(key) {
                return self.fail(pointer, format!("`{key}` beside `properties` is not supported"));
            }
        }
        let Some(Value::Object(properties)) = map.get("properties") else {
            return self.fail(pointer, "`properties` is not an object");
        };
        let mut required: Vec<&str> = Vec::new();
        if let Some(list) = map.get("required") {
            let Some(list) = list.as_array() else { return self.fail(pointer, "`required` is not an array") };
            for name in list {
                match name.as_str() {
                    Some(name) if properties.contains_key(name) => required.push(name),
                    _ => {
                        return self
                            .fail(pointer, format!("`required` names {name}, which `properties` does not list"));
                    }
                }
            }
        }
        let rest = match map.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) | None => {
                return self.fail(
                    pointer,
                    "an object that lists properties must say what else it holds \
                     (`additionalProperties`: false, or a schema)",
                );
            }
            Some(rest) => Some(self.ty(model, rest, &format!("{pointer}/additionalProperties"))?),
        };
        let mut out = Vec::new();
        for (name, schema) in properties {
            let at = format!("{pointer}/properties/{name}");
            let ty = self.ty(model, schema, &at)?;
            let description = schema.get("description").and_then(Value::as_str).map(str::to_string);
            out.push(Property { name: name.clone(), ty, required: required.contains(&name.as_str()), description });
        }
        Ok(Shape::Object { properties: out, rest })
    }

    /// The type of a schema; an object that lists properties is declared by its title.
    fn ty(&self, model: &mut Model, schema: &Value, pointer: &str) -> Result<Ty, Error> {
        let Some(map) = self.keywords(schema, pointer, false)? else { return Ok(Ty::Any) };
        let structural: Vec<&str> = map.keys().map(String::as_str).filter(|k| STRUCTURAL.contains(k)).collect();
        if let Some(target) = map.get("$ref") {
            if structural.len() > 1 {
                return self.fail(pointer, "`$ref` beside other keywords that make a type is not supported");
            }
            let name = target.as_str().and_then(|t| t.strip_prefix("#/$defs/"));
            return match name {
                Some(name) if self.root.pointer(&format!("/$defs/{name}")).is_some() => Ok(Ty::Ref(name.to_string())),
                _ => self.fail(pointer, format!("`$ref` {target} is not `#/$defs/NAME` of this schema")),
            };
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(members) = map.get(union) {
                if structural.len() > 1 {
                    return self
                        .fail(pointer, format!("`{union}` beside other keywords that make a type is not supported"));
                }
                let Some(members) = members.as_array().filter(|m| !m.is_empty()) else {
                    return self.fail(pointer, format!("`{union}` is not a non-empty array"));
                };
                let mut types = Vec::new();
                for (i, member) in members.iter().enumerate() {
                    types.push(self.ty(model, member, &format!("{pointer}/{union}/{i}"))?);
                }
                return Ok(union_of(types));
            }
        }
        if map.contains_key("properties") {
            let Some(title) = map.get("title").and_then(Value::as_str) else {
                return self.fail(pointer, "an object that lists properties needs a `title` to name its type by");
            };
            let name = pascal_case(title);
            self.named(model, &name, schema, pointer, false)?;
            return Ok(Ty::Ref(name));
        }
        if map.contains_key("required") {
            return self.fail(pointer, "`required` without `properties`");
        }
        if let Some(values) = map.get("enum") {
            let Some(values) = values.as_array().filter(|v| !v.is_empty()) else {
                return self.fail(pointer, "`enum` is not a non-empty array");
            };
            return self.literal(values, pointer);
        }
        if let Some(value) = map.get("const") {
            return self.literal(std::slice::from_ref(value), pointer);
        }
        let names: Vec<&str> = match map.get("type") {
            None => {
                if let Some(key) = structural.first() {
                    return self.fail(pointer, format!("`{key}` without a `type`"));
                }
                return Ok(Ty::Any);
            }
            Some(Value::String(name)) => vec![name],
            Some(Value::Array(names)) => match names.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                Some(names) if !names.is_empty() => names,
                _ => return self.fail(pointer, "`type` is not a name or a list of names"),
            },
            Some(_) => return self.fail(pointer, "`type` is not a name or a list of names"),
        };
        if names.len() > 1 {
            let mut types = Vec::new();
            for name in names {
                types.push(match name {
                    "string" => Ty::String,
                    "integer" => Ty::Integer,
                    "number" => Ty::Number,
                    "boolean" => Ty::Boolean,
                    "null" => Ty::Null,
                    other => {
                        return self
                            .fail(pointer, format!("`{other}` in a list of types is not supported (use `anyOf`)"));
                    }
                });
            }
            return Ok(union_of(types));
        }
        let only = |allowed: &[&str]| -> Result<(), Error> {
            match structural.iter().find(|k| **k != "type" && !allowed.contains(k)) {
                Some(key) => self.fail(pointer, format!("`{key}` on a schema of type `{}`", names[0])),
                None => Ok(()),
            }
        };
        match names[0] {
            "string" => only(&[]).map(|_| Ty::String),
            "integer" => only(&[]).map(|_| Ty::Integer),
            "number" => only(&[]).map(|_| Ty::Number),
            "boolean" => only(&[]).map(|_| Ty::Boolean),
            "null" => only(&[]).map(|_| Ty::Null),
            "array" => {
                only(&["items"])?;
                match map.get("items") {
                    Some(items) => Ok(Ty::Array(Box::new(self.ty(model, items, &format!("{pointer}/items"))?))),
                    None => self.fail(pointer, "an array without `items`"),
                }
            }
            "object" => {
                only(&["additionalProperties"])?;
                match map.get("additionalProperties") {
                    None | Some(Value::Bool(true)) => Ok(Ty::AnyObject),
                    Some(Value::Bool(false)) => self.fail(pointer, "an object that can hold no key"),
                    Some(rest) => {
                        Ok(Ty::Map(Box::new(self.ty(model, rest, &format!("{pointer}/additionalProperties"))?)))
                    }
                }
            }
            other => self.fail(pointer, format!("the type `{other}` is unknown")),
        }
    }

    fn literal(&self, values: &[Value], pointer: &str) -> Result<Ty, Error> {
        if let Some(value) = values.iter().find(|v| v.is_array() || v.is_object()) {
            return self.fail(pointer, format!("the value {value} of `enum` or `const` is not a scalar"));
        }
        Ok(Ty::Literal(values.to_vec()))
    }
}

/// The union of some types, flattened; one type is itself.
fn union_of(types: Vec<Ty>) -> Ty {
    let mut members = Vec::new();
    for ty in types {
        match ty {
            Ty::Union(inner) => members.extend(inner),
            ty if !members.contains(&ty) => members.push(ty),
            _ => {}
        }
    }
    if members.len() == 1 { members.pop().expect("one member") } else { Ty::Union(members) }
}

/// `Transition end` → `TransitionEnd`; `plannerConfig` → `PlannerConfig`.
fn pascal_case(title: &str) -> String {
    title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            let first = chars.next().expect("a word").to_ascii_uppercase();
            std::iter::once(first).chain(chars).collect::<String>()
        })
        .collect()
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Words of `text` in lines of at most `width` characters (a longer word stands alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The width of a doc comment's text.
const WIDTH: usize = 88;

// TypeScript.

impl Model {
    /// The TypeScript declarations: an interface for each object type, a type alias for
    /// the rest, each with its description as JSDoc.
    pub fn typescript(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "// The types of what little returns: generated by bindings/typegen from the JSON Schemas of\n\
             // what little writes (schemas/, `little schema NAME`). Do not edit; regenerate with\n\
             // `{COMMAND}`. index.d.ts re-exports them.\n\n"
        ));
        out.push_str("/** Any JSON value. */\n");
        out.push_str("export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };\n");
        out.push_str("/** Any JSON object. */\n");
        out.push_str("export type JsonObject = { [key: string]: Json };\n");
        for named in self.ordered().expect("checked when read") {
            out.push('\n');
            jsdoc(&mut out, "", named.description.as_deref());
            match &named.shape {
                Shape::Alias(ty) => out.push_str(&format!("export type {} = {};\n", named.name, ts(ty))),
                Shape::Object { properties, rest } => {
                    out.push_str(&format!("export interface {} {{\n", named.name));
                    for p in properties {
                        jsdoc(&mut out, "  ", p.description.as_deref());
                        let key = if is_identifier(&p.name) {
                            p.name.clone()
                        } else {
                            Value::from(p.name.as_str()).to_string()
                        };
                        let optional = if p.required { "" } else { "?" };
                        out.push_str(&format!("  {key}{optional}: {};\n", ts(&p.ty)));
                    }
                    if let Some(rest) = rest {
                        out.push_str(&format!("  [key: string]: {};\n", ts(rest)));
                    }
                    out.push_str("}\n");
                }
            }
        }
        out
    }
}

fn jsdoc(out: &mut String, indent: &str, text: Option<&str>) {
    let Some(text) = text else { return };
    let text = text.replace("*/", "*\\/");
    let lines = wrap(&text, WIDTH - indent.len());
    if lines.len() == 1 {
        out.push_str(&format!("{indent}/** {} */\n", lines[0]));
    } else {
        out.push_str(&format!("{indent}/**\n"));
        for line in lines {
            out.push_str(&format!("{indent} * {line}\n"));
        }
        out.push_str(&format!("{indent} */\n"));
    }
}

fn ts(ty: &Ty) -> String {
    match ty {
        Ty::Any => "Json".into(),
        Ty::AnyObject => "JsonObject".into(),
        Ty::String => "string".into(),
        Ty::Integer | Ty::Number => "number".into(),
        Ty::Boolean => "boolean".into(),
        Ty::Null => "null".into(),
        Ty::Literal(values) => values.iter().map(ts_literal).collect::<Vec<_>>().join(" | "),
        Ty::Array(item) => match **item {
            Ty::Union(_) => format!("({})[]", ts(item)),
            Ty::Literal(ref values) if values.len() > 1 => format!("({})[]", ts(item)),
            _ => format!("{}[]", ts(item)),
        },
        Ty::Map(value) => format!("{{ [key: string]: {} }}", ts(value)),
        Ty::Ref(name) => name.clone(),
        Ty::Union(members) => members.iter().map(ts).collect::<Vec<_>>().join(" | "),
    }
}

fn ts_literal(value: &Value) -> String {
    match value {
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        other => other.to_string(),
    }
}

// Python.

/// Python's keywords, which cannot name a field of a class-syntax `TypedDict`.
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

impl Model {
    /// The Python module: a `TypedDict` for each object type and an alias for the rest.
    /// Optional keys stay readable by Python 3.9 without `typing_extensions`: the
    /// required ones go in a `_NameRequired` base and the optional ones in a
    /// `total=False` class over it.
    pub fn python(&self) -> Result<String, Error> {
        let mut body = String::new();
        let mut typing = std::collections::BTreeSet::new();
        for named in self.ordered()? {
            body.push_str("\n\n");
            match &named.shape {
                Shape::Alias(ty) => {
                    comment(&mut body, "", named.description.as_deref());
                    body.push_str(&format!("{} = {}\n", named.name, py(ty, &mut typing)));
                }
                Shape::Object { properties, rest: Some(rest) } => {
                    // A TypedDict has no type for other keys: when every key is of one
                    // type, or the others are of any type, the object is a dict of it.
                    if let Some(p) = properties.iter().find(|p| *rest != Ty::Any && &p.ty != rest) {
                        return Err(Error(format!(
                            "{}: `{}` has the property `{}` of another type than its other keys; \
                             Python's TypedDict cannot say that",
                            named.origin, named.name, p.name
                        )));
                    }
                    let keys: Vec<&str> = properties.iter().map(|p| p.name.as_str()).collect();
                    let described = match named.description.as_deref() {
                        Some(d) => format!("{d} (Keys: {}.)", keys.join(", ")),
                        None => format!("Keys: {}.", keys.join(", ")),
                    };
                    comment(&mut body, "", Some(&described));
                    typing.insert("Dict");
                    body.push_str(&format!("{} = Dict[str, {}]\n", named.name, py(rest, &mut typing)));
                }
                Shape::Object { properties, rest: None } => {
                    typing.insert("TypedDict");
                    python_typed_dict(&mut body, named, properties, &mut typing)?;
                }
            }
        }
        let mut out = String::new();
        out.push_str(&format!(
            "\"\"\"The shapes of what little returns, as TypedDicts (docs/reference/diagnostics.md: ``little-report/v1``).\n\n\
             They are plain dicts at run time; these classes are for type checkers and readers. Keys\n\
             that a diagnostic or a candidate may omit are in the ``total=False`` classes.\n\n\
             Generated by bindings/typegen from the JSON Schemas of what little writes (schemas/,\n\
             ``little schema NAME``). Do not edit; regenerate with ``{COMMAND}``.\n\"\"\"\n\n"
        ));
        out.push_str(&format!("from typing import {}\n\n", typing.iter().copied().collect::<Vec<_>>().join(", ")));
        // Every type, for `from ._types import *` and the package's `__all__`.
        let mut names: Vec<&str> = self.types.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        out.push_str("__all__ = [\n");
        for name in names {
            out.push_str(&format!("    \"{name}\",\n"));
        }
        out.push_str("]\n");
        out.push_str(&body);
        Ok(out)
    }
}

fn python_typed_dict(
    out: &mut String,
    named: &Named,
    properties: &[Property],
    typing: &mut std::collections::BTreeSet<&'static str>,
) -> Result<(), Error> {
    let name = &named.name;
    let field = |p: &Property| !is_identifier(&p.name) || PYTHON_KEYWORDS.contains(&p.name.as_str());
    let required: Vec<&Property> = properties.iter().filter(|p| p.required).collect();
    let optional: Vec<&Property> = properties.iter().filter(|p| !p.required).collect();
    if properties.iter().any(field) {
        // A key that is no Python name: the functional syntax, one totality.
        if !required.is_empty() && !optional.is_empty() {
            return Err(Error(format!(
                "{}: `{name}` has a key that is no Python name and both required and optional keys; \
                 not supported",
                named.origin
            )));
        }
        let mut doc = named.description.clone().unwrap_or_default();
        for p in properties {
            if let Some(d) = &p.description {
                doc.push_str(&format!(" `{}`: {d}", p.name));
            }
        }
        comment(out, "", Some(doc.trim()));
        let total = if required.is_empty() { ", total=False" } else { "" };
        out.push_str(&format!("{name} = TypedDict(\n    \"{name}\",\n    {{\n"));
        for p in properties {
            out.push_str(&format!("        {}: {},\n", Value::from(p.name.as_str()), py(&p.ty, typing)));
        }
        out.push_str(&format!("    }}{total},\n)\n"));
        return Ok(());
    }
    let fields = |out: &mut String, props: &[&Property], typing: &mut std::collections::BTreeSet<&'static str>| {
        for p in props {
            comment(out, "    ", p.description.as_deref());
            out.push_str(&format!("    {}: {}\n", p.name, py(&p.ty, typing)));
        }
    };
    let docstring = |out: &mut String| {
        if let Some(d) = &named.description {
            let lines = wrap(&rst(d).replace("\"\"\"", "\\\"\\\"\\\""), WIDTH - 4);
            if lines.len() == 1 {
                out.push_str(&format!("    \"\"\"{}\"\"\"\n\n", lines[0]));
            } else {
                out.push_str(&format!("    \"\"\"{}\n", lines[0]));
                for line in &lines[1..] {
                    out.push_str(&format!("    {line}\n"));
                }
                out.push_str("    \"\"\"\n\n");
            }
        }
    };
    match (required.is_empty(), optional.is_empty()) {
        (_, true) => {
            out.push_str(&format!("class {name}(TypedDict):\n"));
            docstring(out);
            fields(out, &required, typing);
        }
        (true, false) => {
            out.push_str(&format!("class {name}(TypedDict, total=False):\n"));
            docstring(out);
            fields(out, &optional, typing);
        }
        (false, false) => {
            out.push_str(&format!("class _{name}Required(TypedDict):\n"));
            fields(out, &required, typing);
            out.push_str(&format!("\n\nclass {name}(_{name}Required, total=False):\n"));
            docstring(out);
            fields(out, &optional, typing);
        }
    }
    if properties.is_empty() {
        out.push_str("    pass\n");
    }
    Ok(())
}

/// Markdown's `code` as reStructuredText's ``code``.
fn rst(text: &str) -> String {
    text.replace('`', "``")
}

/// A description as `#:` comments, which Sphinx reads as the doc of what follows.
fn comment(out: &mut String, indent: &str, text: Option<&str>) {
    let Some(text) = text else { return };
    for line in wrap(&rst(text), WIDTH - indent.len() - 3) {
        out.push_str(&format!("{indent}#: {line}\n"));
    }
}

fn py(ty: &Ty, typing: &mut std::collections::BTreeSet<&'static str>) -> String {
    match ty {
        Ty::Any => {
            typing.insert("Any");
            "Any".into()
        }
        Ty::AnyObject => {
            typing.insert("Any");
            typing.insert("Dict");
            "Dict[str, Any]".into()
        }
        Ty::String => "str".into(),
        Ty::Integer => "int".into(),
        Ty::Number => "float".into(),
        Ty::Boolean => "bool".into(),
        Ty::Null => "None".into(),
        Ty::Literal(values) => {
            typing.insert("Literal");
            let values: Vec<String> = values
                .iter()
                .map(|v| match v {
                    Value::Null => "None".into(),
                    Value::Bool(true) => "True".into(),
                    Value::Bool(false) => "False".into(),
                    other => other.to_string(),
                })
                .collect();
            format!("Literal[{}]", values.join(", "))
        }
        Ty::Array(item) => {
            typing.insert("List");
            format!("List[{}]", py(item, typing))
        }
        Ty::Map(value) => {
            typing.insert("Dict");
            format!("Dict[str, {}]", py(value, typing))
        }
        Ty::Ref(name) => name.clone(),
        Ty::Union(members) => {
            let others: Vec<&Ty> = members.iter().filter(|m| **m != Ty::Null).collect();
            let inner = if others.len() == 1 {
                py(others[0], typing)
            } else {
                typing.insert("Union");
                format!("Union[{}]", others.iter().map(|m| py(m, typing)).collect::<Vec<_>>().join(", "))
            };
            if others.len() < members.len() {
                typing.insert("Optional");
                format!("Optional[{inner}]")
            } else {
                inner
            }
        }
    }
}

#[cfg(test)]
mod tests;
