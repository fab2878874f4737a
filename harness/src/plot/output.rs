//! From a drawn figure to its files: plotters draws one SVG at the figure's logical size (100
//! logical pixels per inch); usvg reads it with the bundled DejaVu Sans as the only font (every
//! family, `sans-serif` included, resolves to it); then
//! - the SVG is written back with its text as outlines, so it looks the same in any viewer,
//!   with or without the font;
//! - the PNG is that same tree rasterised by resvg at `--dpi` (pHYs chunk included, so LaTeX and
//!   viewers know the print size);
//! - the PDF (`--pdf`) is the tree converted by svg2pdf, the font embedded (subset), text
//!   selectable, the page `--figure-size` inches.
//!
//! The three files are one drawing, so they cannot disagree.
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

use resvg::{tiny_skia, usvg};

use super::{PlotError, FONT};

/// Logical pixels per inch of the drawing: a figure of 1100x650 logical pixels is 11x6.5 in.
pub const LOGICAL_DPI: f32 = 100.0;

/// A `--figure-size` narrower than this many logical pixels at [`LOGICAL_DPI`] is drawn this
/// wide and scaled down, so that lines and marks keep their proportions; text is sized in
/// printed points (layout.rs), so it prints at the same size at any width.
pub const MIN_LOGICAL_WIDTH: f32 = 640.0;

/// Logical pixels per inch for a figure `width_in` inches wide.
pub fn logical_dpi(width_in: Option<f32>) -> f32 {
    width_in.map_or(LOGICAL_DPI, |w| LOGICAL_DPI.max(MIN_LOGICAL_WIDTH / w))
}

/// Set (to anything): each figure is also written as NAME.text.svg, as plotters drew it, its
/// text still `<text>` elements with their font size and place (tests/figure_text.rs measures
/// them); unset, as for users, only the outlined SVG.
pub const TEXT_SVG_ENV: &str = "TRACEBENCH_FIGURE_TEXT_SVG";

/// How figures are written (`tracebench report --figure-size, --dpi, --pdf`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureOptions {
    /// Inches (width, height) of one-chart figures; grids are this wide and this tall per two
    /// rows of panels. None: each figure's own size.
    pub size_in: Option<(f32, f32)>,
    /// Pixels per inch of the PNG.
    pub dpi: u32,
    /// Also write figures/NAME.pdf.
    pub pdf: bool,
    /// Draw each figure's title (`--no-titles`: not, for a paper whose caption says it).
    pub titles: bool,
}

impl Default for FigureOptions {
    fn default() -> Self {
        FigureOptions { size_in: None, dpi: 100, pdf: false, titles: true }
    }
}

/// The options of this process's report. A global, set once by `report::run` from the command
/// line, so that every figure of every report kind (run, sweep, stepped, side by side) follows
/// them without threading them through each builder.
static OPTIONS: RwLock<FigureOptions> =
    RwLock::new(FigureOptions { size_in: None, dpi: 100, pdf: false, titles: true });

pub fn set_options(o: FigureOptions) {
    *OPTIONS.write().unwrap_or_else(|p| p.into_inner()) = o;
}

pub fn options() -> FigureOptions {
    *OPTIONS.read().unwrap_or_else(|p| p.into_inner())
}

/// Parses `WxH` in inches (`6.5x4`, `3.3x2.5`), each 1 to 40.
pub fn parse_size(s: &str) -> Result<(f32, f32), String> {
    let bad = || format!("expected WIDTHxHEIGHT in inches, e.g. 3.3x2.5, got '{s}'");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (f32, f32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if !(1.0..=40.0).contains(&w) || !(1.0..=40.0).contains(&h) {
        return Err(format!("{s}: each side must be 1 to 40 inches"));
    }
    Ok((w, h))
}

fn usvg_options() -> &'static usvg::Options<'static> {
    static OPT: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPT.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        let family = db.faces().next().and_then(|f| f.families.first().map(|x| x.0.clone()));
        let family = family.unwrap_or_else(|| "DejaVu Sans".into());
        for set in [
            usvg::fontdb::Database::set_sans_serif_family,
            usvg::fontdb::Database::set_serif_family,
            usvg::fontdb::Database::set_monospace_family,
        ] {
            set(&mut db, family.clone());
        }
        usvg::Options { font_family: family, fontdb: Arc::new(db), dpi: LOGICAL_DPI, ..Default::default() }
    })
}

fn err(name: &str, msg: impl std::fmt::Display) -> PlotError {
    PlotError::Draw { figure: name.to_string(), msg: msg.to_string() }
}

fn write(path: PathBuf, bytes: &[u8]) -> Result<PathBuf, PlotError> {
    crate::results::write_atomic_io(&path, bytes).map_err(|source| PlotError::Io { path: path.clone(), source })?;
    Ok(path)
}

/// The files written for one figure (the PDF, with `--pdf`, beside them).
pub struct Written {
    pub png: PathBuf,
    pub svg: PathBuf,
}

/// Writes `svg` (as plotters drew it) as dir/name.svg (text as outlines), .png and, with
/// `opts.pdf`, .pdf.
pub fn write_all(svg: &str, dir: &Path, name: &str, opts: &FigureOptions) -> Result<Written, PlotError> {
    let per_inch = logical_dpi(opts.size_in.map(|s| s.0));
    let tree = usvg::Tree::from_str(svg, usvg_options()).map_err(|x| err(name, x))?;
    let outlined = tree.to_string(&usvg::WriteOptions::default());
    let svg_path = write(dir.join(format!("{name}.svg")), outlined.as_bytes())?;
    if std::env::var_os(TEXT_SVG_ENV).is_some() {
        write(dir.join(format!("{name}.text.svg")), svg.as_bytes())?;
    }
    let png =
        png(&tree, opts.dpi, per_inch).ok_or_else(|| err(name, "the figure is empty or too large to rasterise"))?;
    let png_path = write(dir.join(format!("{name}.png")), &png)?;
    if opts.pdf {
        let page = svg2pdf::PageOptions { dpi: per_inch };
        let pdf = svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page).map_err(|x| err(name, x))?;
        write(dir.join(format!("{name}.pdf")), &pdf)?;
    }
    Ok(Written { png: png_path, svg: svg_path })
}

fn png(tree: &usvg::Tree, dpi: u32, per_inch: f32) -> Option<Vec<u8>> {
    let scale = dpi as f32 / per_inch;
    let size = tree.size().to_int_size().scale_by(scale)?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    Some(with_phys(pixmap.encode_png().ok()?, dpi))
}

/// Inserts a pHYs chunk (pixels per metre) after IHDR, so the PNG says its print size.
pub fn with_phys(png: Vec<u8>, dpi: u32) -> Vec<u8> {
    // 8-byte signature, then IHDR: 4 length + 4 type + 13 data + 4 CRC.
    const AFTER_IHDR: usize = 8 + 25;
    if png.len() < AFTER_IHDR || &png[12..16] != b"IHDR" {
        return png;
    }
    let ppm = (dpi as f64 / 0.0254).round() as u32;
    let mut body = b"pHYs".to_vec();
    body.extend(ppm.to_be_bytes());
    body.extend(ppm.to_be_bytes());
    body.push(1); // unit: metre
    let mut chunk = 9u32.to_be_bytes().to_vec();
    chunk.extend(&body);
    chunk.extend(crc32(&body).to_be_bytes());
    let mut out = png[..AFTER_IHDR].to_vec();
    out.extend(chunk);
    out.extend(&png[AFTER_IHDR..]);
    out
}

/// CRC-32 (ISO-HDLC, as PNG chunks use).
fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_inches_and_refuse_nonsense() {
        assert_eq!(parse_size("6.5x4"), Ok((6.5, 4.0)));
        assert_eq!(parse_size("3.3X2.5"), Ok((3.3, 2.5)));
        assert!(parse_size("650x400").is_err());
        assert!(parse_size("6.5").is_err());
        assert!(parse_size("axb").is_err());
    }

    #[test]
    fn crc_and_phys_chunk() {
        assert_eq!(crc32(b"IEND"), 0xae42_6082);
        let mut fake = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        fake.extend([0u8; 17]);
        fake.extend(b"rest");
        let out = with_phys(fake, 300);
        assert_eq!(&out[37..41], b"pHYs");
        assert_eq!(u32::from_be_bytes(out[41..45].try_into().unwrap()), 11811);
        assert!(out.ends_with(b"rest"));
    }
}
