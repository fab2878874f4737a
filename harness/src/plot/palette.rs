//! One colour per tracer *name*, the same in every figure and in report.html, whatever order the
//! tracers were given in. The colours are Okabe and Ito's colour-blind-safe set (black
//! swapped for grey, yellow left out: it does not read on white) and three of Paul Tol's muted
//! colours. The survey's tracers are pinned to a colour each; any other name is hashed (FNV-1a,
//! stable across builds) onto a slot from 10 on, so its series also carries a marker and never
//! looks like a pinned tracer's.
use plotters::style::RGBColor;

/// The palette, in slot order (a slot's colour is `PALETTE[slot % 10]`).
pub const PALETTE: [(u8, u8, u8); 10] = [
    (0, 114, 178),   // blue
    (213, 94, 0),    // vermillion
    (0, 158, 115),   // bluish green
    (204, 121, 167), // reddish purple
    (230, 159, 0),   // orange
    (86, 180, 233),  // sky blue
    (110, 110, 110), // grey
    (136, 34, 85),   // wine (Tol)
    (153, 153, 51),  // olive (Tol)
    (51, 34, 136),   // indigo (Tol)
];

/// The survey's tracers (and the benchmark's defaults) and their slots.
const PINNED: &[(&str, usize)] = &[
    ("none", 6),
    ("lttng-ust", 0),
    ("lttng", 0),
    ("lw", 1),
    ("lw-ust", 1),
    ("printf", 2),
    ("ftrace", 3),
    ("ebpf", 4),
    ("ebpf-tracing", 4),
    ("perf", 5),
    ("systemtap", 7),
    ("stap", 7),
    ("extrae", 8),
    ("vampirtrace", 9),
    ("otf2", 9),
];

/// Slots an unpinned name can hash to: 10-39 (colour `slot % 10`, marker `slot / 10`).
const HASHED: u64 = 30;

/// The colour slot of a tracer by its name: the `--tracer` spec's kind (`lw` for `lw:...`), so a
/// row keeps its colour in any run.
pub fn slot(name: &str) -> usize {
    // The spec's kind, as the survey comparisons read it: `lw` of `lw:4`, `spin` of `spin@64`.
    let kind = name.split([':', '@']).next().unwrap_or(name).to_ascii_lowercase();
    if let Some((_, s)) = PINNED.iter().find(|(k, _)| *k == kind) {
        return *s;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.to_ascii_lowercase().bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    10 + (h % HASHED) as usize
}

/// The slots of a report's tracer rows: each row's `slot`, except that two rows that would share
/// one (`lw` and `lw:4`) are told apart, the later by name taking the next free slot from 10 on;
/// by name, never by the rows' order, so the same set of rows gets the same colours.
pub fn slots(names: &[&str]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| names[a].cmp(names[b]));
    let mut taken = std::collections::BTreeSet::new();
    let mut out = vec![0; names.len()];
    for i in order {
        let mut s = slot(names[i]);
        while !taken.insert(s) {
            s = if s < 10 { 10 } else { s + 1 };
        }
        out[i] = s;
    }
    out
}

pub fn rgb(slot: usize) -> RGBColor {
    let (r, g, b) = PALETTE[slot % PALETTE.len()];
    RGBColor(r, g, b)
}

/// `#rrggbb` for report.html.
pub fn hex(slot: usize) -> String {
    let (r, g, b) = PALETTE[slot % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_follow_the_name_not_the_order() {
        let a = ["none", "lw", "printf", "lttng-ust", "myplugin"];
        let b = ["myplugin", "lttng-ust", "printf", "lw", "none"];
        let of = |names: &[&str]| -> Vec<(String, String)> {
            let mut v: Vec<_> = names.iter().map(|n| (n.to_string(), hex(slot(n)))).collect();
            v.sort();
            v
        };
        assert_eq!(of(&a), of(&b));
        // The survey's tracers have colours of their own, and a plugin's carries a marker.
        let pinned: std::collections::BTreeSet<_> = a[..4].iter().map(|n| slot(n)).collect();
        assert_eq!(pinned.len(), 4);
        assert!(slot("myplugin") >= 10);
        assert_eq!(slot("lw:4"), slot("lw"));
        let (x, y) = (slots(&["lw", "lw:4", "none"]), slots(&["none", "lw:4", "lw"]));
        assert_eq!((x[0], x[1]), (y[2], y[1]));
        assert_ne!(x[0], x[1]);
    }
}
