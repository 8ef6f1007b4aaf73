//! PNG output without a browser: the chart's SVG is parsed by usvg and rasterised by resvg
//! (pure Rust), with text in the bundled DejaVu Sans so a PNG looks the same on every machine
//! whatever fonts it has. Rendered at twice the SVG's size for sharp text in posts and papers.

use resvg::{tiny_skia, usvg};
use std::sync::OnceLock;

/// DejaVu Sans (Bitstream Vera licence, see fonts/LICENSE-DejaVu.txt).
static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// Errors of the rasteriser (the SVG is ours, so these mean a bug or no memory).
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("rendering the chart to PNG: the SVG did not parse: {0}")]
    Parse(String),
    #[error("rendering the chart to PNG: cannot allocate a {0}x{1} image")]
    Size(u32, u32),
    #[error("rendering the chart to PNG: encoding failed: {0}")]
    Encode(String),
}

fn options() -> &'static usvg::Options<'static> {
    static OPTS: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPTS.get_or_init(|| {
        let mut o = usvg::Options {
            font_family: "DejaVu Sans".into(),
            ..Default::default()
        };
        let db = o.fontdb_mut();
        db.load_font_data(FONT.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        o
    })
}

/// The SVG rendered as PNG bytes at `scale` times its size.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, PngError> {
    let tree = usvg::Tree::from_str(svg, options()).map_err(|e| PngError::Parse(e.to_string()))?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil() as u32,
        (size.height() * scale).ceil() as u32,
    );
    let mut pixmap = tiny_skia::Pixmap::new(w, h).ok_or(PngError::Size(w, h))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| PngError::Encode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_shapes_reach_the_pixels() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="80" height="20"><rect width="80" height="20" fill="#fff"/><text x="2" y="15" font-size="14" fill="#000">IOPS 1k</text></svg>"##;
        let png = svg_to_png(svg, 1.0).unwrap();
        let img = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((img.width(), img.height()), (80, 20));
        // The bundled font drew the text: some pixels are dark.
        let dark = img.pixels().iter().filter(|p| p.red() < 100).count();
        assert!(dark > 20, "{dark} dark pixels: text was not drawn");
    }
}
