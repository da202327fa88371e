//! How a module's test functions become trials of the one test binary (`tests/all/main.rs`):
//! the binary runs with `harness = false`, because libtest cannot run the file-driven suites
//! (one test per file found at run time), so libtest-mimic runs everything, and what libtest
//! did for a `#[test]` is done here: naming, catching the panic and keeping the output of a
//! passing test quiet.

use libtest_mimic::Trial;

/// Declares the tests of a module: `tests![a, #[cfg(unix)] b, #[ignore = "why"] c];` defines
/// `pub(crate) fn tests() -> Vec<Trial>` with one trial per function, named `MODULE::FUNCTION`.
///
/// The binary runs with `harness = false` (libtest cannot run the file-driven cases as tests of
/// their own), so `#[test]` would silently compile a test out: a test function is a plain `fn`
/// listed here. A function listed nowhere is dead code, which clippy refuses; the `layout` check
/// in `main.rs` refuses a `#[test]`.
macro_rules! tests {
    (@acc $v:ident [$($out:tt)*]) => {
        #[allow(clippy::vec_init_then_push)] // `#[cfg]` applies to statements, not to `vec![]` items
        pub(crate) fn tests() -> Vec<libtest_mimic::Trial> {
            let mut $v = Vec::new();
            $($out)*
            $v
        }
    };
    (@acc $v:ident [$($out:tt)*] #[ignore = $why:literal] $name:ident $(, $($rest:tt)*)?) => {
        tests!(@acc $v [$($out)*
            $v.push($crate::common::trial(module_path!(), stringify!($name), $name)
                .with_ignored_flag(true));
        ] $($($rest)*)?);
    };
    (@acc $v:ident [$($out:tt)*] #[cfg($c:meta)] $name:ident $(, $($rest:tt)*)?) => {
        tests!(@acc $v [$($out)*
            #[cfg($c)]
            $v.push($crate::common::trial(module_path!(), stringify!($name), $name));
        ] $($($rest)*)?);
    };
    (@acc $v:ident [$($out:tt)*] $name:ident $(, $($rest:tt)*)?) => {
        tests!(@acc $v [$($out)*
            $v.push($crate::common::trial(module_path!(), stringify!($name), $name));
        ] $($($rest)*)?);
    };
    ($($t:tt)*) => {
        tests!(@acc v [] $($t)*);
    };
}

/// A test's name: `module_path!()` without the crate (`all::dist` → `dist`), then `name`.
pub fn test_name(module: &str, name: &str) -> String {
    let module = module.split_once("::").map_or("", |(_, m)| m);
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}::{name}")
    }
}

/// A test function as a trial; it fails by panicking, as a `#[test]` does. What it [`note`]d is
/// added to the failure.
pub fn trial(module: &str, name: &str, f: fn()) -> Trial {
    Trial::test(test_name(module, name), move || {
        NOTES.with(|n| n.borrow_mut().clear());
        let result = std::panic::catch_unwind(f);
        let notes = NOTES.with(|n| std::mem::take(&mut *n.borrow_mut()));
        let Err(payload) = result else {
            return Ok(());
        };
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("(no message)");
        let mut text = format!("test panicked: {msg}");
        for n in notes {
            text.push_str("\n--- noted by the test ---\n");
            text.push_str(&n);
        }
        Err(text.into())
    })
}

thread_local! {
    static NOTES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Shows `text` with the test's failure, and only then: libtest captured a test's output and
/// showed it when the test failed, libtest-mimic lets output through, so a passing test would
/// print its reports into every `cargo test`.
pub fn note(text: impl std::fmt::Display) {
    let text = text.to_string();
    NOTES.with(|n| n.borrow_mut().push(text));
}
