//! The growth plot of `somnus bench --compare`: one panel per workload,
//! median time against memory size on log-log axes, one line per side;
//! drawn as SVG with plotters and rasterised with resvg.

use super::compare::{Comparison, Side, Workload};
use plotters::prelude::*;

const COLOURS: [(Side, RGBColor); 5] = [
    (Side::Somnus, RGBColor(0x1f, 0x8a, 0x70)),
    (Side::Sql, RGBColor(0x44, 0x55, 0xaa)),
    (Side::Reference, RGBColor(0xd9, 0x48, 0x2b)),
    (Side::SomnusPostgres, RGBColor(0x8f, 0xd1, 0x9e)),
    (Side::SqlPostgres, RGBColor(0xa8, 0xb4, 0xe8)),
];

/// The plot as SVG text.
pub fn svg(c: &Comparison) -> Result<String, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (1600, 1300)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (title, body) = root.split_vertically(60);
        title
            .draw(&Text::new(
                "median time per operation against memory size (log-log), one line per side measured",
                (20, 20),
                ("sans-serif", 22).into_font(),
            ))
            .map_err(|e| e.to_string())?;
        let panels = body.split_evenly((4, 4));
        let (lo_n, hi_n) = (
            *c.sizes.iter().min().unwrap_or(&1) as f64,
            *c.sizes.iter().max().unwrap_or(&10) as f64,
        );
        for (w, area) in Workload::ALL.iter().zip(panels.iter()) {
            let points = |side: Side| -> Vec<(f64, f64)> {
                let mut v: Vec<(f64, f64)> = c
                    .measures
                    .iter()
                    .filter(|m| m.workload == *w && m.side == side)
                    .map(|m| (m.n as f64, m.median.as_secs_f64() * 1e6))
                    .collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0));
                v
            };
            let all: Vec<f64> = COLOURS
                .iter()
                .flat_map(|(s, _)| points(*s))
                .map(|p| p.1)
                .collect();
            if all.is_empty() {
                continue;
            }
            let lo = all.iter().copied().fold(f64::INFINITY, f64::min).max(0.1) / 2.0;
            let hi = all.iter().copied().fold(0.0, f64::max) * 2.0;
            let mut chart = ChartBuilder::on(area)
                .caption(w.label().replace(['`'], ""), ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(28)
                .y_label_area_size(60)
                .build_cartesian_2d((lo_n / 1.5..hi_n * 1.5).log_scale(), (lo..hi).log_scale())
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc("concepts")
                .y_desc("median")
                .x_label_formatter(&|x| {
                    if *x >= 1e6 {
                        format!("{:.0}M", x / 1e6)
                    } else if *x >= 1e3 {
                        format!("{:.0}k", x / 1e3)
                    } else {
                        format!("{x:.0}")
                    }
                })
                .y_label_formatter(&|y| {
                    // 1, 2 and 5 of each decade: the others crowd a log axis
                    let lead = *y / 10f64.powf(y.log10().floor());
                    if ![1.0, 2.0, 5.0].iter().any(|d| (lead - d).abs() < 1e-6) {
                        String::new()
                    } else if *y >= 1e6 {
                        format!("{:.0} s", y / 1e6)
                    } else if *y >= 1e3 {
                        format!("{:.0} ms", y / 1e3)
                    } else {
                        format!("{y:.0} µs")
                    }
                })
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(|e| e.to_string())?;
            for (side, colour) in COLOURS {
                let p = points(side);
                if p.is_empty() {
                    continue;
                }
                chart
                    .draw_series(LineSeries::new(p.clone(), colour.stroke_width(2)))
                    .map_err(|e| e.to_string())?;
                chart
                    .draw_series(
                        p.iter()
                            .map(|&(x, y)| Circle::new((x, y), 4, colour.filled())),
                    )
                    .map_err(|e| e.to_string())?;
            }
        }
        // the legend in the first free panel, where it hides no point
        if let Some(area) = panels.get(Workload::ALL.len()) {
            // the sides this comparison measured, no others
            let measured = COLOURS
                .iter()
                .filter(|(side, _)| c.measures.iter().any(|m| m.side == *side));
            for (i, (side, colour)) in measured.enumerate() {
                let y = 60 + 32 * i as i32;
                area.draw(&PathElement::new(
                    vec![(40, y), (80, y)],
                    colour.stroke_width(3),
                ))
                .map_err(|e| e.to_string())?;
                area.draw(&Circle::new((60, y), 5, colour.filled()))
                    .map_err(|e| e.to_string())?;
                let label = match side {
                    Side::Reference => "reference engine (anda_cognitive_nexus 0.11.0, in memory)",
                    Side::Sql => "hand-written SQL on the same SQLite file",
                    Side::Somnus => "somnus",
                    Side::SomnusPostgres => "somnus on PostgreSQL",
                    Side::SqlPostgres => "hand-written SQL on the same PostgreSQL memory",
                };
                area.draw(&Text::new(
                    label,
                    (92, y - 8),
                    ("sans-serif", 15).into_font(),
                ))
                .map_err(|e| e.to_string())?;
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

/// The plot as PNG bytes.
pub fn png(svg: &str) -> Result<Vec<u8>, String> {
    let mut opt = resvg::usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_system_fonts();
    // the generic families default to Arial and friends, which a Linux
    // machine rarely has
    db.set_sans_serif_family("DejaVu Sans");
    db.set_serif_family("DejaVu Serif");
    db.set_monospace_family("DejaVu Sans Mono");
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("the plot has no size")?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| e.to_string())
}
