//! The syntax tree of a pattern, before anything costly: parsed, rewritten to RE2's meaning, and
//! measured against the limits.
//!
//! **RE2's classes.** CEL specifies RE2 syntax, where `\d`, `\w`, `\s` and `\b` are ASCII
//! (`[0-9]`, `[0-9A-Za-z_]`, `[\t\n\f\r ]`); regex-syntax reads them as Unicode classes, which
//! makes `\w{30}` compile to nearly 50,000 states. They are rewritten to the ASCII classes here
//! (negated ones stay negations over all of Unicode, as in RE2), and word boundaries to ASCII
//! word boundaries, which the lazy DFA also supports on non-ASCII input.
//!
//! **Limits, before translation.** Counted repetitions are at most [`REGEX_MAX_REPEAT`] (RE2's
//! own limit), Unicode property classes at most [`REGEX_MAX_UNICODE_CLASSES`], and when the
//! pattern is case-insensitive anywhere, the case folding the translation will do is measured
//! ([`super::fold`]) and held to [`REGEX_MAX_FOLDED`] units of work: folding `(?i)\p{Any}` alone
//! visits every code point and takes 10 ms.

use regex_syntax::ast::{
    self, Ast, ClassAscii, ClassAsciiKind, ClassBracketed, ClassPerl, ClassPerlKind, ClassSet,
    ClassSetItem, ClassSetUnion, ClassUnicode, ClassUnicodeKind, ClassUnicodeOpKind, Flag, Flags,
    FlagsItem, FlagsItemKind, GroupKind, LiteralKind, RepetitionKind, RepetitionRange,
};
use regex_syntax::hir::{self, translate::Translator};

use super::fold;
use super::{NEST_LIMIT, RegexError};
use crate::cost::table::{REGEX_MAX_FOLDED, REGEX_MAX_REPEAT, REGEX_MAX_UNICODE_CLASSES};

/// Case folding of one literal character outside a class, in the work units of
/// [`fold::work`] (it builds and folds a one-character class: about half a microsecond).
const FOLD_PER_LITERAL: u64 = 32;

/// Parses `pattern`, rewrites it to RE2's meaning and checks the limits; the tree is then safe
/// to translate.
pub(crate) fn prepare(pattern: &str) -> Result<Ast, RegexError> {
    let mut ast = ast::parse::ParserBuilder::new()
        .nest_limit(NEST_LIMIT)
        .build()
        .parse(pattern)
        .map_err(|e| RegexError::new(e.kind().to_string()))?;
    rewrite(&mut ast);
    let mut census = Census::default();
    census.visit(&ast)?;
    if census.unicode_classes > REGEX_MAX_UNICODE_CLASSES {
        return Err(RegexError::new(format!(
            "the pattern names {} Unicode classes, more than {REGEX_MAX_UNICODE_CLASSES}",
            census.unicode_classes
        )));
    }
    if census.case_insensitive {
        let mut folding = Folding {
            pattern,
            translator: Translator::new(),
            folded: census.literals.saturating_mul(FOLD_PER_LITERAL),
        };
        folding.visit(&ast)?;
        if folding.folded > REGEX_MAX_FOLDED {
            return Err(RegexError::new(format!(
                "case-insensitive matching of this pattern needs {} units of case folding, more \
                 than {REGEX_MAX_FOLDED}; narrow its classes or drop (?i)",
                folding.folded
            )));
        }
    }
    Ok(ast)
}

/// Rewrites Perl classes and word boundaries to their ASCII (RE2) meaning, in place.
fn rewrite(ast: &mut Ast) {
    match ast {
        Ast::ClassPerl(perl) => *ast = Ast::ClassBracketed(Box::new(perl_class(perl))),
        Ast::Assertion(assertion) => {
            use ast::AssertionKind as K;
            if !matches!(
                assertion.kind,
                K::StartLine | K::EndLine | K::StartText | K::EndText
            ) {
                *ast = ascii_group(ast.clone());
            }
        }
        Ast::ClassBracketed(class) => rewrite_set(&mut class.kind),
        Ast::Repetition(rep) => rewrite(&mut rep.ast),
        Ast::Group(group) => rewrite(&mut group.ast),
        Ast::Alternation(alt) => alt.asts.iter_mut().for_each(rewrite),
        Ast::Concat(concat) => concat.asts.iter_mut().for_each(rewrite),
        Ast::Empty(_) | Ast::Flags(_) | Ast::Literal(_) | Ast::Dot(_) | Ast::ClassUnicode(_) => {}
    }
}

fn rewrite_set(set: &mut ClassSet) {
    match set {
        ClassSet::Item(item) => rewrite_item(item),
        ClassSet::BinaryOp(op) => {
            rewrite_set(&mut op.lhs);
            rewrite_set(&mut op.rhs);
        }
    }
}

fn rewrite_item(item: &mut ClassSetItem) {
    match item {
        ClassSetItem::Perl(perl) => {
            *item = ClassSetItem::Bracketed(Box::new(perl_class(perl)));
        }
        ClassSetItem::Bracketed(class) => rewrite_set(&mut class.kind),
        ClassSetItem::Union(union) => union.items.iter_mut().for_each(rewrite_item),
        ClassSetItem::Empty(_)
        | ClassSetItem::Literal(_)
        | ClassSetItem::Range(_)
        | ClassSetItem::Ascii(_)
        | ClassSetItem::Unicode(_) => {}
    }
}

/// `\d`, `\w`, `\s` (and their negations) as RE2 defines them.
fn perl_class(perl: &ClassPerl) -> ClassBracketed {
    let span = perl.span;
    let ascii = |kind| {
        ClassSetItem::Ascii(ClassAscii {
            span,
            kind,
            negated: false,
        })
    };
    let item = match perl.kind {
        ClassPerlKind::Digit => ascii(ClassAsciiKind::Digit),
        ClassPerlKind::Word => ascii(ClassAsciiKind::Word),
        // `[[:space:]]` also holds \v, which RE2's \s does not.
        ClassPerlKind::Space => ClassSetItem::Union(ClassSetUnion {
            span,
            items: ['\t', '\n', '\x0C', '\r', ' ']
                .into_iter()
                .map(|c| {
                    ClassSetItem::Literal(ast::Literal {
                        span,
                        kind: LiteralKind::Verbatim,
                        c,
                    })
                })
                .collect(),
        }),
    };
    ClassBracketed {
        span,
        negated: perl.negated,
        kind: ClassSet::Item(item),
    }
}

/// `(?-u:…)` around an assertion: an ASCII word boundary.
fn ascii_group(inner: Ast) -> Ast {
    let span = *inner.span();
    let item = |kind| FlagsItem { span, kind };
    Ast::Group(Box::new(ast::Group {
        span,
        kind: GroupKind::NonCapturing(Flags {
            span,
            items: vec![
                item(FlagsItemKind::Negation),
                item(FlagsItemKind::Flag(Flag::Unicode)),
            ],
        }),
        ast: Box::new(inner),
    }))
}

/// What the first walk counts: repetition counts are checked as it goes.
#[derive(Default)]
struct Census {
    unicode_classes: u64,
    literals: u64,
    case_insensitive: bool,
}

impl Census {
    fn visit(&mut self, ast: &Ast) -> Result<(), RegexError> {
        match ast {
            Ast::Flags(set) => self.flags(&set.flags),
            Ast::Literal(_) => self.literals += 1,
            Ast::ClassUnicode(_) => self.unicode_classes += 1,
            Ast::ClassBracketed(class) => self.set(&class.kind),
            Ast::Repetition(rep) => {
                let (low, high) = match rep.op.kind {
                    RepetitionKind::Range(
                        RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n),
                    ) => (n, n),
                    RepetitionKind::Range(RepetitionRange::Bounded(m, n)) => (m, n),
                    _ => (0, 0),
                };
                if low.max(high) > REGEX_MAX_REPEAT {
                    return Err(RegexError::new(format!(
                        "a counted repetition may repeat at most {REGEX_MAX_REPEAT} times, as in RE2"
                    )));
                }
                self.visit(&rep.ast)?;
            }
            Ast::Group(group) => {
                if let GroupKind::NonCapturing(flags) = &group.kind {
                    self.flags(flags);
                }
                self.visit(&group.ast)?;
            }
            Ast::Alternation(alt) => {
                for ast in &alt.asts {
                    self.visit(ast)?;
                }
            }
            Ast::Concat(concat) => {
                for ast in &concat.asts {
                    self.visit(ast)?;
                }
            }
            Ast::Empty(_) | Ast::Dot(_) | Ast::Assertion(_) | Ast::ClassPerl(_) => {}
        }
        Ok(())
    }

    /// Any `i` that is not negated makes the pattern case-insensitive somewhere: the measure of
    /// folding then covers the whole pattern, which can only overestimate it.
    fn flags(&mut self, flags: &Flags) {
        let mut negated = false;
        for item in &flags.items {
            match item.kind {
                FlagsItemKind::Negation => negated = true,
                FlagsItemKind::Flag(Flag::CaseInsensitive) if !negated => {
                    self.case_insensitive = true;
                }
                FlagsItemKind::Flag(_) => {}
            }
        }
    }

    fn set(&mut self, set: &ClassSet) {
        match set {
            ClassSet::Item(item) => self.item(item),
            ClassSet::BinaryOp(op) => {
                self.set(&op.lhs);
                self.set(&op.rhs);
            }
        }
    }

    fn item(&mut self, item: &ClassSetItem) {
        match item {
            ClassSetItem::Unicode(_) => self.unicode_classes += 1,
            ClassSetItem::Bracketed(class) => self.set(&class.kind),
            ClassSetItem::Union(union) => union.items.iter().for_each(|i| self.item(i)),
            _ => {}
        }
    }
}

/// The second walk, for case-insensitive patterns: the sets every fold of the translation will
/// visit, built the way the translation builds them but without folding (set operations on
/// ranges are cheap; each Unicode class is looked up once).
struct Folding<'p> {
    pattern: &'p str,
    translator: Translator,
    folded: u64,
}

impl Folding<'_> {
    fn visit(&mut self, ast: &Ast) -> Result<(), RegexError> {
        match ast {
            Ast::ClassUnicode(class) => {
                self.unicode(class)?;
            }
            Ast::ClassBracketed(class) => {
                self.bracketed(class)?;
            }
            Ast::Repetition(rep) => self.visit(&rep.ast)?,
            Ast::Group(group) => self.visit(&group.ast)?,
            Ast::Alternation(alt) => {
                for ast in &alt.asts {
                    self.visit(ast)?;
                }
            }
            Ast::Concat(concat) => {
                for ast in &concat.asts {
                    self.visit(ast)?;
                }
            }
            Ast::Empty(_)
            | Ast::Flags(_)
            | Ast::Literal(_)
            | Ast::Dot(_)
            | Ast::Assertion(_)
            | Ast::ClassPerl(_) => {}
        }
        Ok(())
    }

    /// Counts one fold of `set`.
    fn fold(&mut self, set: &hir::ClassUnicode) {
        self.folded = self.folded.saturating_add(fold::work(set));
    }

    /// A bracketed class: its items are folded together, then it is negated.
    fn bracketed(&mut self, class: &ClassBracketed) -> Result<hir::ClassUnicode, RegexError> {
        let mut set = self.set(&class.kind)?;
        self.fold(&set);
        if class.negated {
            set.negate();
        }
        Ok(set)
    }

    fn set(&mut self, set: &ClassSet) -> Result<hir::ClassUnicode, RegexError> {
        match set {
            ClassSet::Item(item) => self.item(item),
            ClassSet::BinaryOp(op) => {
                let mut lhs = self.set(&op.lhs)?;
                let rhs = self.set(&op.rhs)?;
                // Both sides of `&&`, `--` and `~~` are folded before the operation.
                self.fold(&lhs);
                self.fold(&rhs);
                match op.kind {
                    ast::ClassSetBinaryOpKind::Intersection => lhs.intersect(&rhs),
                    ast::ClassSetBinaryOpKind::Difference => lhs.difference(&rhs),
                    ast::ClassSetBinaryOpKind::SymmetricDifference => {
                        lhs.symmetric_difference(&rhs);
                    }
                }
                Ok(lhs)
            }
        }
    }

    fn item(&mut self, item: &ClassSetItem) -> Result<hir::ClassUnicode, RegexError> {
        let range = |a: char, b: char| {
            hir::ClassUnicode::new([hir::ClassUnicodeRange::new(a.min(b), a.max(b))])
        };
        Ok(match item {
            ClassSetItem::Empty(_) => hir::ClassUnicode::empty(),
            ClassSetItem::Literal(lit) => range(lit.c, lit.c),
            ClassSetItem::Range(r) => range(r.start.c, r.end.c),
            ClassSetItem::Ascii(ascii) => {
                let set = self.lookup(&Ast::ClassBracketed(Box::new(ClassBracketed {
                    span: ascii.span,
                    negated: false,
                    kind: ClassSet::Item(ClassSetItem::Ascii(ClassAscii {
                        negated: false,
                        ..ascii.clone()
                    })),
                })))?;
                self.fold(&set);
                negated(set, ascii.negated)
            }
            ClassSetItem::Unicode(class) => self.unicode(class)?,
            ClassSetItem::Perl(perl) => self.bracketed(&perl_class(perl))?,
            ClassSetItem::Bracketed(class) => self.bracketed(class)?,
            ClassSetItem::Union(union) => {
                let mut all = hir::ClassUnicode::empty();
                for item in &union.items {
                    all.union(&self.item(item)?);
                }
                all
            }
        })
    }

    /// A Unicode class: its positive set is looked up and folded, then negated.
    fn unicode(&mut self, class: &ClassUnicode) -> Result<hir::ClassUnicode, RegexError> {
        let mut positive = class.clone();
        positive.negated = false;
        if let ClassUnicodeKind::NamedValue { op, .. } = &mut positive.kind {
            if *op == ClassUnicodeOpKind::NotEqual {
                *op = ClassUnicodeOpKind::Equal;
            }
        }
        let set = self.lookup(&Ast::ClassUnicode(Box::new(positive)))?;
        self.fold(&set);
        Ok(negated(set, class.is_negated()))
    }

    /// The set of a class without case folding, from the translator.
    fn lookup(&mut self, class: &Ast) -> Result<hir::ClassUnicode, RegexError> {
        let hir = self
            .translator
            .translate(self.pattern, class)
            .map_err(|e| RegexError::new(e.kind().to_string()))?;
        // A class of one character translates to a literal.
        Ok(match hir.into_kind() {
            hir::HirKind::Class(hir::Class::Unicode(set)) => set,
            hir::HirKind::Literal(hir::Literal(bytes)) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|s| s.chars().next())
                .map_or_else(hir::ClassUnicode::empty, |c| {
                    hir::ClassUnicode::new([hir::ClassUnicodeRange::new(c, c)])
                }),
            _ => hir::ClassUnicode::empty(),
        })
    }
}

fn negated(mut set: hir::ClassUnicode, negate: bool) -> hir::ClassUnicode {
    if negate {
        set.negate();
    }
    set
}
