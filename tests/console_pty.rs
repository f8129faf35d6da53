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

/// A chat endpoint that answers every request after `delay` with nothing
/// usable (the reasoner falls back to its heuristic): a sleep cycle on it
/// runs long enough to be interrupted.
fn slow_llm(delay: Duration) -> String {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut len = 0usize;
                let mut line = String::new();
                loop {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0u8; len];
                let _ = reader.read_exact(&mut body);
                std::thread::sleep(delay);
                let out = r#"{"choices":[{"message":{"role":"assistant","content":"{}"}}]}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
                    out.len()
                );
            });
        }
    });
    format!("http://{addr}/v1")
}

/// Quitting while a sleep cycle runs asks first, then cancels the cycle
/// and waits for it: the run is recorded cancelled, never left running.
#[test]
fn quitting_during_a_cycle_asks_and_never_leaves_the_run_running() {
    let dir = std::env::temp_dir().join(format!("somnus-pty-quit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("demo.db");
    let bin = env!("CARGO_BIN_EXE_somnus");
    let url = slow_llm(Duration::from_secs(2));
    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 30,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("pty");
    let mut cmd = CommandBuilder::new(bin);
    cmd.args(["--db", &db.to_string_lossy(), "demo"]);
    cmd.env("TERM", "xterm-256color");
    cmd.env("SOMNUS_LLM_URL", &url);
    cmd.env("SOMNUS_LLM_MODEL", "slow");
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut writer = pair.master.take_writer().expect("writer");
    let parser = Arc::new(Mutex::new(vt100::Parser::new(
        std::num::NonZeroU16::new(30).expect("rows"),
        std::num::NonZeroU16::new(120).expect("cols"),
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
    let mut send = |bytes: &[u8]| {
        writer.write_all(bytes).expect("write");
        writer.flush().expect("flush");
    };
    wait_for(&parser, "F5 run", 30);
    send(b"\x1b6"); // Alt+6: the Sleep pane
    wait_for(&parser, "daydream", 10);
    send(b"m"); // the LLM reasoner
    send(b"s"); // start
    wait_for(&parser, "cycle running", 15);
    send(b"\x11"); // Ctrl+Q
    wait_for(&parser, "Quit the console?", 10);
    send(b"y");
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            assert!(status.success(), "exit status {status:?}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the console did not quit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = std::process::Command::new(bin)
        .arg("--db")
        .arg(&db)
        .arg("runs")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cancelled"), "{text}");
    assert!(!text.contains("running"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
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

    // a bracketed paste with CR line ends (what xterm, VTE and tmux send)
    // keeps its lines
    writer
        .write_all(b"\x1b[200~\r// pasted-one\r// pasted-two\x1b[201~")
        .expect("paste");
    writer.flush().expect("flush");
    let screen = wait_for(&parser, "pasted-two", 15);
    assert!(
        screen
            .lines()
            .any(|l| l.contains("// pasted-two") && !l.contains("pasted-one")),
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
