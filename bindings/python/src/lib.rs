//! `little_compiler._native`: `little` in process for Python, over `little_embed`.
//!
//! Documents come in as `str`, `bytes` or already-parsed JSON (`dict`/`list`), results go
//! out as plain `dict`s and `list`s. Every failure is a `little_compiler.LittleError`
//! (defined in Python, `little_compiler/_error.py`), a panic included: none reaches the
//! interpreter as a `PanicException`. The checks run with the GIL released.

mod convert;

use std::panic::AssertUnwindSafe;
use std::sync::{Mutex, MutexGuard, PoisonError};

use little_embed::{Change, Documents, Edit, Encoding, Error, Position};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};

use convert::{document, text_bytes, text_str, to_python};

/// Why a call failed: little's own error, or a Python exception (an allocation failure, a
/// `KeyboardInterrupt` while converting) that is passed on as it is.
enum Fail {
    Little(Error),
    Python(PyErr),
}

impl From<Error> for Fail {
    fn from(error: Error) -> Fail {
        Fail::Little(error)
    }
}

impl From<PyErr> for Fail {
    fn from(error: PyErr) -> Fail {
        Fail::Python(error)
    }
}

type Outcome<T> = Result<T, Fail>;

/// Runs one entry point: a `Fail` becomes the exception to raise, and a panic (a bug in
/// this crate: `little_embed` catches its own) an `internal` LittleError.
fn entry<T>(py: Python<'_>, call: impl FnOnce() -> Outcome<T>) -> PyResult<T> {
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Fail::Little(Error::new(
            "internal",
            format!("little's Python binding failed: {what}; this is a bug in little"),
            None,
        )))
    });
    outcome.map_err(|fail| match fail {
        Fail::Little(error) => little_error(py, error),
        Fail::Python(error) => error,
    })
}

/// `little_compiler.LittleError(code, message, path, report)`.
fn little_error(py: Python<'_>, error: Error) -> PyErr {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let raised = || -> PyResult<PyErr> {
        let class = CLASS.import(py, "little_compiler._error", "LittleError")?;
        let report = match &error.report {
            Some(report) => to_python(py, report)?,
            None => py.None().into_bound(py),
        };
        let instance =
            class.call1((error.code, &error.message, error.path.as_deref(), report, error.cause.as_deref()))?;
        Ok(PyErr::from_value(instance))
    };
    raised().unwrap_or_else(|import| {
        let message =
            format!("{} ({}; little_compiler.LittleError could not be raised: {import})", error.message, error.code);
        PyRuntimeError::new_err(message)
    })
}

/// The workspace documents, read from the keyword arguments before the GIL is released.
fn documents(
    catalog: Option<&Bound<'_, PyAny>>,
    context: Option<&Bound<'_, PyAny>>,
    bindings: Option<&Bound<'_, PyAny>>,
    snapshot: Option<&Bound<'_, PyAny>>,
) -> Outcome<Documents> {
    let read = |value: Option<&Bound<'_, PyAny>>, name: &str| -> Outcome<Option<Vec<u8>>> {
        match value {
            Some(value) if !value.is_none() => Ok(Some(document(value, name)?)),
            _ => Ok(None),
        }
    };
    Ok(Documents {
        catalog: read(catalog, "catalog")?,
        context: read(context, "context")?,
        bindings: read(bindings, "bindings")?,
        snapshot: read(snapshot, "snapshot")?,
    })
}

/// `check(text, *, path="<input>", catalog=None, context=None, bindings=None, snapshot=None)`:
/// the `little-report/v1` report of one draft or LWIR, as `little check --format json`.
#[pyfunction]
#[pyo3(signature = (text, *, path = "<input>", catalog = None, context = None, bindings = None, snapshot = None))]
fn check<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    path: &str,
    catalog: Option<&Bound<'py, PyAny>>,
    context: Option<&Bound<'py, PyAny>>,
    bindings: Option<&Bound<'py, PyAny>>,
    snapshot: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let bytes = text_bytes(text, "text")?;
        let documents = documents(catalog, context, bindings, snapshot)?;
        let report = py.detach(|| little_embed::check(&bytes, path, &documents))?;
        Ok(to_python(py, &report)?)
    })
}

/// `compile(text, *, path="<input>", ...)`: the `little-compiled/v1` document of a draft;
/// `LittleError("blocked")` with the report when a diagnostic blocks.
#[pyfunction]
#[pyo3(signature = (text, *, path = "<input>", catalog = None, context = None, bindings = None, snapshot = None))]
fn compile<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    path: &str,
    catalog: Option<&Bound<'py, PyAny>>,
    context: Option<&Bound<'py, PyAny>>,
    bindings: Option<&Bound<'py, PyAny>>,
    snapshot: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let bytes = text_bytes(text, "text")?;
        let documents = documents(catalog, context, bindings, snapshot)?;
        let compiled = py.detach(|| little_embed::compile(&bytes, path, &documents))?;
        Ok(to_python(py, &compiled)?)
    })
}

/// `explain(code)`: the page `little explain CODE` prints.
#[pyfunction]
fn explain(py: Python<'_>, code: &str) -> PyResult<String> {
    entry(py, || Ok(little_embed::explain(code)?))
}

/// `codes()`: every code, `[{code, severity, blocking, summary}]`.
#[pyfunction]
fn codes(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    entry(py, || Ok(to_python(py, &little_embed::codes())?))
}

/// `hash(text)`: `sha256:` of the canonical form of a JSON document, as `little hash`.
#[pyfunction]
fn hash(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
    entry(py, || {
        let bytes = document(text, "text")?;
        Ok(py.detach(|| little_embed::hash(&bytes))?)
    })
}

/// `schema(name)`: the JSON Schema of a document format, as `little schema NAME`.
#[pyfunction]
fn schema<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || Ok(to_python(py, &little_embed::schema(name)?)?))
}

/// `schema_names()`: the formats `schema` knows.
#[pyfunction]
fn schema_names(py: Python<'_>) -> PyResult<Vec<&'static str>> {
    entry(py, || Ok(little_embed::schema_names()))
}

/// `snapshot(definition)`: the WorkflowDefinitionSnapshot, as `little snapshot`.
#[pyfunction]
fn snapshot<'py>(py: Python<'py>, definition: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let definition = document(definition, "definition")?;
        let snapshot = py.detach(|| little_embed::snapshot(&definition))?;
        Ok(to_python(py, &snapshot)?)
    })
}

/// `lock(lwir, definition)`: the registration document, as `little lock`.
#[pyfunction]
fn lock<'py>(py: Python<'py>, lwir: &Bound<'py, PyAny>, definition: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let lwir = document(lwir, "lwir")?;
        let definition = document(definition, "definition")?;
        let registration = py.detach(|| little_embed::lock(&lwir, &definition))?;
        Ok(to_python(py, &registration)?)
    })
}

/// Documents held open and edited, as an editor backend does: each edit re-runs only what
/// it touches.
///
/// Thread safety: a frozen pyclass around a `Mutex`. Every call releases the GIL and then
/// takes the mutex, so calls from several threads run one at a time on the workspace
/// while the other Python threads go on. (A mutable pyclass would keep its borrow flag
/// set while the GIL is released, and a second thread would get "already borrowed"
/// instead of waiting; taking the mutex before releasing the GIL could deadlock.)
#[pyclass(frozen, module = "little_compiler")]
struct Workspace {
    inner: Mutex<little_embed::Workspace>,
}

impl Workspace {
    /// The workspace, whether or not a panic elsewhere poisoned the mutex (`little_embed`
    /// catches its panics inside each call, so its state is whole either way).
    fn lock(&self) -> MutexGuard<'_, little_embed::Workspace> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl Workspace {
    /// `Workspace(*, catalog=None, context=None, bindings=None, snapshot=None,
    /// columns="characters")`: what the columns of edits count: `characters`, as Python's
    /// strings do; `utf-16` code units, as web editors (and the npm package's Workspace)
    /// send them; or `utf-8` bytes.
    #[new]
    #[pyo3(signature = (*, catalog = None, context = None, bindings = None, snapshot = None, columns = "characters"))]
    fn new(
        py: Python<'_>,
        catalog: Option<&Bound<'_, PyAny>>,
        context: Option<&Bound<'_, PyAny>>,
        bindings: Option<&Bound<'_, PyAny>>,
        snapshot: Option<&Bound<'_, PyAny>>,
        columns: &str,
    ) -> PyResult<Workspace> {
        entry(py, || {
            let encoding = match columns {
                "characters" => Encoding::Utf32,
                "utf-16" => Encoding::Utf16,
                "utf-8" => Encoding::Utf8,
                other => {
                    return Err(Fail::Little(Error::new(
                        "input.invalid",
                        format!("`columns` is \"characters\", \"utf-16\" or \"utf-8\", not {other:?}"),
                        Some("columns"),
                    )));
                }
            };
            let documents = documents(catalog, context, bindings, snapshot)?;
            let workspace = py.detach(|| little_embed::Workspace::new(&documents, encoding))?;
            Ok(Workspace { inner: Mutex::new(workspace) })
        })
    }

    /// Opens (or replaces) a document: its report, diagnostics only (`candidate` is None).
    fn open<'py>(&self, py: Python<'py>, path: &str, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        entry(py, || {
            let text = text_str(text, "text", "input.invalid")?;
            let report = py.detach(|| self.lock().open(path, &text))?;
            Ok(to_python(py, &report)?)
        })
    }

    /// Changes an open document (`change`: its whole new text, or a list of edits applied
    /// in order); its report, as `open` gives it.
    fn update<'py>(&self, py: Python<'py>, path: &str, change: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        entry(py, || {
            let change = change_of(change)?;
            let report = py.detach(|| self.lock().update(path, change))?;
            Ok(to_python(py, &report)?)
        })
    }

    /// Closes a document and lets go of what the workspace holds for it.
    fn close(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        entry(py, || Ok(py.detach(|| self.lock().close(path))?))
    }

    /// The full report of an open document, its candidate included.
    fn report<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyAny>> {
        entry(py, || {
            let report = py.detach(|| self.lock().report(path))?;
            Ok(to_python(py, &report)?)
        })
    }

    /// The text an open document has now, or None.
    fn text(&self, py: Python<'_>, path: &str) -> PyResult<Option<String>> {
        entry(py, || Ok(py.detach(|| self.lock().text(path).map(str::to_string))))
    }

    /// The open documents' paths, sorted.
    fn paths(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        entry(py, || Ok(py.detach(|| self.lock().paths().into_iter().map(str::to_string).collect())))
    }

    fn __contains__(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        entry(py, || Ok(py.detach(|| self.lock().text(path).is_some())))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let paths = self.paths(py)?;
        Ok(format!("<little_compiler.Workspace: {} open>", paths.len()))
    }
}

/// A `change` for `Workspace.update`: a `str` (or UTF-8 `bytes`), or a list of edits
/// `{"range": {"start": {"line", "character"}, "end": {...}}, "text": str}`.
fn change_of(change: &Bound<'_, PyAny>) -> Outcome<Change> {
    if change.is_instance_of::<PyString>() || change.is_instance_of::<pyo3::types::PyBytes>() {
        return Ok(Change::Text(text_str(change, "change", "edit.invalid")?.into_owned()));
    }
    let items: Vec<Bound<'_, PyAny>> = if let Ok(list) = change.cast::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = change.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return Err(edit_invalid(
            "change",
            format!(
                "a change is the document's whole text (a str) or a list of edits, not {}",
                convert::type_name(change)
            ),
        ));
    };
    let mut edits = Vec::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        let at = format!("change[{n}]");
        let edit = item
            .cast::<PyDict>()
            .map_err(|_| edit_invalid(&at, format!("an edit is a dict, not {}", convert::type_name(item))))?;
        let range = field(edit, "range", &at)?;
        let range = range
            .cast::<PyDict>()
            .map_err(|_| edit_invalid(&format!("{at}.range"), "a range is a dict with `start` and `end`".into()))?;
        let start = position(range, "start", &format!("{at}.range"))?;
        let end = position(range, "end", &format!("{at}.range"))?;
        let text = field(edit, "text", &at)?;
        let text = text_str(&text, &format!("{at}.text"), "edit.invalid")?.into_owned();
        edits.push(Edit { start, end, text });
    }
    Ok(Change::Edits(edits))
}

fn field<'py>(dict: &Bound<'py, PyDict>, key: &str, at: &str) -> Outcome<Bound<'py, PyAny>> {
    dict.get_item(key)?.ok_or_else(|| edit_invalid(at, format!("an edit has no `{key}`")))
}

fn position(range: &Bound<'_, PyDict>, key: &str, at: &str) -> Outcome<Position> {
    let at = format!("{at}.{key}");
    let position = field(range, key, &at)?;
    let position = position
        .cast::<PyDict>()
        .map_err(|_| edit_invalid(&at, "a position is a dict {\"line\": int, \"character\": int} (0-based)".into()))?;
    let number = |name: &str| -> Outcome<u32> {
        let value = field(position, name, &at)?;
        let bad = || {
            edit_invalid(&format!("{at}.{name}"), format!("`{name}` is a 0-based count, an int from 0 to {}", u32::MAX))
        };
        if value.is_instance_of::<pyo3::types::PyBool>() || !value.is_instance_of::<pyo3::types::PyInt>() {
            return Err(bad());
        }
        value.extract::<u32>().map_err(|_| bad())
    };
    Ok(Position { line: number("line")?, character: number("character")? })
}

fn edit_invalid(at: &str, message: String) -> Fail {
    Fail::Little(Error::new("edit.invalid", format!("{at}: {message}"), Some(at)))
}

/// Cancels a planner call from another thread or task: the model call in flight is cut,
/// nothing more is written, and the run resumes from its log.
#[pyclass(frozen, module = "little_compiler")]
struct Cancel {
    inner: little_embed::planner::Cancel,
}

#[pymethods]
impl Cancel {
    #[new]
    fn new() -> Cancel {
        Cancel { inner: little_embed::planner::Cancel::default() }
    }

    fn cancel(&self) {
        self.inner.cancel();
    }

    #[getter]
    fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }
}

/// The callback of a planner call: each event as a dict, called with the GIL taken back;
/// an exception it raises is reported as unraisable and the session goes on.
fn event_hook(on_event: Option<Py<PyAny>>) -> Option<little_embed::planner::OnEvent> {
    let on_event = on_event?;
    let hook: little_embed::planner::OnEvent = std::sync::Arc::new(move |event: &serde_json::Value| {
        Python::attach(|py| {
            let called = to_python(py, event).and_then(|event| on_event.call1(py, (event,)));
            if let Err(error) = called {
                error.write_unraisable(py, None);
            }
        })
    });
    Some(hook)
}

fn options_of(options: &str) -> Outcome<serde_json::Value> {
    serde_json::from_str(options)
        .map_err(|e| Fail::Little(Error::new("input.invalid", format!("the options are not JSON: {e}"), None)))
}

/// What a session from Python hears and obeys: its callback and its `Cancel`; no host model.
fn session_hooks(on_event: Option<Py<PyAny>>, cancel: Option<&Cancel>) -> little_embed::planner::Hooks<'_> {
    little_embed::planner::Hooks { on_event: event_hook(on_event), cancel: cancel.map(|c| &c.inner), model: None }
}

/// `plan(options_json, on_event=None, cancel=None)`: `little plan` in process with the GIL
/// released (the Python half, `_planner.py`, builds the options).
#[pyfunction]
#[pyo3(signature = (options, on_event = None, cancel = None))]
fn plan<'py>(
    py: Python<'py>,
    options: &str,
    on_event: Option<Py<PyAny>>,
    cancel: Option<PyRef<'py, Cancel>>,
) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let call = little_embed::planner::PlanCall::from_json(&options_of(options)?)?;
        let hooks = session_hooks(on_event, cancel.as_deref());
        let result = py.detach(|| little_embed::planner::plan(&call, &hooks))?;
        Ok(to_python(py, &result)?)
    })
}

/// `fix(options_json, on_event=None, cancel=None)`: `little fix` in process.
#[pyfunction]
#[pyo3(signature = (options, on_event = None, cancel = None))]
fn fix<'py>(
    py: Python<'py>,
    options: &str,
    on_event: Option<Py<PyAny>>,
    cancel: Option<PyRef<'py, Cancel>>,
) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let call = little_embed::planner::FixCall::from_json(&options_of(options)?)?;
        let hooks = session_hooks(on_event, cancel.as_deref());
        let result = py.detach(|| little_embed::planner::fix(&call, &hooks))?;
        Ok(to_python(py, &result)?)
    })
}

/// `verify(lwir, lock, definition=None)`: `little verify` of files.
#[pyfunction]
#[pyo3(signature = (lwir, lock, definition = None))]
fn verify<'py>(py: Python<'py>, lwir: &str, lock: &str, definition: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let verified = py.detach(|| {
            little_embed::planner::verify(
                std::path::Path::new(lwir),
                std::path::Path::new(lock),
                definition.map(std::path::Path::new),
            )
        })?;
        Ok(to_python(py, &verified)?)
    })
}

/// `events(store, run_id=None)`: the events of a log or a database.
#[pyfunction]
#[pyo3(signature = (store, run_id = None))]
fn events<'py>(py: Python<'py>, store: &str, run_id: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    entry(py, || {
        let events = py.detach(|| little_embed::planner::events(store, run_id))?;
        Ok(to_python(py, &serde_json::Value::Array(events))?)
    })
}

#[pymodule(name = "_native")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Cancel>()?;
    module.add_function(wrap_pyfunction!(plan, module)?)?;
    module.add_function(wrap_pyfunction!(fix, module)?)?;
    module.add_function(wrap_pyfunction!(verify, module)?)?;
    module.add_function(wrap_pyfunction!(events, module)?)?;
    module.add_function(wrap_pyfunction!(check, module)?)?;
    module.add_function(wrap_pyfunction!(compile, module)?)?;
    module.add_function(wrap_pyfunction!(explain, module)?)?;
    module.add_function(wrap_pyfunction!(codes, module)?)?;
    module.add_function(wrap_pyfunction!(hash, module)?)?;
    module.add_function(wrap_pyfunction!(schema, module)?)?;
    module.add_function(wrap_pyfunction!(schema_names, module)?)?;
    module.add_function(wrap_pyfunction!(snapshot, module)?)?;
    module.add_function(wrap_pyfunction!(lock, module)?)?;
    module.add_class::<Workspace>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
