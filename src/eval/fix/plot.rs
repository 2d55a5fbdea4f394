//! A small SVG line chart (no plotting crate): pass@1 against iteration budget, one line per
//! run, in the manner of the LDB paper's Figure 3. The y axis zooms to the data in 5-point steps
//! so small gains stay visible.

use std::fmt::Write;

/// One line: y values at x = 0, 1, 2, ...
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<f64>,
}

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 270.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 56.0;
/// Colour-blind-safe palette (Okabe–Ito), then greys.
const COLORS: &[&str] = &[
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
    "#777777", "#AAAAAA",
];

/// Renders the chart as a standalone SVG document. Point x of a series is drawn at x and
/// labelled `x * x_unit` (1 for iterations; a token step for token budgets).
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_unit: f64,
    series: &[Series],
) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_max = series
        .iter()
        .map(|s| s.points.len().saturating_sub(1))
        .max()
        .unwrap_or(0)
        .max(1);
    let values: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    let (lo, hi) = y_range(&values);
    let x_at = |x: usize| LEFT + plot_w * x as f64 / x_max as f64;
    let y_at = |y: f64| TOP + plot_h * (1.0 - (y - lo) / (hi - lo));

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        LEFT + plot_w / 2.0,
        xml(title)
    );

    // Grid and y ticks.
    let step = y_step(hi - lo);
    let mut tick = lo;
    while tick <= hi + 1e-9 {
        let y = y_at(tick);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/>"##,
            LEFT + plot_w
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{tick:.0}</text>"#,
            LEFT - 8.0,
            y + 4.0
        );
        tick += step;
    }
    // X ticks.
    let x_step = if x_max > 20 {
        5
    } else if x_max > 10 {
        2
    } else {
        1
    };
    for x in (0..=x_max).step_by(x_step) {
        let px = x_at(x);
        let _ = writeln!(
            svg,
            r##"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="#333333"/>"##,
            TOP + plot_h,
            TOP + plot_h + 5.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            TOP + plot_h + 19.0,
            (x as f64 * x_unit).round()
        );
    }
    // Axes and their labels.
    let _ = writeln!(
        svg,
        r##"<path d="M{LEFT},{TOP} V{:.1} H{:.1}" fill="none" stroke="#333333"/>"##,
        TOP + plot_h,
        LEFT + plot_w
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 14.0,
        xml(x_label)
    );
    let _ = writeln!(
        svg,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        xml(y_label)
    );

    if values.is_empty() {
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#777777">no data</text>"##,
            LEFT + plot_w / 2.0,
            TOP + plot_h / 2.0
        );
    }
    for (i, s) in series.iter().enumerate() {
        let color = COLORS.get(i % COLORS.len()).copied().unwrap_or("#000000");
        let points: Vec<(f64, f64)> = s
            .points
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(x, &v)| (x_at(x), y_at(v)))
            .collect();
        if points.len() > 1 {
            let path: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            let _ = writeln!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
                path.join(" ")
            );
        }
        for (x, y) in &points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
            );
        }
        // Legend entry, with the last value.
        let ly = TOP + 10.0 + 20.0 * i as f64;
        let lx = LEFT + plot_w + 20.0;
        let last = s
            .points
            .last()
            .map(|v| format!(" ({v:.1})"))
            .unwrap_or_default();
        let _ = writeln!(
            svg,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"/>"#,
            lx + 22.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 28.0,
            ly + 4.0,
            xml(&format!("{}{last}", shorten(&s.label, 32)))
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The y range: the data's, widened to 5-point steps with some room, within 0..=100.
fn y_range(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 100.0);
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut lo = ((min - 2.0) / 5.0).floor() * 5.0;
    let mut hi = ((max + 2.0) / 5.0).ceil() * 5.0;
    lo = lo.max(0.0);
    hi = hi.min(100.0);
    if hi - lo < 10.0 {
        if hi < 100.0 {
            hi = (lo + 10.0).min(100.0);
        }
        lo = (hi - 10.0).max(0.0);
    }
    (lo, hi)
}

fn y_step(span: f64) -> f64 {
    if span > 60.0 {
        20.0
    } else if span > 30.0 {
        10.0
    } else if span > 15.0 {
        5.0
    } else {
        2.0
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_has_a_line_per_series_and_escapes_labels() {
        let svg = line_chart(
            "t",
            "x",
            "y",
            1.0,
            &[
                Series {
                    label: "a<b>".into(),
                    points: vec![70.0, 75.0, 80.0],
                },
                Series {
                    label: "none".into(),
                    points: vec![70.0],
                },
            ],
        );
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(svg.contains("a&lt;b&gt; (80.0)"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn y_range_zooms_in_steps_of_five() {
        assert_eq!(y_range(&[73.8, 82.9]), (70.0, 85.0));
        assert_eq!(y_range(&[99.0]), (90.0, 100.0));
        assert_eq!(y_range(&[0.0, 1.0]), (0.0, 10.0));
        assert_eq!(y_range(&[]), (0.0, 100.0));
    }
}
