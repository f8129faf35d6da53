//! A seeded key fuzzer for the console: random keys with random modifiers,
//! pasted Unicode (accents, CJK, emoji, combining marks, right-to-left) and
//! control characters, long lines, and resizes down to a single cell,
//! across every pane. Nothing may panic. `SOMNUS_FUZZ_SEEDS=a..b` and
//! `SOMNUS_FUZZ_STEPS=n` widen the run.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use somnus::tui::app::{App, Runner};
use std::collections::VecDeque;

/// xorshift64*: small, seeded, good enough to pick keys.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

const TEXTS: &[&str] = &[
    "Tomás",
    "é",
    "中",
    "名前",
    "😀",
    "👩‍👩‍👧",
    "e\u{301}",
    "שלום",
    "مرحبا",
    "\u{202e}abc",
    "\"",
    "\"é",
    "{name: \"Tomás\"}",
    "FIND(?p) WHERE { ?p {type: \"Person\"} }",
    "FIND(?x",
    "?",
    ":",
    "\\",
    "\t",
    "\u{0}",
    "\u{1b}[31m",
    "\r\n",
    "//",
    "C:1",
    "Person:Mira Chen",
    " / ",
];

const SPECIAL: &[KeyCode] = &[
    KeyCode::Enter,
    KeyCode::Esc,
    KeyCode::Tab,
    KeyCode::BackTab,
    KeyCode::Backspace,
    KeyCode::Delete,
    KeyCode::Up,
    KeyCode::Down,
    KeyCode::Left,
    KeyCode::Right,
    KeyCode::Home,
    KeyCode::End,
    KeyCode::PageUp,
    KeyCode::PageDown,
    KeyCode::Insert,
];

/// Keys every pane reads (navigation and its actions), typed often so the
/// fuzzer gets deep into each pane.
const PANE_KEYS: &str = "jkgGhl/ wWmoaAxXuUnbcertyYpPdDsSvV?:123456780";

fn app() -> App {
    let nx = somnus::demo::in_memory().expect("demo memory");
    let mut app = App::new(nx, "demo", Runner::Inline(VecDeque::new()));
    app.drain();
    app
}

fn draw(app: &mut App, w: u16, h: u16) {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| app.render(f)).expect("draw");
}

fn one_seed(seed: u64, steps: usize) {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut a = app();
    let (mut w, mut h) = (120u16, 36u16);
    for step in 0..steps {
        let mods = match r.below(10) {
            0 => KeyModifiers::CONTROL,
            1 => KeyModifiers::ALT,
            2 => KeyModifiers::SHIFT,
            _ => KeyModifiers::NONE,
        };
        let what = r.below(100);
        let trace = format!("seed {seed} step {step} ({w}×{h})");
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            match what {
                0..=39 => {
                    let c = PANE_KEYS
                        .chars()
                        .nth(r.below(PANE_KEYS.chars().count()))
                        .unwrap_or('j');
                    a.press(KeyCode::Char(c), mods);
                }
                40..=59 => a.press(*r.pick(SPECIAL), mods),
                60..=64 => a.press(KeyCode::F(1 + r.below(12) as u8), mods),
                65..=79 => {
                    for c in r.pick(TEXTS).chars() {
                        a.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
                    }
                    a.drain();
                }
                80..=84 => {
                    let t = *r.pick(TEXTS);
                    let n = 1 + r.below(300);
                    a.on_paste(&t.repeat(n));
                    a.drain();
                }
                85..=89 => {
                    // a long line typed key by key
                    let t = *r.pick(TEXTS);
                    for c in t.repeat(1 + r.below(80)).chars() {
                        a.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
                    }
                    a.drain();
                }
                90..=94 => {
                    w = 1 + r.below(220) as u16;
                    h = 1 + r.below(70) as u16;
                }
                _ => {
                    // a pane by number
                    let c = char::from(b'1' + r.below(9) as u8);
                    a.press(KeyCode::Char(c), KeyModifiers::ALT);
                }
            }
            a.tick();
            a.drain();
            draw(&mut a, w, h);
        }));
        if let Err(e) = res {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{trace}: the console panicked: {msg}");
        }
        if a.quit {
            // quitting is allowed; carry on in a fresh console
            a = app();
        }
    }
}

fn range(var: &str, default: (u64, u64)) -> (u64, u64) {
    std::env::var(var)
        .ok()
        .and_then(|v| {
            let (a, b) = v.split_once("..")?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or(default)
}

#[test]
fn random_keys_pastes_and_resizes_never_panic() {
    // random keys can export results (`e`, a typed name, Enter): into a
    // directory of their own, never the working tree
    let scratch = std::env::temp_dir().join(format!("somnus-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    std::env::set_current_dir(&scratch).expect("cd scratch");
    let (from, to) = range("SOMNUS_FUZZ_SEEDS", (1, 6));
    let steps = std::env::var("SOMNUS_FUZZ_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    for seed in from..=to {
        one_seed(seed, steps);
    }
}

/// The crash an operator met: End, a quote, then an accented letter.
#[test]
fn an_accent_after_a_quote_is_typed_not_a_crash() {
    let mut a = app();
    a.workbench.set_text("FIND(?p) WHERE { ?p {name: ");
    a.press(KeyCode::End, KeyModifiers::NONE);
    a.type_text("\"é");
    draw(&mut a, 120, 36);
    a.type_text("\"Tomás\"}");
    draw(&mut a, 120, 36);
    a.type_text("\"中😀e\u{301}");
    draw(&mut a, 80, 24);
    assert!(a.workbench.text().ends_with("\"中😀e\u{301}"));
}

/// A 2,000-character paste into the concept finder is one filter pass,
/// and the keys after it still arrive.
#[test]
fn a_long_paste_into_the_finder_keeps_the_keys_after_it() {
    let mut a = app();
    a.press(KeyCode::Char('2'), KeyModifiers::ALT);
    a.on_paste(&"Mira Chen ".repeat(200));
    draw(&mut a, 120, 36);
    // Ctrl+U is not a finder key; Backspace 2,000 times is, and then a name
    for _ in 0..2000 {
        a.on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    }
    a.type_text("Tom Ruiz\n");
    assert_eq!(
        a.explorer.current.as_ref().map(|n| n.name.as_str()),
        Some("Tom Ruiz")
    );
}
