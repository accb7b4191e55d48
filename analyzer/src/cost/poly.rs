//! Polynomials with non-negative coefficients over size variables: the symbolic form of a
//! node's worst-case cost or size.
//!
//! Every coefficient is positive and every variable is a non-negative size, so a polynomial is
//! monotone in each variable, the coefficient-wise maximum of two polynomials bounds both of
//! them pointwise, and the part of a polynomial that depends on one variable is superadditive in
//! it. The estimator's comprehension rule and its final maximisation rest on these three facts.

/// A size variable: an index into the estimator's part registry.
pub(crate) type Var = u32;

/// A monomial: variables with positive exponents, sorted by variable.
pub(crate) type Mono = Vec<(Var, u32)>;

/// Coefficients are clamped here so that products never reach infinity (and `0 · ∞` never
/// makes a NaN); anything this large saturates to `u64::MAX` in the end anyway.
const HUGE: f64 = 1e300;

/// A polynomial `Σ c · Π vᵉ` with every `c > 0`, terms sorted by monomial.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Poly {
    terms: Vec<(Mono, f64)>,
}

impl Poly {
    /// The zero polynomial.
    pub(crate) fn zero() -> Self {
        Self::default()
    }

    /// A constant.
    pub(crate) fn constant(c: f64) -> Self {
        let mut p = Self::zero();
        p.push(Vec::new(), c);
        p
    }

    /// `c · v`.
    pub(crate) fn var(v: Var, c: f64) -> Self {
        let mut p = Self::zero();
        p.push(vec![(v, 1)], c);
        p
    }

    fn push(&mut self, mono: Mono, c: f64) {
        let c = c.min(HUGE);
        if c > 0.0 {
            match self.terms.binary_search_by(|(m, _)| m.cmp(&mono)) {
                Ok(i) => self.terms[i].1 = (self.terms[i].1 + c).min(HUGE),
                Err(i) => self.terms.insert(i, (mono, c)),
            }
        }
    }

    /// The terms, sorted by monomial.
    pub(crate) fn terms(&self) -> &[(Mono, f64)] {
        &self.terms
    }

    /// The value when it has no variable.
    pub(crate) fn as_constant(&self) -> Option<f64> {
        match self.terms.as_slice() {
            [] => Some(0.0),
            [(m, c)] if m.is_empty() => Some(*c),
            _ => None,
        }
    }

    /// The largest variable that occurs (the most recently created one).
    pub(crate) fn newest_var(&self) -> Option<Var> {
        self.terms
            .iter()
            .filter_map(|(m, _)| m.last().map(|&(v, _)| v))
            .max()
    }

    /// Every variable that occurs, sorted and deduplicated.
    pub(crate) fn vars(&self) -> Vec<Var> {
        let mut vars: Vec<Var> = self
            .terms
            .iter()
            .flat_map(|(m, _)| m.iter().map(|&(v, _)| v))
            .collect();
        vars.sort_unstable();
        vars.dedup();
        vars
    }

    /// `self + other`.
    #[must_use]
    pub(crate) fn add(&self, other: &Poly) -> Poly {
        let mut out = self.clone();
        for (m, c) in &other.terms {
            out.push(m.clone(), *c);
        }
        out
    }

    /// `self + c`.
    #[must_use]
    pub(crate) fn add_const(&self, c: f64) -> Poly {
        self.add(&Poly::constant(c))
    }

    /// `self − c` on the constant term, which stays non-negative (lowered to zero at most):
    /// for taking back a part the caller knows the constant term counted more than once.
    #[must_use]
    pub(crate) fn sub_const(&self, c: f64) -> Poly {
        let mut out = self.clone();
        if let Ok(i) = out.terms.binary_search_by(|(m, _)| m.as_slice().cmp(&[])) {
            out.terms[i].1 = (out.terms[i].1 - c).max(0.0);
            if out.terms[i].1 == 0.0 {
                out.terms.remove(i);
            }
        }
        out
    }

    /// `c · self`.
    #[must_use]
    pub(crate) fn scale(&self, c: f64) -> Poly {
        let mut out = Poly::zero();
        for (m, k) in &self.terms {
            out.push(m.clone(), k * c);
        }
        out
    }

    /// `self · other`.
    #[must_use]
    pub(crate) fn mul(&self, other: &Poly) -> Poly {
        let mut out = Poly::zero();
        for (a, ca) in &self.terms {
            for (b, cb) in &other.terms {
                out.push(mono_mul(a, b), ca * cb);
            }
        }
        out
    }

    /// The coefficient-wise maximum: at least `self` and at least `other` at every point
    /// with non-negative variables.
    #[must_use]
    pub(crate) fn max(&self, other: &Poly) -> Poly {
        let mut out = self.clone();
        for (m, c) in &other.terms {
            match out.terms.binary_search_by(|(k, _)| k.cmp(m)) {
                Ok(i) => out.terms[i].1 = out.terms[i].1.max(*c),
                Err(i) => out.terms.insert(i, (m.clone(), *c)),
            }
        }
        out
    }

    /// Replaces every occurrence of `from` by `to` (sound when `from ≤ to` always holds).
    #[must_use]
    pub(crate) fn substitute(&self, from: Var, to: Var) -> Poly {
        self.map_vars(|v| if v == from { to } else { v })
    }

    /// Renames variables through `f` (monomials that collide are merged).
    #[must_use]
    pub(crate) fn map_vars(&self, mut f: impl FnMut(Var) -> Var) -> Poly {
        let mut out = Poly::zero();
        for (m, c) in &self.terms {
            let mut mono: Mono = Vec::with_capacity(m.len());
            for &(v, e) in m {
                mono = mono_mul(&mono, &[(f(v), e)]);
            }
            out.push(mono, *c);
        }
        out
    }

    /// Splits into the terms without `v` and the terms with `v`.
    pub(crate) fn split_on(&self, v: Var) -> (Poly, Poly) {
        let mut without = Poly::zero();
        let mut with = Poly::zero();
        for (m, c) in &self.terms {
            if m.iter().any(|&(w, _)| w == v) {
                with.terms.push((m.clone(), *c));
            } else {
                without.terms.push((m.clone(), *c));
            }
        }
        (without, with)
    }

    /// The largest total degree of a term.
    pub(crate) fn degree(&self) -> u32 {
        self.terms
            .iter()
            .map(|(m, _)| m.iter().map(|&(_, e)| e).sum::<u32>())
            .max()
            .unwrap_or(0)
    }

    /// The value at a point.
    #[cfg(test)]
    pub(crate) fn eval(&self, mut at: impl FnMut(Var) -> f64) -> f64 {
        let mut sum = 0.0;
        for (m, c) in &self.terms {
            let mut term = *c;
            for &(v, e) in m {
                term *= at(v).powi(e.min(i32::MAX as u32) as i32);
            }
            sum += term;
        }
        sum.min(HUGE)
    }
}

/// The product of two monomials.
fn mono_mul(a: &[(Var, u32)], b: &[(Var, u32)]) -> Mono {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
            out.push(a[i]);
            i += 1;
        } else if i == a.len() || b[j].0 < a[i].0 {
            out.push(b[j]);
            j += 1;
        } else {
            out.push((a[i].0, a[i].1.saturating_add(b[j].1)));
            i += 1;
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_merges_terms() {
        let x = Poly::var(0, 2.0);
        let y = Poly::var(1, 1.0).add_const(3.0);
        let p = x.mul(&y); // 2xy + 6x
        assert_eq!(p.terms().len(), 2);
        assert!((p.eval(|_| 2.0) - 20.0).abs() < 1e-9);
        let sq = x.mul(&x); // 4x²
        assert_eq!(sq.degree(), 2);
        let at = |v: Var| if v == 5 { 3.0 } else { 0.0 };
        assert!((sq.substitute(0, 5).eval(at) - 36.0).abs() < 1e-9);
    }

    #[test]
    fn max_bounds_both_operands() {
        let a = Poly::var(0, 3.0).add_const(1.0);
        let b = Poly::var(1, 1.0).add_const(4.0);
        let m = a.max(&b);
        for x in [0.0, 1.0, 10.0] {
            for y in [0.0, 2.0, 7.0] {
                let at = |v: Var| if v == 0 { x } else { y };
                assert!(m.eval(at) >= a.eval(at) && m.eval(at) >= b.eval(at));
            }
        }
    }

    #[test]
    fn coefficients_never_become_infinite() {
        let mut p = Poly::constant(1e200);
        for _ in 0..4 {
            p = p.mul(&p);
        }
        assert!(p.as_constant().unwrap().is_finite());
    }

    #[test]
    fn split_separates_terms_with_the_variable() {
        let p = Poly::var(0, 1.0).mul(&Poly::var(1, 1.0)).add_const(2.0);
        let (without, with) = p.split_on(0);
        assert_eq!(without.as_constant(), Some(2.0));
        assert_eq!(with.vars(), vec![0, 1]);
    }
}
