//! Plotting vocabulary shared by every measurement's plots (plotters, SVG): the colours in
//! order, a labelled line, and the legend-and-save every plot ends with. A leaf module.

use anyhow::Result;
use plotters::prelude::*;

/// The colours of the lines and bars, in order (a mode keeps its colour across a report's
/// plots by its position in the mode list).
pub const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(255, 187, 120),
];
/// A plotting error as an [`anyhow::Error`].
pub fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("plotting: {e:?}")
}
/// One labelled line in `color` through `pts` (and, with `dots`, a dot on each point).
pub fn labelled_line<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    pts: Vec<(f64, f64)>,
    color: RGBColor,
    label: String,
    dots: bool,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
        .map_err(err)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    if dots {
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    Ok(())
}

/// Every plot's end: the legend in a framed box at `position`, then the file written.
pub fn legend_and_save<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    root: &DrawingArea<DB, plotters::coord::Shift>,
    position: SeriesLabelPosition,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}
