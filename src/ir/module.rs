//! A [`Module`] is what one irw invocation works on: the main program, optionally the startup
//! program that initializes its persistables, and the [`Context`] both share.

use super::{Context, Program};

#[derive(Clone, Debug, Default)]
pub struct Module {
    pub ctx: Context,
    pub main: Program,
    /// The startup program: from `startup { ... }` in the same file or from `--startup FILE`.
    pub startup: Option<Program>,
    /// Blank lines after the last program, kept so a dump prints back byte for byte.
    pub trailing: String,
}

/// Which program of a module.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Which {
    Main,
    Startup,
}

impl Which {
    /// How messages name the program: `main`, `startup`.
    pub fn name(self) -> &'static str {
        match self {
            Which::Main => "main",
            Which::Startup => "startup",
        }
    }
}

impl Module {
    pub fn program(&self, which: Which) -> Option<&Program> {
        match which {
            Which::Main => Some(&self.main),
            Which::Startup => self.startup.as_ref(),
        }
    }

    /// The startup program, created empty if absent (a rule that creates persistable state
    /// adds its initializer there).
    pub fn startup_mut(&mut self) -> &mut Program {
        self.startup.get_or_insert_with(Program::new)
    }

    /// Total number of live ops in both programs.
    pub fn num_ops(&self) -> usize {
        self.main.num_ops() + self.startup.as_ref().map_or(0, |p| p.num_ops())
    }
}
