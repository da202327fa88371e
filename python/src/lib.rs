//! The native module of the `irw` Python package (`irw._irw`): thin PyO3 bindings over the
//! library's embedding API (`irw::api`). The Python modules in `irw/` add the friendly layer
//! (rule names, Paddle `Program` objects); everything that rewrites or checks is irw's Rust,
//! called in process. An irw diagnostic becomes `irw.IrwError` carrying the same text the
//! command prints (`file:line:col: error: ...`, the source line and a caret).

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(
    _irw,
    IrwError,
    PyException,
    "An irw diagnostic: bad program or rule text, a rule's error, or a failed rewrite. The \
     message is what the irw command prints (file:line:col, source line, caret)."
);

fn err(d: irw::Diagnostic) -> PyErr {
    IrwError::new_err(d.to_string().trim_end().to_string())
}

fn rules(files: Vec<String>, params: Vec<(String, String)>) -> irw::api::Rules {
    irw::api::Rules { files, params }
}

/// rewrite(main, startup, rules, params, format, main_name, startup_name) -> (main, startup)
///
/// Applies rule files (paths) with parameter values to a program (Paddle's text or PIR JSON)
/// and returns the rewritten main and startup program ("text" or "paddle-json"); startup is
/// None when there is none.
#[pyfunction]
#[pyo3(signature = (main, startup, rules_files, params, format, main_name, startup_name))]
#[allow(clippy::too_many_arguments)]
fn rewrite(
    py: Python<'_>,
    main: String,
    startup: Option<String>,
    rules_files: Vec<String>,
    params: Vec<(String, String)>,
    format: &str,
    main_name: String,
    startup_name: String,
) -> PyResult<(String, Option<String>)> {
    let format = match format {
        "text" => irw::api::Format::Text,
        "paddle-json" => irw::api::Format::PaddleJson,
        f => {
            return Err(PyValueError::new_err(format!(
                "format {f:?}: expected \"text\" or \"paddle-json\""
            )))
        }
    };
    let r = rules(rules_files, params);
    let out = py
        .allow_threads(|| {
            let m = irw::api::Input {
                name: &main_name,
                text: &main,
            };
            let s = startup.as_deref().map(|t| irw::api::Input {
                name: &startup_name,
                text: t,
            });
            irw::api::rewrite(m, s, &r, format)
        })
        .map_err(err)?;
    Ok((out.main, out.startup))
}

/// check(main, startup, rules, params, k_steps, seed, rtol, atol, main_name, startup_name)
/// -> dict
///
/// Rewrites the program and proves numerically that the rewrite's k micro-steps compute the
/// original's full-batch step (`irw check`). Returns {"passed", "k_steps", "ranks",
/// "micro_batch", "rows": [{"tensor", "kind", "max_abs", "max_rel", "ok", "note"}], "text"}.
#[pyfunction]
#[pyo3(signature = (main, startup, rules_files, params, k_steps, seed, rtol, atol, main_name, startup_name))]
#[allow(clippy::too_many_arguments)]
fn check<'py>(
    py: Python<'py>,
    main: String,
    startup: Option<String>,
    rules_files: Vec<String>,
    params: Vec<(String, String)>,
    k_steps: usize,
    seed: u64,
    rtol: Option<f64>,
    atol: Option<f64>,
    main_name: String,
    startup_name: String,
) -> PyResult<Bound<'py, PyDict>> {
    let r = rules(rules_files, params);
    let opts = irw::executor::CheckOptions {
        k_steps,
        seed,
        rtol,
        atol,
        ..Default::default()
    };
    let report = py
        .allow_threads(|| {
            let m = irw::api::Input {
                name: &main_name,
                text: &main,
            };
            let s = startup.as_deref().map(|t| irw::api::Input {
                name: &startup_name,
                text: t,
            });
            irw::api::check(m, s, &r, &opts)
        })
        .map_err(err)?;
    let d = PyDict::new(py);
    d.set_item("passed", report.passed())?;
    d.set_item("k_steps", report.k_steps)?;
    d.set_item("ranks", report.ranks)?;
    d.set_item("micro_batch", report.micro_batch)?;
    let rows = report
        .rows
        .iter()
        .map(|row| {
            let r = PyDict::new(py);
            r.set_item("tensor", &row.tensor)?;
            r.set_item("kind", row.kind)?;
            r.set_item("max_abs", row.max_abs)?;
            r.set_item("max_rel", row.max_rel)?;
            r.set_item("ok", row.ok())?;
            r.set_item("verdict", row.verdict.name())?;
            r.set_item("note", &row.note)?;
            Ok(r)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("rows", rows)?;
    d.set_item("text", report.to_string())?;
    Ok(d)
}

#[pymodule]
fn _irw(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("IrwError", m.py().get_type::<IrwError>())?;
    m.add_function(wrap_pyfunction!(rewrite, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    Ok(())
}
