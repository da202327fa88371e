//! The library's entry points for embedding irw in another program (the Python package in
//! `python/` is one): rewrite or check a program held in memory, without a command line or files
//! for the program. Rule files are still read from disk, since they import each other by path.
//!
//! These functions do what the `irw` command does for the same options, through the same steps
//! (`cli::load_rules`, `cli::apply_rules_knowing_misfits`, `exec::check`), so a program embedded this way is
//! rewritten byte for byte as the command rewrites it. Errors are the command's diagnostics:
//! `file:line:col` with the source line and a caret when the place is known.

use crate::cli::{self, Limits, RuleArgs};
use crate::diag::{Diagnostic, SourceFile};
use crate::exec::check::{check_with_sources, CheckOptions, CheckReport};
use crate::exec::interp::Sources;
use crate::ir::{self, Module};
use crate::json;

/// One program file held in memory: Paddle's program text or its PIR JSON (told apart by
/// content, as the command does). `name` is what diagnostics call the file.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// The format [`rewrite`] writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// The text Paddle prints (`print(program)`).
    #[default]
    Text,
    /// Paddle's PIR JSON (what `paddle.base.core.deserialize_pir_program` loads).
    PaddleJson,
}

/// Which rules run, with which parameter values.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// Rule files, applied in order (`--rules`).
    pub files: Vec<String>,
    /// Parameter values as `(name, value)` (`--set name=value`).
    pub params: Vec<(String, String)>,
}

impl Rules {
    fn args(&self) -> RuleArgs {
        RuleArgs {
            rules: self.files.clone(),
            set: self
                .params
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect(),
            ..Default::default()
        }
    }
}

/// A rewritten program: the main program and, when the input had one, the startup program.
#[derive(Clone, Debug)]
pub struct Output {
    pub main: String,
    pub startup: Option<String>,
}

/// A module read from memory, with its texts for diagnostics and its JSON attribute tags.
struct Loaded {
    module: Module,
    hints: json::TagHints,
    main: SourceFile,
    startup: Option<SourceFile>,
}

impl Loaded {
    fn sources(&self) -> Sources<'_> {
        Sources {
            main: Some(&self.main),
            startup: Some(self.startup.as_ref().unwrap_or(&self.main)),
        }
    }
}

fn load(main: Input<'_>, startup: Option<Input<'_>>) -> Result<Loaded, Diagnostic> {
    let src = SourceFile::new(main.name, main.text);
    let mut hints = json::TagHints::default();
    let mut module = cli::read_main(&src, &mut hints)?;
    let mut startup_src = None;
    if let Some(s) = startup {
        if module.startup.is_some() {
            return Err(Diagnostic::error(format!(
                "{} already holds a startup program; the startup program {} would replace it",
                main.name, s.name
            )));
        }
        let ssrc = SourceFile::new(s.name, s.text);
        cli::read_startup(&mut module, &ssrc, &mut hints)?;
        startup_src = Some(ssrc);
    }
    cli::verify_read(&module, &src, startup_src.as_ref())?;
    Ok(Loaded {
        module,
        hints,
        main: src,
        startup: startup_src,
    })
}

/// Applies `rules` to the program and writes it in `format`: what
/// `irw --rules F... --set N=V... [--startup S] --emit FORMAT` prints.
pub fn rewrite(
    main: Input<'_>,
    startup: Option<Input<'_>>,
    rules: &Rules,
    format: Format,
) -> Result<Output, Diagnostic> {
    let args = rules.args();
    let ruleset = if args.rules.is_empty() {
        None
    } else {
        Some(cli::load_rules(&args, &cli::Limits::default())?)
    };
    let mut l = load(main, startup)?;
    let mut stats = None;
    if let Some(r) = &ruleset {
        cli::declare_json_types(r, &mut l.hints);
        stats = Some(cli::apply_rules_knowing_misfits(
            &mut l.module,
            Some(&l.main),
            None,
            r,
            &args,
            &Limits::default(),
        )?);
    }
    let m = &l.module;
    Ok(match format {
        Format::Text => Output {
            main: ir::print_program(&m.ctx, &m.main),
            startup: m.startup.as_ref().map(|s| ir::print_program(&m.ctx, s)),
        },
        Format::PaddleJson => {
            let editor = |op| stats.as_ref().and_then(|s| s.editor_of(op));
            let origins = json::Origins {
                main: Some(&l.main),
                startup: l.startup.as_ref(),
                editor: Some(&editor),
            };
            let j = json::write_module_from(m, &l.hints, origins)?;
            Output {
                main: j.main,
                startup: j.startup,
            }
        }
    })
}

/// Rewrites the program with `rules` and proves numerically that the rewritten program's k
/// micro-steps compute the original's full-batch step: what `irw check` prints. `opts.k_steps`
/// of 0 takes the rules' `k_steps` parameter (1 when they declare none).
pub fn check(
    main: Input<'_>,
    startup: Option<Input<'_>>,
    rules: &Rules,
    opts: &CheckOptions,
) -> Result<CheckReport, Diagnostic> {
    let args = rules.args();
    if args.rules.is_empty() {
        return Err(Diagnostic::error("check needs at least one rule file").as_usage());
    }
    let ruleset = cli::load_rules(&args, &cli::Limits::default())?;
    let original = load(main, startup)?;
    let mut rewritten = original.module.clone();
    cli::apply_rules_to(
        &mut rewritten,
        Some(&original.main),
        &ruleset,
        &args,
        &Limits::default(),
    )?;
    let mut opts = opts.clone();
    if opts.k_steps == 0 {
        opts.k_steps = match ruleset.params.get("k_steps").map(|p| &p.value) {
            Some(crate::value::Val::Int(k)) => usize::try_from(*k).unwrap_or(1).max(1),
            _ => 1,
        };
    }
    check_with_sources(
        &original.module,
        original.sources(),
        &rewritten,
        original.sources(),
        &opts,
    )
}
