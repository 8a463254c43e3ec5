//! One plot of the report drawn as an inline `<svg>` element by plotters'
//! SVG backend. Text is written as SVG `<text>` for the browser to set in
//! its own sans-serif: without plotters' `ttf` feature no font file is read
//! and plotters only estimates a label's size to lay out the axes.

use std::error::Error;

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use ticket_issuer_core::evidence::{Plot, PlotKind, Series};

/// The drawing's size in pixels (the page scales it down to its width).
const SIZE: (u32, u32) = (900, 380);

/// The series' colours, in order (the first is the observed one).
const COLOURS: [RGBColor; 4] = [
    RGBColor(0x4c, 0x72, 0xb0),
    RGBColor(0xdd, 0x84, 0x52),
    RGBColor(0x55, 0xa8, 0x68),
    RGBColor(0x81, 0x72, 0xb3),
];

/// Share of the y span left free above the data for the legend.
const LEGEND_ROOM: f64 = 0.25;

/// An axis: numbers, ticks where plotters puts them or at given values,
/// or the names of categories at 0, 1, 2, …
struct Axis<'a> {
    range: RangedCoordf64,
    /// The ticks, when not plotters' own.
    ticks: Option<Vec<f64>>,
    /// The categories' names (empty: the axis shows numbers).
    names: &'a [String],
    /// Values are drawn at log10(1 + value) (counts whose tails matter);
    /// ticks are labelled with the values.
    log: bool,
}

impl<'a> Axis<'a> {
    /// Numbers over `range`, ticked where plotters chooses.
    fn numbers((lo, hi): (f64, f64)) -> Axis<'a> {
        Axis {
            range: (lo..hi).into(),
            ticks: None,
            names: &[],
            log: false,
        }
    }

    /// Counts up to `max` drawn at log10(1 + count) over `range` (already
    /// in that scale), ticked at 0, 1, 10, 100, …
    fn log_counts((lo, hi): (f64, f64), max: f64) -> Axis<'a> {
        let mut ticks = vec![0.0];
        let mut v = 1.0;
        while v <= max * 10.0 && ticks.len() < 12 {
            ticks.push((1.0 + v).log10());
            v *= 10.0;
        }
        Axis {
            range: (lo..hi).into(),
            ticks: Some(ticks),
            names: &[],
            log: true,
        }
    }

    /// Categories `names` at 0, 1, 2, … over `range`, a tick under each.
    fn categories((lo, hi): (f64, f64), names: &'a [String]) -> Axis<'a> {
        Axis {
            range: (lo..hi).into(),
            ticks: Some((0..names.len()).map(|i| i as f64).collect()),
            names,
            log: false,
        }
    }
}

impl Ranged for Axis<'_> {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match &self.ticks {
            Some(ticks) => ticks.clone(),
            None => self.range.key_points(hint),
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.range()
    }
}

impl ValueFormatter<f64> for Axis<'_> {
    fn format_ext(&self, value: &f64) -> String {
        if self.log {
            return number((10f64.powf(*value) - 1.0).round());
        }
        if self.names.is_empty() {
            return number(*value);
        }
        let i = value.round();
        match self.names.get(i as usize) {
            Some(name) if i >= 0.0 => name.clone(),
            _ => String::new(),
        }
    }
}

/// A tick's value: at most six decimals, no trailing zero.
fn number(value: f64) -> String {
    let text = format!("{value:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    match text {
        "-0" => "0".into(),
        t => t.into(),
    }
}

/// The chart every plot is drawn on.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Axis<'a>, Axis<'a>>>;

/// `plot` as an `<svg>` element.
pub(crate) fn svg(plot: &Plot) -> Result<String, Box<dyn Error>> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root, plot)?;
        root.present()?;
    }
    Ok(out)
}

/// A point to draw, with its band (low, high) if it has one.
#[derive(Clone, Copy)]
struct Point {
    at: (f64, f64),
    band: Option<[f64; 2]>,
}

/// A series' finite points, moved by `dodge` along x (a NaN or infinite
/// figure is not drawn).
fn points(series: &Series, dodge: f64) -> Vec<Point> {
    series
        .points
        .iter()
        .enumerate()
        .filter(|(_, [x, y])| x.is_finite() && y.is_finite())
        .map(|(i, &[x, y])| {
            let band = series
                .band
                .get(i)
                .copied()
                .filter(|[lo, hi]| lo.is_finite() && hi.is_finite());
            Point {
                at: (x + dodge, y),
                band,
            }
        })
        .collect()
}

/// The smallest and largest of `values`, if any.
fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// `(lo, hi)` widened by `share` of its span on each side, or by a unit
/// around a single value.
fn padded((lo, hi): (f64, f64), share: f64) -> (f64, f64) {
    let span = hi - lo;
    if span > 0.0 {
        (lo - share * span, hi + share * span)
    } else {
        let pad = (lo.abs() * 0.1).max(0.5);
        (lo - pad, hi + pad)
    }
}

/// Draws `plot` on `root`.
fn draw(root: &DrawingArea<SVGBackend<'_>, Shift>, plot: &Plot) -> Result<(), Box<dyn Error>> {
    let categories = &plot.x_categories;
    // Points of several series at the same category are set side by side,
    // so an estimate and its band do not hide the figure found.
    let dodge = |k: usize| {
        if categories.is_empty() || plot.kind != PlotKind::Points || plot.series.len() < 2 {
            0.0
        } else {
            (k as f64 - (plot.series.len() - 1) as f64 / 2.0) * 0.15
        }
    };
    let mut series: Vec<_> = plot
        .series
        .iter()
        .enumerate()
        .map(|(k, s)| (s, points(s, dodge(k))))
        .collect();
    let bars = plot.kind == PlotKind::Bars;
    // Counts spanning three orders of magnitude or more are drawn on a log
    // scale: on a linear one the 100 € and 10,000 € tails are flat.
    let log_max = log_scale(&series, bars);
    if log_max.is_some() {
        let scaled = |y: f64| (1.0 + y.max(0.0)).log10();
        for (_, pts) in &mut series {
            for p in pts.iter_mut() {
                p.at.1 = scaled(p.at.1);
                p.band = p.band.map(|[lo, hi]| [scaled(lo), scaled(hi)]);
            }
        }
    }
    let all = || series.iter().flat_map(|(_, p)| p);

    let xs = extent(all().map(|p| p.at.0));
    // Bars stand at steps of x (one per bin), 0.8 of a step wide.
    let step = series.first().map_or(1.0, |(_, first)| {
        smallest_step(first.iter().map(|p| p.at.0))
    });
    let (x_lo, x_hi) = if !categories.is_empty() {
        let last = xs
            .map_or(0.0, |(_, hi)| hi.round())
            .max(categories.len() as f64 - 1.0);
        (-0.5, last + 0.5)
    } else {
        match xs {
            None => (0.0, 1.0),
            Some((lo, hi)) if bars => (lo - step / 2.0, hi + step / 2.0),
            Some(x) => padded(x, 0.03),
        }
    };
    let ys = extent(
        all()
            .flat_map(|p| std::iter::once(p.at.1).chain(p.band.into_iter().flatten()))
            .chain(plot.lines.iter().map(|(_, y)| *y)),
    );
    let (y_lo, y_hi) = match ys {
        None => (0.0, 1.0),
        Some((lo, hi)) if bars => (lo.min(0.0), hi.max(0.0)),
        Some(y) => padded(y, 0.05),
    };
    let y_hi = y_hi + LEGEND_ROOM * (y_hi - y_lo).max(f64::MIN_POSITIVE);

    let x_axis = if categories.is_empty() {
        Axis::numbers((x_lo, x_hi))
    } else {
        Axis::categories((x_lo, x_hi), categories)
    };
    let mut y_axis = match log_max {
        Some(max) => Axis::log_counts((y_lo, y_hi), max),
        None => Axis::numbers((y_lo, y_hi)),
    };
    let y_label = match log_max {
        Some(_) => format!("{} (log scale)", plot.y_label),
        None => plot.y_label.clone(),
    };
    // Points at a few whole values (a block's number) are ticked at those.
    if let Some((lo, hi)) = ys.filter(|_| plot.kind == PlotKind::Points) {
        let whole = all().all(|p| p.at.1.fract() == 0.0 && p.band.is_none());
        if whole && hi - lo <= 20.0 {
            y_axis.ticks = Some((lo as i64..=hi as i64).map(|y| y as f64).collect());
        }
    }
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(x_axis, y_axis)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
        .light_line_style(WHITE)
        .x_desc(plot.x_label.as_str())
        .y_desc(y_label.as_str())
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()?;

    for (k, (s, pts)) in series.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let name = s.name.as_str();
        if bars && k == 0 {
            let half = 0.4 * step;
            chart
                .draw_series(pts.iter().map(|Point { at: (x, y), .. }| {
                    Rectangle::new([(x - half, 0.0), (x + half, *y)], colour.mix(0.75).filled())
                }))?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled())
                });
        } else if plot.kind == PlotKind::Points {
            chart
                .draw_series(pts.iter().map(|p| Circle::new(p.at, 3, colour.filled())))?
                .label(name)
                .legend(move |(x, y)| Circle::new((x + 7, y), 3, colour.filled()));
        } else {
            let line = colour.stroke_width(2);
            chart
                .draw_series(LineSeries::new(pts.iter().map(|p| p.at), line))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], line));
            // A few points of a line over bars are marked, to be read one by one.
            if bars && pts.len() <= 30 {
                chart.draw_series(pts.iter().map(|p| Circle::new(p.at, 3, colour.filled())))?;
            }
        }
        draw_band(&mut chart, plot.kind, pts, colour)?;
    }
    // The bands a figure is judged against, as lines across the plot.
    for (name, y) in &plot.lines {
        let line = RGBColor(0xc0, 0x39, 0x2b).stroke_width(1);
        chart
            .draw_series(LineSeries::new(vec![(x_lo, *y), (x_hi, *y)], line))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], line));
    }
    if ys.is_none() {
        chart.draw_series(std::iter::once(Text::new(
            "no point to draw",
            ((x_lo + x_hi) / 2.0, (y_lo + y_hi) / 2.0),
            ("sans-serif", 16)
                .into_font()
                .color(&RGBColor(0x88, 0x88, 0x88)),
        )))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(0xbb, 0xbb, 0xbb))
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

/// The largest count when `series` are counts (`bars`, none negative)
/// whose positive values span three orders of magnitude or more: then
/// they are drawn on a log scale.
fn log_scale(series: &[(&Series, Vec<Point>)], bars: bool) -> Option<f64> {
    if !bars {
        return None;
    }
    let ys = || series.iter().flat_map(|(_, p)| p.iter().map(|p| p.at.1));
    if ys().any(|y| y < 0.0) {
        return None;
    }
    let max = ys().fold(0.0, f64::max);
    let min = ys().filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min);
    (min.is_finite() && max / min >= 1000.0).then_some(max)
}

/// The smallest step between two of `xs`, or 1 (a single x).
fn smallest_step(xs: impl Iterator<Item = f64>) -> f64 {
    let mut xs: Vec<f64> = xs.collect();
    xs.sort_by(f64::total_cmp);
    let step = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    if step.is_finite() {
        step
    } else {
        1.0
    }
}

/// A series' band: an area along a line, error bars on points and bars.
fn draw_band(
    chart: &mut Chart<'_, '_>,
    kind: PlotKind,
    pts: &[Point],
    colour: RGBColor,
) -> Result<(), Box<dyn Error>> {
    let banded: Vec<(f64, f64, [f64; 2])> = pts
        .iter()
        .filter_map(|p| p.band.map(|b| (p.at.0, p.at.1, b)))
        .collect();
    if banded.is_empty() {
        return Ok(());
    }
    if kind == PlotKind::Lines {
        let outline = banded
            .iter()
            .map(|(x, _, [lo, _])| (*x, *lo))
            .chain(banded.iter().rev().map(|(x, _, [_, hi])| (*x, *hi)));
        chart.draw_series(std::iter::once(Polygon::new(
            outline.collect::<Vec<_>>(),
            colour.mix(0.2).filled(),
        )))?;
    } else {
        chart.draw_series(banded.iter().map(|(x, y, [lo, hi])| {
            ErrorBar::new_vertical(*x, *lo, *y, *hi, colour.stroke_width(1), 10)
        }))?;
    }
    Ok(())
}
