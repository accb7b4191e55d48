//! How much work case folding a class does. regex-syntax folds a class range by range: a range
//! that holds no character with a case mapping is skipped, any other is walked code point by
//! code point (about 15 ns each), so `(?i)[\x{80}-\x{10FFFF}]` walks a million; every cased
//! character met adds its other cases as new ranges, which are sorted afterwards (about four
//! times as much again per cased character).
//!
//! [`CASED`] lists where the characters with a simple case mapping lie (the characters of
//! regex-syntax's folding table and their images, merged where fewer than 64 code points apart);
//! a test checks every code point against the table through regex-syntax's public API, so an
//! update of its Unicode data cannot make the measure too small unnoticed.

use regex_syntax::hir::ClassUnicode;

/// The ranges that hold every character with a simple case mapping (Unicode 15, as in
/// regex-syntax 0.8), inclusive.
const CASED: [(u32, u32); 23] = [
    (0x0041, 0x029E),
    (0x0345, 0x0586),
    (0x10A0, 0x10FF),
    (0x13A0, 0x13FD),
    (0x1C80, 0x1CBF),
    (0x1D79, 0x1D8E),
    (0x1E00, 0x1FFC),
    (0x2126, 0x2184),
    (0x24B6, 0x24E9),
    (0x2C00, 0x2D2D),
    (0xA640, 0xA69B),
    (0xA722, 0xA7F6),
    (0xAB53, 0xABBF),
    (0xFB05, 0xFB06),
    (0xFF21, 0xFF5A),
    (0x10400, 0x1044F),
    (0x104B0, 0x104FB),
    (0x10570, 0x105BC),
    (0x10C80, 0x10CF2),
    (0x10D50, 0x10D85),
    (0x118A0, 0x118DF),
    (0x16E40, 0x16E7F),
    (0x1E900, 0x1E943),
];

/// Work units (about 15 ns each) of folding `set`: the whole length of every range that meets a
/// cased region (regex-syntax skips the others), plus four per code point of a cased region.
/// Calibrated against regex-syntax: `(?i)\pL` measures 15,800 and takes about 230 µs,
/// `(?i)\p{Any}` 1.13 million and about 17 ms.
pub(super) fn work(set: &ClassUnicode) -> u64 {
    let mut walked = 0u64;
    let mut cased = 0u64;
    for range in set.ranges() {
        let (start, end) = (u32::from(range.start()), u32::from(range.end()));
        let mut meets = false;
        for &(lo, hi) in &CASED {
            if start <= hi && lo <= end {
                meets = true;
                cased += u64::from(end.min(hi) - start.max(lo) + 1);
            }
        }
        if meets {
            walked += u64::from(end - start + 1);
        }
    }
    walked.saturating_add(cased.saturating_mul(4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_syntax::hir::ClassUnicodeRange;

    /// Every character that folding changes lies in a cased region.
    #[test]
    fn cased_regions_hold_every_character_with_a_case_mapping() {
        let inside = |c: u32| CASED.iter().any(|&(lo, hi)| lo <= c && c <= hi);
        for c in (0..=0x10_FFFFu32).filter_map(char::from_u32) {
            if inside(u32::from(c)) {
                continue;
            }
            let mut set = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            set.case_fold_simple();
            assert_eq!(
                set.ranges().len(),
                1,
                "{c:?} (U+{:04X}) folds",
                u32::from(c)
            );
            assert_eq!(set.ranges()[0].start(), c, "{c:?} folds");
            assert_eq!(set.ranges()[0].end(), c, "{c:?} folds");
        }
    }

    #[test]
    fn ranges_without_cased_characters_cost_nothing() {
        let han = ClassUnicode::new([ClassUnicodeRange::new('\u{4E00}', '\u{9FFF}')]);
        assert_eq!(work(&han), 0);
        let all = ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)]);
        let cased: u64 = CASED.iter().map(|&(lo, hi)| u64::from(hi - lo + 1)).sum();
        assert_eq!(work(&all), 0x11_0000 + 4 * cased);
        let latin = ClassUnicode::new([ClassUnicodeRange::new('a', 'z')]);
        assert_eq!(work(&latin), 26 * 5);
    }
}
