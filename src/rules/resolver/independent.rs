//! The parts of one item whose errors are independent (a rule's `match` patterns, then its
//! `where` clauses and actions, the operands of an expression, the two sides of an equational
//! rule), each checked whatever the others gave, so that one round of loading reports every
//! error of the item and not its first.
//!
//! Why parts, and not every check: an error is reported only where it cannot follow from
//! another. A part that fails binds nothing another part reads wrongly (a pattern that fails
//! still binds its names, an operand or a guard binds nothing, an action that fails binds its
//! names as it would have, or as failed where what it would bind is unknown, and what reads a
//! failed name is a cascade), so its error cannot cause theirs; what reads the parts (the type
//! of `a + b`, the guards and actions after the patterns) is not checked when one of them
//! failed. A part whose error only follows from one reported elsewhere ([`Faults`]) is
//! dropped, and the item is a cascade only when every failed part is.

use super::*;

/// The failed parts so far ([`Resolver::gather`]).
#[derive(Default)]
pub(super) struct Gathered(Option<(Diagnostic, bool)>);

impl Gathered {
    pub(super) fn failed(&self) -> bool {
        self.0.is_some()
    }
}

/// A part's result, and whether its error only follows from an earlier one.
type Part<T> = (Result<T, Diagnostic>, bool);

impl Resolver<'_> {
    /// Checks every one of `items` with `check`: what each resolves to, or the errors of those
    /// that failed, as one.
    pub(super) fn each<I, T>(
        &mut self,
        items: impl IntoIterator<Item = I>,
        mut check: impl FnMut(&mut Self, I) -> Result<T, Diagnostic>,
    ) -> Result<Vec<T>, Diagnostic> {
        let mut out = Vec::new();
        let mut failed: Option<(Diagnostic, bool)> = None;
        for i in items {
            match self.part(|me| check(me, i)) {
                (Ok(x), _) => out.push(x),
                (Err(d), cascade) => {
                    failed = Some(match failed.take() {
                        None => (d, cascade),
                        Some(f) => merge(f, (d, cascade)),
                    })
                }
            }
        }
        match failed {
            None => Ok(out),
            Some(e) => Err(self.raise(e)),
        }
    }

    /// Checks two parts of different kinds, both of them.
    pub(super) fn both<A, B>(
        &mut self,
        a: impl FnOnce(&mut Self) -> Result<A, Diagnostic>,
        b: impl FnOnce(&mut Self) -> Result<B, Diagnostic>,
    ) -> Result<(A, B), Diagnostic> {
        let (ra, rb) = (self.part(a), self.part(b));
        match (ra, rb) {
            ((Ok(a), _), (Ok(b), _)) => Ok((a, b)),
            ((Err(d), c), (Ok(_), _)) | ((Ok(_), _), (Err(d), c)) => Err(self.raise((d, c))),
            ((Err(x), cx), (Err(y), cy)) => Err(self.raise(merge((x, cx), (y, cy)))),
        }
    }

    /// Keeps `r`'s error in `g`, for parts checked one after the other (a walk that carries
    /// state from one to the next); its value, when it has one.
    pub(super) fn gather<T>(&self, g: &mut Gathered, r: Result<T, Diagnostic>) -> Option<T> {
        let cascade = self.cascade.replace(false);
        match r {
            Ok(x) => Some(x),
            Err(d) => {
                g.0 = Some(match g.0.take() {
                    None => (d, cascade),
                    Some(f) => merge(f, (d, cascade)),
                });
                None
            }
        }
    }

    /// The errors `g` gathered, as one.
    pub(super) fn gathered(&self, g: Gathered) -> Result<(), Diagnostic> {
        match g.0 {
            None => Ok(()),
            Some(e) => Err(self.raise(e)),
        }
    }

    fn part<T>(&mut self, check: impl FnOnce(&mut Self) -> Result<T, Diagnostic>) -> Part<T> {
        let r = check(self);
        // A check that failed and recovered may have left the mark: only an error keeps it.
        let cascade = self.cascade.replace(false);
        (r, cascade)
    }

    /// The error of the failed parts, marked as a cascade when every one is.
    fn raise(&self, (d, cascade): (Diagnostic, bool)) -> Diagnostic {
        self.cascade.set(cascade);
        d
    }
}

/// Two failed parts as one: a cascade gives way to an independent error, independent errors
/// are all kept, in order.
fn merge(a: (Diagnostic, bool), b: (Diagnostic, bool)) -> (Diagnostic, bool) {
    match (a, b) {
        ((x, false), (y, false)) => (append(x, y), false),
        ((x, false), (_, true)) | ((_, true), (x, false)) => (x, false),
        ((x, true), (_, true)) => (x, true),
    }
}

/// `a`, followed by `b` (and what each already carries).
fn append(mut a: Diagnostic, mut b: Diagnostic) -> Diagnostic {
    let mut more = std::mem::take(&mut a.more).into_vec();
    let b_more = std::mem::take(&mut b.more);
    more.push(b);
    more.extend(b_more.into_vec());
    a.more = more.into();
    a
}
