//! The figure module's tests: numbers, ticks, files and sizes.
use super::*;

#[test]
fn number_format() {
    assert_eq!(fmt_num(100.0), "100");
    assert_eq!(fmt_num(1500.0), "1500");
    assert_eq!(fmt_num(25000.0), "25k");
    assert_eq!(fmt_num(2.5), "2.5");
    assert_eq!(fmt_num(1.5e6), "1.5M");
}

#[test]
fn log_ticks_label_every_range() {
    assert_eq!(log_ticks(1.0, 1e4), vec![1.0, 10.0, 100.0, 1000.0, 10000.0]);
    assert_eq!(log_ticks(90.0, 1100.0), vec![100.0, 200.0, 500.0, 1000.0]);
    let t = log_ticks(300.0, 360.0);
    assert!(t.len() >= 2 && t.iter().all(|v| (300.0..=360.0).contains(v)), "{t:?}");
    assert!(log_ticks(0.5, 1e10).len() <= 12);
}

#[test]
fn draws_png_and_svg_with_the_bundled_font() {
    let dir = tempfile::tempdir().unwrap();
    let fig = ScalingFigure {
        title: "t".into(),
        series: vec![Series { name: "a".into(), colour: 0, points: vec![(1.0, 100.0), (2.0, 250.0)] }],
        spread: vec![vec![(1.0, 90.0, 110.0), (2.0, 240.0, 260.0)]],
    };
    let (png, svg) = save_with(&fig, dir.path(), "s", &FigureOptions::default()).unwrap();
    let bytes = std::fs::read(png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let svg = std::fs::read_to_string(svg).unwrap();
    // Text as outlines: no <text> element, no font the viewer must have.
    assert!(svg.contains("<svg") && !svg.contains("<text") && !svg.contains("font-family"), "{svg}");
}

/// The histogram grid at a paper column's size: its tick labels measured in the drawing
/// (plotters' SVG, before the text becomes outlines) never overlap, and its PDF is the
/// documented 3.3 x 2.5 in (docs/figures.md).
#[test]
fn tick_labels_never_collide_at_a_column_width() {
    init_font().unwrap();
    let bins = |lo: f64| -> Vec<(f64, f64, u64)> {
        (0..75)
            .map(|i| {
                (lo * 10f64.powf(i as f64 / 25.0), lo * 10f64.powf((i + 1) as f64 / 25.0), 1 + (i as u64 * 37) % 900)
            })
            .collect()
    };
    let fig = HistogramGrid {
        title: "Latency histogram per tracer".into(),
        panels: [20.0, 45.0, 90.0, 300.0]
            .iter()
            .enumerate()
            .map(|(i, &lo)| Series { name: format!("t{i}"), colour: i, points: bins(lo) })
            .collect(),
    };
    let opts = FigureOptions { size_in: Some((3.3, 2.5)), dpi: 300, pdf: true, titles: true };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, canvas(&fig, &opts)).into_drawing_area();
        fig.draw(&root).unwrap();
        root.present().unwrap();
    }
    // (x, y, font size, text) of every <text>.
    let attr = |t: &str, k: &str| -> Option<String> {
        let i = t.find(&format!(" {k}=\""))? + k.len() + 3;
        Some(t[i..i + t[i..].find('"')?].to_string())
    };
    let texts: Vec<(f64, f64, u32, String, String)> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some((
                attr(t, "x")?.parse().ok()?,
                attr(t, "y")?.parse().ok()?,
                attr(t, "font-size")?.parse::<f64>().ok()?.ceil() as u32,
                attr(t, "text-anchor").unwrap_or_default(),
                body.trim().to_string(),
            ))
        })
        .collect();
    let ticks = texts.iter().filter(|t| t.4.starts_with(|c: char| c.is_ascii_digit())).count();
    assert!(ticks >= 16, "tick labels expected: {texts:?}");
    let mut boxes = Vec::new();
    for (x, y, size, anchor, body) in &texts {
        let (w, h) = (FAMILY, *size).into_font().box_size(body).unwrap();
        let x0 = match anchor.as_str() {
            "middle" => x - w as f64 / 2.0,
            "end" => x - w as f64,
            _ => *x,
        };
        boxes.push((x0, x0 + w as f64, *y, *y + h as f64, body.clone()));
    }
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            // Touching reads as one number ("5001000"): at least 3 px apart.
            let overlap = a.0 < b.1 + 3.0 && b.0 < a.1 + 3.0 && a.2 < b.3 && b.2 < a.3;
            assert!(!overlap, "labels '{}' and '{}' closer than 3 px at 3.3 in: {a:?} {b:?}", a.4, b.4);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    save_with(&fig, dir.path(), "h", &opts).unwrap();
    let pdf = String::from_utf8_lossy(&std::fs::read(dir.path().join("h.pdf")).unwrap()).into_owned();
    let mb = pdf.split("MediaBox [").nth(1).and_then(|x| x.split(']').next()).unwrap_or("").to_string();
    let v: Vec<f64> = mb.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    assert!(v.len() == 4 && (v[2] - 237.6).abs() < 0.5 && (v[3] - 180.0).abs() < 0.5, "3.3 x 2.5 in expected: {mb}");
}

#[test]
fn size_dpi_and_pdf_follow_the_options() {
    let dir = tempfile::tempdir().unwrap();
    let fig = ScalingFigure {
        title: "t".into(),
        series: vec![Series { name: "a".into(), colour: 0, points: vec![(1.0, 100.0), (2.0, 250.0)] }],
        spread: vec![],
    };
    let opts = FigureOptions { size_in: Some((3.5, 2.5)), dpi: 300, pdf: true, titles: true };
    let (png, _) = save_with(&fig, dir.path(), "s", &opts).unwrap();
    let bytes = std::fs::read(png).unwrap();
    let (w, h) =
        (u32::from_be_bytes(bytes[16..20].try_into().unwrap()), u32::from_be_bytes(bytes[20..24].try_into().unwrap()));
    assert_eq!((w, h), (1050, 750));
    let pdf = std::fs::read(dir.path().join("s.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF"));
    // 3.5 x 2.5 in = 252 x 180 pt (to a logical pixel), the font embedded.
    let text = String::from_utf8_lossy(&pdf);
    let mb = text.split("MediaBox [").nth(1).and_then(|x| x.split(']').next()).unwrap_or("");
    let v: Vec<f64> = mb.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    assert!(v.len() == 4 && (v[2] - 252.0).abs() < 0.5 && (v[3] - 180.0).abs() < 0.5, "page size: {mb}");
    assert!(text.contains("FontFile"), "font");
}

/// A sweep's curve with an undecided step, at a paper column's 3.3 x 2.5 in: that segment is
/// dashed (more strokes than the same figure drawn solid), and the note saying what a dash means
/// prints at 7.5 pt or more, as every other text of the figure.
#[test]
fn an_undecided_step_is_dashed_and_said_at_a_column_width() {
    let fig = |undecided: Vec<Vec<bool>>| CurveFigure {
        title: "Mean latency per call against payload-size".into(),
        x_desc: "payload-size (bytes), log scale".into(),
        y_desc: "mean latency (ns, log scale)".into(),
        log_x: true,
        x_names: None,
        series: vec![
            Series { name: "lw".into(), colour: 0, points: vec![(4.0, 40.9), (256.0, 46.2), (1024.0, 52.5)] },
            Series { name: "printf".into(), colour: 1, points: vec![(4.0, 113.0), (256.0, 126.0), (1024.0, 150.0)] },
        ],
        undecided,
    };
    let opts = FigureOptions { size_in: Some((3.3, 2.5)), dpi: 300, pdf: false, titles: true };
    let per_inch = output::logical_dpi(Some(3.3)) as f64;
    let dashed = render_svg(&fig(vec![vec![false, true], vec![false, false]]), &opts).unwrap();
    let solid = render_svg(&fig(Vec::new()), &opts).unwrap();
    let strokes = |svg: &str| svg.matches("<polyline").count() + svg.matches("<line").count();
    assert!(strokes(&dashed) > strokes(&solid) + 3, "{} against {}", strokes(&dashed), strokes(&solid));
    assert!(!solid.contains("dashed:"), "no note without a dashed segment");
    let mut note = false;
    for t in dashed.split("<text").skip(1) {
        let body = t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].trim();
        let i = t.find(" font-size=\"").unwrap() + 12;
        let fs: f64 = t[i..i + t[i..].find('"').unwrap()].parse().unwrap();
        let pt = fs * 72.0 / per_inch;
        assert!(body.is_empty() || pt >= layout::MIN_PT - 1e-6, "'{body}' at {pt:.2} pt");
        note |= body == "dashed: not decided by the comparison";
    }
    assert!(note, "the note under the legend: {dashed}");
}
