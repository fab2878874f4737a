//! The report's one rounding rule: three significant digits, never an exponent, for
//! every number the terminal table, report.html and the paper tables print (1234 -> "1230",
//! 70.06 -> "70.1", 0.4567 -> "0.457"). Shares are percent with no space before "%".

/// `v` to three significant digits; "–" for a missing value.
pub fn sig3(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (2 - mag).max(0) as usize;
    let scale = 10f64.powi(mag - 2);
    let rounded = if mag > 2 { (v / scale).round() * scale } else { v };
    let s = format!("{rounded:.decimals$}");
    // 99.96 rounds to "100.0": one digit too many.
    let digits = s.chars().filter(char::is_ascii_digit).collect::<String>();
    if decimals > 0 && digits.trim_start_matches('0').len() > 3 {
        return format!("{:.*}", decimals - 1, rounded);
    }
    s
}

/// A duration in ns: ns below 1000, µs from there, both to three significant digits.
pub fn duration(ns: f64) -> String {
    if ns.abs() >= 1000.0 {
        format!("{} µs", sig3(ns / 1000.0))
    } else {
        format!("{} ns", sig3(ns))
    }
}

/// "+1.63 µs", "-12.5 ns".
pub fn signed_duration(ns: f64) -> String {
    format!("{}{}", if ns < 0.0 { "-" } else { "+" }, duration(ns.abs()))
}

/// A share (0..1) in percent, two significant digits below 1% ("0.12%"), else one decimal
/// ("99.8%"); never "100%" for a share below one.
pub fn percent(share: f64) -> String {
    let p = 100.0 * share;
    if !p.is_finite() {
        return "–".into();
    }
    if p > 0.0 && p < 1.0 {
        let d = ((-p.log10().floor()) as usize + 1).clamp(2, 6);
        return format!("{p:.d$}%");
    }
    let s = format!("{p:.1}");
    if share < 1.0 && s.starts_with("100") {
        return "99.9%".into();
    }
    format!("{s}%")
}

/// A share in percent with one decimal, or more where one decimal would round a share below
/// 100 % up to "100.0" (a line must not say all calls when a few are elsewhere).
pub fn share_pct(f: f64) -> String {
    let p = 100.0 * f;
    let mut d = 1;
    while d < 4 && p < 100.0 && format!("{p:.d$}").starts_with("100") {
        d += 1;
    }
    format!("{p:.d$}")
}

/// A small share in percent: two decimals, or the first significant digit of a smaller one (0.004).
pub fn small_share_pct(share: f64) -> String {
    let pct = 100.0 * share;
    if pct == 0.0 {
        return "0".into();
    }
    let digits = ((-pct.log10().floor()) as usize).clamp(2, 9);
    format!("{pct:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_digits() {
        assert_eq!(sig3(1234.0), "1230");
        assert_eq!(sig3(158.4), "158");
        assert_eq!(sig3(70.06), "70.1");
        assert_eq!(sig3(2.0), "2.00");
        assert_eq!(sig3(0.4567), "0.457");
        assert_eq!(sig3(99.96), "100");
        assert_eq!(sig3(-12.34), "-12.3");
        assert_eq!(sig3(f64::NAN), "–");
        assert_eq!(duration(1630.0), "1.63 µs");
        assert_eq!(signed_duration(-12.34), "-12.3 ns");
        assert_eq!(percent(0.0012), "0.12%");
        assert_eq!(percent(0.998), "99.8%");
        assert_eq!(percent(0.99999), "99.9%");
    }
}

pub(crate) fn fmt_val(v: f64, unit: &str) -> String {
    let s = if v.abs() >= 100.0 { format!("{:.0}", v) } else { format!("{:.1}", v) };
    if unit == "ns" {
        format!("{s} ns")
    } else {
        s
    }
}

/// "+990 ns", "-12.5".
pub(crate) fn signed(v: f64, unit: &str) -> String {
    format!("{}{}", if v >= 0.0 { "+" } else { "-" }, fmt_val(v.abs(), unit))
}

/// A small probability: "< 1e-12" below that, else two significant digits.
pub(crate) fn p_small(p: f64) -> String {
    if p < 1e-12 {
        "< 1e-12".into()
    } else {
        format!("= {p:.2e}")
    }
}
