//! The operator's console: a ratatui application over one `Nexus`.
//! Engine work runs on tokio's blocking pool; results come back as
//! messages, so the render loop never waits on the database.

pub mod app;
pub mod audit;
pub mod component;
pub mod conflicts;
pub mod explorer;
pub mod health;
pub mod highlight;
pub mod jobs;
pub mod reflections;
pub mod results;
pub mod schema;
pub mod sleep;
pub mod theme;
pub mod traffic;
pub mod workbench;

use crate::Nexus;
use app::{App, Runner};
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event,
};
use ratatui::crossterm::execute;
use std::time::Duration;

/// Runs the console until the operator quits. The terminal is restored on
/// every exit, panics included.
pub fn run(nexus: Nexus, label: &str) -> color_eyre::Result<()> {
    let rt = crate::server::runtime(Some(2))?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(
        nexus,
        label,
        Runner::Pool {
            tx,
            handle: rt.handle().clone(),
        },
    );
    let mut terminal = ratatui::init();
    // a panic restores the terminal fully: ratatui's hook leaves raw mode
    // and the alternate screen; mouse reporting and bracketed paste go too
    let ratatui_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(
            std::io::stdout(),
            DisableMouseCapture,
            DisableBracketedPaste
        );
        ratatui_hook(info);
    }));
    let _ = execute!(std::io::stdout(), EnableBracketedPaste);
    let (ev_tx, mut ev_rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    std::thread::spawn(move || {
        while let Ok(ev) = event::read() {
            if ev_tx.send(ev).is_err() {
                break;
            }
        }
    });
    let result: color_eyre::Result<()> = rt.block_on(async {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            if app.redraw {
                app.redraw = false;
                terminal.clear()?;
            }
            terminal.draw(|f| app.render(f))?;
            tokio::select! {
                Some(ev) = ev_rx.recv() => {
                    // every event already waiting is handled before the next
                    // draw: a burst of keys (an unbracketed paste) costs one
                    // frame, and no key is dropped
                    let mut next = Some(ev);
                    while let Some(ev) = next {
                        on_event(&mut app, ev);
                        if app.quit {
                            break;
                        }
                        next = ev_rx.try_recv().ok();
                    }
                }
                Some(out) = rx.recv() => app.on_job(out),
                _ = tick.tick() => app.tick(),
            }
            if app.mouse_changed {
                app.mouse_changed = false;
                if app.mouse {
                    execute!(std::io::stdout(), EnableMouseCapture)?;
                } else {
                    execute!(std::io::stdout(), DisableMouseCapture)?;
                }
            }
            for s in app.copied.drain(..) {
                osc52(&s);
            }
            if app.quit {
                break;
            }
        }
        Ok(())
    });
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste
    );
    ratatui::restore();
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}

/// One terminal event, to the app.
fn on_event(app: &mut App, ev: Event) {
    match ev {
        Event::Key(k) if k.kind == event::KeyEventKind::Press => app.on_key(k),
        Event::Mouse(m) => app.on_mouse(m),
        Event::Paste(s) => app.on_paste(&s),
        _ => {}
    }
}

/// Puts text on the system clipboard through the terminal (OSC 52).
fn osc52(s: &str) {
    use base64::Engine as _;
    use std::io::Write;
    let b64 = base64::engine::general_purpose::STANDARD.encode(s);
    let mut out = std::io::stdout();
    let _ = write!(out, "\x1b]52;c;{b64}\x07");
    let _ = out.flush();
}
