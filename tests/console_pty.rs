//! The real binary in a pseudo-terminal: open the demo, run a query, read
//! the answer off the screen, quit, and find the terminal restored.

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn wait_for(parser: &Arc<Mutex<vt100::Parser>>, what: &str, secs: u64) -> String {
    let start = Instant::now();
    loop {
        let screen = parser
            .lock()
            .map(|p| p.screen().contents())
            .unwrap_or_default();
        if screen.contains(what) {
            return screen;
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what:?}; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn demo_console_in_a_real_terminal() {
    let dir = std::env::temp_dir().join(format!("somnus-pty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("demo.db");

    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 30,
            cols: 110,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("pty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_somnus"));
    cmd.args(["--db", &db.to_string_lossy(), "demo"]);
    cmd.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut writer = pair.master.take_writer().expect("writer");
    let parser = Arc::new(Mutex::new(vt100::Parser::new(
        std::num::NonZeroU16::new(30).expect("rows"),
        std::num::NonZeroU16::new(110).expect("cols"),
        0,
    )));
    let p2 = parser.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut p) = p2.lock() {
                p.process(&buf[..n]);
            }
        }
    });

    wait_for(&parser, "F5 run", 30);
    assert!(
        parser
            .lock()
            .map(|p| p.screen().alternate_screen())
            .unwrap_or(false),
        "the console uses the alternate screen"
    );
    writer.write_all(b"\x1b[15~").expect("F5"); // run the default query
    writer.flush().expect("flush");
    let screen = wait_for(&parser, "Aiko Tanaka", 15);
    assert!(
        screen.contains("Dr. Elena Vogel") && screen.contains("30 rows"),
        "{screen}"
    );

    writer.write_all(b"\x11").expect("Ctrl+Q");
    writer.flush().expect("flush");
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            assert!(status.success(), "exit status {status:?}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the console did not quit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let p = parser.lock().expect("parser");
    assert!(
        !p.screen().alternate_screen(),
        "the alternate screen was left"
    );
    assert!(!p.screen().hide_cursor(), "the cursor was left hidden");
    let _ = std::fs::remove_dir_all(&dir);
}
