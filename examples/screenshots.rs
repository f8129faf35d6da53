//! Renders every console pane headlessly (ratatui TestBackend), draws each
//! buffer as SVG and rasterises it to `screenshots/*.png` with resvg.
//!
//!     cargo run --release --example screenshots

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use ratatui::style::{Color, Modifier};
use somnus::tui::app::{App, Runner};
use std::collections::VecDeque;
use std::fmt::Write as _;

const W: u16 = 120;
const H: u16 = 36;
const CW: f32 = 9.0;
const CH: f32 = 18.0;
const BG: &str = "#1d1f21";
const FG: &str = "#d0d0d0";

fn hex(c: Color, default: &str) -> String {
    match c {
        Color::Reset => default.to_string(),
        Color::Black => "#1d1f21".into(),
        Color::Red => "#cc6666".into(),
        Color::Green => "#8abd6f".into(),
        Color::Yellow => "#e0c060".into(),
        Color::Blue => "#81a2be".into(),
        Color::Magenta => "#b294bb".into(),
        Color::Cyan => "#6fc0c0".into(),
        Color::Gray => "#c5c8c6".into(),
        Color::DarkGray => "#707070".into(),
        Color::LightRed => "#ff8080".into(),
        Color::LightGreen => "#b5e890".into(),
        Color::LightYellow => "#f0e0a0".into(),
        Color::LightBlue => "#a0c8f0".into(),
        Color::LightMagenta => "#d8a8e0".into(),
        Color::LightCyan => "#a0e8e8".into(),
        Color::White => "#ffffff".into(),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(_) => default.to_string(),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn svg(buf: &Buffer) -> String {
    let (w, h) = (buf.area.width as f32 * CW, buf.area.height as f32 * CH);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\"><rect width=\"100%\" height=\"100%\" fill=\"{BG}\"/>"
    );
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let c = &buf[(x, y)];
            let mut fg = hex(c.fg, FG);
            let mut bg = hex(c.bg, BG);
            if c.modifier.contains(Modifier::REVERSED) {
                std::mem::swap(&mut fg, &mut bg);
                if bg == BG {
                    bg = FG.into();
                }
            }
            let (px, py) = (x as f32 * CW, y as f32 * CH);
            if bg != BG {
                let _ = write!(
                    s,
                    "<rect x=\"{px}\" y=\"{py}\" width=\"{CW}\" height=\"{CH}\" fill=\"{bg}\"/>"
                );
            }
            let sym = c.symbol();
            if sym.trim().is_empty() {
                continue;
            }
            let weight = if c.modifier.contains(Modifier::BOLD) {
                " font-weight=\"bold\""
            } else {
                ""
            };
            let opacity = if c.modifier.contains(Modifier::DIM) {
                " fill-opacity=\"0.6\""
            } else {
                ""
            };
            let deco = if c.modifier.contains(Modifier::UNDERLINED) {
                " text-decoration=\"underline\""
            } else {
                ""
            };
            let _ = write!(
                s,
                "<text x=\"{px}\" y=\"{}\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"15\" fill=\"{fg}\"{weight}{opacity}{deco}>{}</text>",
                py + 14.0,
                esc(sym)
            );
        }
    }
    s.push_str("</svg>");
    s
}

fn png(buf: &Buffer, path: &str) {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(&svg(buf), &opt).expect("svg");
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("pixmap");
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.save_png(path).expect("write png");
    println!("wrote {path}");
}

fn shot(app: &mut App, name: &str) {
    let mut t = Terminal::new(TestBackend::new(W, H)).expect("terminal");
    t.draw(|f| app.render(f)).expect("draw");
    png(t.backend().buffer(), &format!("screenshots/{name}.png"));
}

fn main() {
    std::fs::create_dir_all("screenshots").expect("screenshots folder");
    let nx = somnus::demo::in_memory().expect("demo memory");
    let mut app = App::new(nx, "demo memory", Runner::Inline(VecDeque::new()));
    app.drain();
    let none = KeyModifiers::NONE;

    app.workbench.set_text("");
    app.type_text("// what happened lately, and is it consolidated yet?\nFIND(?e.name, ?e.attributes.consolidation_status, ?e.attributes.salience_score)\nWHERE {\n  ?e {type: \"Event\"}\n  FILTER(?e.attributes.event_class == \"Conversation\")\n}\nORDER BY ?e.attributes.start_time DESC\nLIMIT 50",
    );
    app.press(KeyCode::F(5), none);
    app.press(KeyCode::F(2), none);
    app.press(KeyCode::Down, none);
    app.press(KeyCode::Down, none);
    shot(&mut app, "query-workbench");

    app.press(KeyCode::Enter, none);
    shot(&mut app, "query-cell-detail");
    app.press(KeyCode::Esc, none);

    app.workbench.set_text("");
    app.type_text("FIND(?d.name, COUNT(?n))\nWHERE {\n  ?d {type: \"Domain\"}\n  (?n, \"belongs_to_domain\", ?d)\n}\nORDER BY COUNT(?n) DESC",
    );
    app.press(KeyCode::F(5), none);
    shot(&mut app, "query-aggregate");

    app.workbench.set_text("");
    app.type_text("FIND(?p.name)\nWHERE {\n  ?p {type: \"Person\"\n}");
    app.press(KeyCode::F(5), none);
    shot(&mut app, "query-error");

    app.press(KeyCode::Char('2'), KeyModifiers::ALT);
    app.type_text("Mira Chen");
    app.press(KeyCode::Enter, none);
    for _ in 0..12 {
        app.press(KeyCode::Down, none);
    }
    shot(&mut app, "graph-explorer");
    app.press(KeyCode::Char('/'), none);
    for _ in 0.."Mira Chen".len() {
        app.press(KeyCode::Backspace, none);
    }
    app.type_text("Postgres");
    app.press(KeyCode::Enter, none);
    app.press(KeyCode::Char('m'), none);
    app.type_text("Topic:PostgreSQL\n");
    shot(&mut app, "graph-why-not-merged");
    app.press(KeyCode::Esc, none);

    app.press(KeyCode::Char('3'), KeyModifiers::ALT);
    app.press(KeyCode::Down, none);
    app.press(KeyCode::Down, none);
    app.press(KeyCode::Down, none);
    app.press(KeyCode::Down, none);
    shot(&mut app, "schema");

    // two earlier nights' daydreams give the health trend its history
    for night in ["2026-11-12T03:00:00Z", "2026-11-16T03:00:00Z"] {
        app.with_nexus(|nx| {
            somnus::sleep::run(
                nx,
                &somnus::sleep::Options::new(somnus::sleep::Scope::Daydream, night),
                &mut somnus::sleep::Heuristic,
                None,
                None,
            )
            .expect("daydream");
        });
    }
    // a full sleep cycle from the Sleep pane, then its proposal for review
    app.press(KeyCode::Char('6'), KeyModifiers::ALT);
    app.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    app.press(KeyCode::Char('s'), none);
    shot(&mut app, "sleep");
    app.press(KeyCode::Char('p'), none);
    app.press(KeyCode::Enter, none);
    app.type_text("5\n");
    shot(&mut app, "sleep-parameters");
    app.press(KeyCode::Char('d'), none);
    app.press(KeyCode::Esc, none);

    app.press(KeyCode::Char('4'), KeyModifiers::ALT);
    for _ in 0..36 {
        app.press(KeyCode::Down, none);
    }
    app.press(KeyCode::Char(' '), none);
    shot(&mut app, "reflections");
    // rewrite an item's KIP before approving it: file "Vinyl records"
    // under Work instead of where the cycle put it
    let vinyl = app.reflections.proposals[0]
        .items
        .iter()
        .position(|i| i.title.contains("Vinyl records"))
        .unwrap_or(0);
    app.press(KeyCode::Home, none);
    for _ in 0..vinyl {
        app.press(KeyCode::Down, none);
    }
    app.press(KeyCode::Char('e'), none);
    app.press(KeyCode::Down, none);
    app.press(KeyCode::Down, none);
    app.press(KeyCode::End, none);
    for _ in 0..":domain})".len() {
        app.press(KeyCode::Backspace, none);
    }
    app.type_text("\"Work\"})");
    shot(&mut app, "reflections-edit");
    app.press(KeyCode::Char('s'), KeyModifiers::CONTROL);
    app.press(KeyCode::Char(' '), none);
    app.press(KeyCode::Char('a'), none);
    app.press(KeyCode::Char('y'), none);

    app.press(KeyCode::Char('5'), KeyModifiers::ALT);
    app.press(KeyCode::Down, none);
    shot(&mut app, "conflicts");

    // two sub-agents propose where one person works: staged, and marked
    app.with_nexus(|nx| {
        for (who, org, why) in [
            ("researcher", "Northwind", "her email signature says Northwind"),
            ("scheduler", "Acme Labs", "the calendar invite came from Acme Labs"),
        ] {
            let mut req = somnus::protocol::Request::command(
                "UPSERT { CONCEPT ?o { {type: \"Organization\", name: :org} } CONCEPT ?p { {type: \"Person\", name: \"Ines Duarte\"} SET ATTRIBUTES { role: \"vendor contact\" } SET PROPOSITIONS { (\"works_at\", ?o) } } }",
            );
            req.args.parameters.insert("org".into(), serde_json::json!(org));
            req.args.reason = Some(why.into());
            let id = somnus::store::keys::Identity {
                name: who.into(),
                role: somnus::store::keys::Role::Subagent,
            };
            somnus::server::gate::stage(nx, &req, &id);
        }
    });
    app.press(KeyCode::Char('4'), KeyModifiers::ALT);
    app.press(KeyCode::Char('r'), none);
    shot(&mut app, "reflections-subagent");

    app.health.clock = Some("2026-11-20T09:00:00Z".into());
    app.press(KeyCode::Char('7'), KeyModifiers::ALT);
    for _ in 0..2 {
        app.press(KeyCode::Down, none);
    }
    shot(&mut app, "health");

    app.press(KeyCode::Char('8'), KeyModifiers::ALT);
    app.press(KeyCode::Enter, none);
    shot(&mut app, "audit");
    app.press(KeyCode::Esc, none);

    // agents' requests, as a server logs them, in the live traffic
    app.with_nexus(|nx| {
        let asks = [
            ("scout", r#"FIND(?p.name) WHERE { ?p {type: "Person"} FILTER(?p.name == :name) }"#, serde_json::json!({"name": "Mira Chen"})),
            ("scout", r#"SEARCH CONCEPT "hiking" LIMIT 5"#, serde_json::json!({})),
            ("planner", r#"FIND(?e.name) WHERE { ?e {type: "Event"} } ORDER BY ?e.name LIMIT 10"#, serde_json::json!({})),
            ("planner", "FIND(?x.name WHERE", serde_json::json!({})),
            ("scout", r#"FIND(?pred, ?o.name) WHERE { ?l ({type: "Person", name: "Mira Chen"}, ?pred, ?o) } LIMIT 50"#, serde_json::json!({})),
        ];
        for (i, (caller, command, params)) in asks.iter().enumerate() {
            let mut req = somnus::protocol::Request::command(*command);
            req.args.parameters = params.as_object().cloned().unwrap_or_default();
            req.actor.id = caller.to_string();
            let (_, served) = nx.execute_served(&req);
            let at = format!("2026-11-20T09:1{i}:04.000Z");
            let mut logged = somnus::audit::reads::Logged::all(served, caller, "http", &at);
            for l in &mut logged {
                l.served.micros = 180 + 240 * i as u64;
            }
            nx.record_reads(&logged).expect("logged");
        }
    });
    app.press(KeyCode::Char('9'), KeyModifiers::ALT);
    shot(&mut app, "traffic");

    app.press(KeyCode::F(1), none);
    shot(&mut app, "help");
    app.press(KeyCode::Esc, none);
    app.press(KeyCode::Char('p'), KeyModifiers::CONTROL);
    app.type_text("exp");
    shot(&mut app, "palette");
    // an Engram store brought in from the palette: its report
    app.press(KeyCode::Esc, none);
    app.press(KeyCode::Char('p'), KeyModifiers::CONTROL);
    app.type_text("Import a memory");
    app.press(KeyCode::Enter, none);
    app.type_text("engram tests/data/engram\n");
    shot(&mut app, "import-report");
}
