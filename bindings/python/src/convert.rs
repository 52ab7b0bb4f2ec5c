//! Python objects to the bytes `little_embed` reads, and its JSON values back to Python.
//! Neither direction recurses on the depth of a value: a 200,000-deep list goes through
//! as any other, with an explicit stack.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;

use little_embed::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

use crate::{Fail, Outcome};

/// The name of a value's type, for messages.
pub fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "an object".to_string())
}

/// `an object`, `a set`: a type name with its indefinite article.
pub fn with_article(name: &str) -> String {
    let vowel = name.chars().next().is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {name}", if vowel { "an" } else { "a" })
}

fn invalid(path: &str, message: String) -> Fail {
    Fail::Little(Error::new("input.invalid", message, Some(path)))
}

/// A text argument as bytes: a `str` as UTF-8 (one with lone surrogates as the bytes
/// `surrogatepass` gives, which little then reports as not UTF-8, as it does a file),
/// `bytes` or `bytearray` as they are.
pub fn text_bytes<'a>(value: &'a Bound<'_, PyAny>, name: &str) -> Outcome<Cow<'a, [u8]>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Ok(Cow::Owned(array.to_vec()));
    }
    if let Ok(string) = value.cast::<PyString>() {
        return match string.to_cow() {
            Ok(Cow::Borrowed(text)) => Ok(Cow::Borrowed(text.as_bytes())),
            Ok(Cow::Owned(text)) => Ok(Cow::Owned(text.into_bytes())),
            Err(_) => {
                let bytes = value.call_method1("encode", ("utf-8", "surrogatepass"))?;
                Ok(Cow::Owned(bytes.cast::<PyBytes>().map_err(PyErr::from)?.as_bytes().to_vec()))
            }
        };
    }
    Err(invalid(name, format!("`{name}` is a str or bytes, not {}", type_name(value))))
}

/// A text argument as a `str`: a `str` without lone surrogates, or UTF-8 `bytes`; else an
/// error with `code`.
pub fn text_str<'a>(value: &'a Bound<'_, PyAny>, name: &str, code: &'static str) -> Outcome<Cow<'a, str>> {
    let error = |message: String| Fail::Little(Error::new(code, format!("{name}: {message}"), Some(name)));
    if let Ok(string) = value.cast::<PyString>() {
        return string.to_cow().map_err(|_| error("the text has a lone surrogate, which is not Unicode text".into()));
    }
    if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        let bytes = text_bytes(value, name)?;
        return match bytes {
            Cow::Borrowed(bytes) => std::str::from_utf8(bytes).map(Cow::Borrowed),
            Cow::Owned(bytes) => String::from_utf8(bytes).map(Cow::Owned).map_err(|e| e.utf8_error()),
        }
        .map_err(|e| error(format!("the bytes are not UTF-8: {e}")));
    }
    Err(error(format!("a text is a str, not {}", type_name(value))))
}

/// A document argument as bytes: text (`str`, `bytes`) as [`text_bytes`] reads it, or an
/// already-parsed JSON value (a `dict` or `list`) written as JSON. A value inside that is
/// not JSON is refused with its path, e.g. `definition.tools[0].execute`.
pub fn document(value: &Bound<'_, PyAny>, name: &str) -> Outcome<Vec<u8>> {
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>()
    {
        return Ok(text_bytes(value, name)?.into_owned());
    }
    if value.is_instance_of::<PyDict>() || value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        return to_json(value, name);
    }
    Err(invalid(
        name,
        format!(
            "`{name}` is JSON text (a str or bytes) or a parsed JSON document (a dict or list), not {}",
            type_name(value)
        ),
    ))
}

enum Segment {
    Index(usize),
    Key(String),
}

fn render(root: &str, path: &[Segment]) -> String {
    let mut out = root.to_string();
    for segment in path {
        match segment {
            Segment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Segment::Key(key) => {
                let plain = key.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                    && key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '-');
                if plain {
                    let _ = write!(out, ".{key}");
                } else {
                    let _ = write!(out, "[{}]", serde_json::to_string(key).unwrap_or_default());
                }
            }
        }
    }
    out
}

/// An open array or object: its items (an object's as `(key, value)` tuples) and how many
/// are written.
struct Frame<'py> {
    items: Bound<'py, PyAny>,
    len: usize,
    next: usize,
    object: bool,
    id: usize,
}

/// A parsed JSON value as JSON text, as `json.dumps(value, allow_nan=False)` would write
/// it except that only `dict` (with `str` keys), `list`, `tuple`, `str`, `int`, `float`,
/// `bool` and `None` are taken, and without recursion.
fn to_json(root: &Bound<'_, PyAny>, name: &str) -> Outcome<Vec<u8>> {
    let mut writer = Writer { name, out: Vec::new(), open: HashSet::new(), path: Vec::new() };
    let mut stack: Vec<Frame<'_>> = Vec::new();
    match writer.value(root)? {
        Some(frame) => stack.push(frame),
        None => return Ok(writer.out),
    }
    while let Some(frame) = stack.last_mut() {
        if frame.next >= frame.len {
            writer.out.push(if frame.object { b'}' } else { b']' });
            writer.open.remove(&frame.id);
            stack.pop();
            // The segment that led to it (none for the root).
            writer.path.pop();
            continue;
        }
        if frame.next > 0 {
            writer.out.push(b',');
        }
        let index = frame.next;
        frame.next += 1;
        let item = frame.items.get_item(index)?;
        let value = if frame.object {
            let key = item.get_item(0)?;
            writer.key(&key)?;
            item.get_item(1)?
        } else {
            writer.path.push(Segment::Index(index));
            item
        };
        match writer.value(&value)? {
            Some(frame) => stack.push(frame),
            None => {
                writer.path.pop();
            }
        }
    }
    Ok(writer.out)
}

struct Writer<'n> {
    name: &'n str,
    out: Vec<u8>,
    /// The containers being written, by identity: one met again contains itself.
    open: HashSet<usize>,
    path: Vec<Segment>,
}

impl Writer<'_> {
    fn refused(&self, message: String) -> Fail {
        let at = render(self.name, &self.path);
        invalid(&at, format!("{at}: {message}"))
    }

    /// Writes an object's key and its `:`, and enters it in the path.
    fn key(&mut self, key: &Bound<'_, PyAny>) -> Outcome<()> {
        let Ok(key) = key.cast::<PyString>() else {
            return Err(self.refused(format!("a key is a str in JSON, not {} ({})", type_name(key), key.repr()?)));
        };
        let key = key.to_cow().map_err(|_| self.refused("a key with a lone surrogate is not Unicode text".into()))?;
        let _ = serde_json::to_writer(&mut self.out, &*key);
        self.out.push(b':');
        self.path.push(Segment::Key(key.into_owned()));
        Ok(())
    }

    /// Writes a scalar whole, or a container's opening and returns its frame.
    fn value<'py>(&mut self, value: &Bound<'py, PyAny>) -> Outcome<Option<Frame<'py>>> {
        if value.is_none() {
            self.out.extend_from_slice(b"null");
        } else if let Ok(flag) = value.cast::<PyBool>() {
            self.out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
        } else if value.is_instance_of::<PyInt>() {
            if let Ok(n) = value.extract::<i64>() {
                let _ = serde_json::to_writer(&mut self.out, &n);
            } else if let Ok(n) = value.extract::<u64>() {
                let _ = serde_json::to_writer(&mut self.out, &n);
            } else {
                // A big int: its digits, from a plain int (a subclass's `repr` may be a name).
                let plain = value.py().get_type::<PyInt>().call1((value,))?;
                self.out.extend_from_slice(plain.repr()?.to_cow()?.as_bytes());
            }
        } else if value.is_instance_of::<PyFloat>() {
            let n: f64 = value.extract()?;
            if !n.is_finite() {
                return Err(self.refused(format!("{n} is not a JSON number")));
            }
            let _ = serde_json::to_writer(&mut self.out, &n);
        } else if let Ok(string) = value.cast::<PyString>() {
            let text =
                string.to_cow().map_err(|_| self.refused("a str with a lone surrogate is not Unicode text".into()))?;
            let _ = serde_json::to_writer(&mut self.out, &*text);
        } else {
            let (items, object) = if let Ok(dict) = value.cast::<PyDict>() {
                (dict.items().into_any(), true)
            } else if let Ok(list) = value.cast::<PyList>() {
                (list.clone().into_any(), false)
            } else if let Ok(tuple) = value.cast::<PyTuple>() {
                (tuple.clone().into_any(), false)
            } else {
                return Err(self.refused(format!("{} is not JSON", with_article(&type_name(value)))));
            };
            let id = value.as_ptr() as usize;
            if !self.open.insert(id) {
                return Err(self.refused("a value that contains itself is not JSON".into()));
            }
            self.out.push(if object { b'{' } else { b'[' });
            let len = items.len()?;
            return Ok(Some(Frame { items, len, next: 0, object, id }));
        }
        Ok(None)
    }
}

/// A JSON value as Python objects (`dict`, `list`, `str`, `int`, `float`, `bool`, `None`),
/// as `json.loads` of its text gives them.
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    enum Target<'py> {
        List(Bound<'py, PyList>),
        Dict(Bound<'py, PyDict>),
    }
    enum Children<'a> {
        Array(std::slice::Iter<'a, Value>),
        Object(serde_json::map::Iter<'a>),
    }
    /// A value's object, and for a container the children still to convert.
    type Started<'a, 'py> = (Bound<'py, PyAny>, Option<(Target<'py>, Children<'a>)>);
    fn start<'a, 'py>(py: Python<'py>, value: &'a Value) -> PyResult<Started<'a, 'py>> {
        Ok(match value {
            Value::Null => (py.None().into_bound(py), None),
            Value::Bool(b) => (PyBool::new(py, *b).to_owned().into_any(), None),
            Value::Number(n) => {
                let object = if let Some(i) = n.as_i64() {
                    i.into_pyobject(py)?.into_any()
                } else if let Some(u) = n.as_u64() {
                    u.into_pyobject(py)?.into_any()
                } else {
                    PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
                };
                (object, None)
            }
            Value::String(s) => (PyString::new(py, s).into_any(), None),
            Value::Array(items) => {
                let list = PyList::empty(py);
                (list.clone().into_any(), Some((Target::List(list), Children::Array(items.iter()))))
            }
            Value::Object(members) => {
                let dict = PyDict::new(py);
                (dict.clone().into_any(), Some((Target::Dict(dict), Children::Object(members.iter()))))
            }
        })
    }
    let (root, children) = start(py, value)?;
    let mut stack: Vec<(Target<'py>, Children<'_>)> = children.into_iter().collect();
    while let Some((target, children)) = stack.last_mut() {
        let next = match children {
            Children::Array(items) => items.next().map(|v| (None, v)),
            Children::Object(members) => members.next().map(|(k, v)| (Some(k), v)),
        };
        let Some((key, child)) = next else {
            stack.pop();
            continue;
        };
        let (object, grandchildren) = start(py, child)?;
        match (target, key) {
            (Target::List(list), _) => list.append(&object)?,
            (Target::Dict(dict), Some(key)) => dict.set_item(PyString::intern(py, key), &object)?,
            (Target::Dict(_), None) => unreachable!("an object's member has a key"),
        }
        stack.extend(grandchildren);
    }
    Ok(root)
}
