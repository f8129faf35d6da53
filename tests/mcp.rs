//! `somnus mcp` driven by an MCP client no one here wrote: the official
//! Python SDK (`pip install mcp`). Ignored by default because it needs that
//! package; `.ci/run` installs it and runs this test.

use std::process::Command;

#[test]
#[ignore = "needs the Python `mcp` package (pip install mcp); .ci/run installs it and runs this"]
fn python_mcp_client_round_trip() {
    let dir = std::env::temp_dir().join(format!("somnus-mcp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");
    let out = Command::new("python3")
        .args([script, env!("CARGO_BIN_EXE_somnus"), &db.to_string_lossy()])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("mcp round trip ok"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // the agent's write is attributed to it
    let nx = somnus::Nexus::open(&db).expect("open");
    let e = nx
        .audit_list(&somnus::audit::Filter {
            limit: 1,
            ..Default::default()
        })
        .expect("audit")
        .remove(0);
    assert_eq!(
        (e.actor.as_str(), e.trigger.as_str()),
        ("agent:python", "mcp")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the Python `mcp` package (pip install mcp); .ci/run installs it and runs this"]
fn python_mcp_client_as_a_subagent() {
    let dir = std::env::temp_dir().join(format!("somnus-mcp-sub-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let db = dir.join("m.db");
    let key = {
        let nx = somnus::Nexus::open(&db).expect("open");
        somnus::store::keys::add(
            nx.connection_for_checks().expect("a SQLite memory"),
            "scout",
            somnus::store::keys::Role::Subagent,
            "test",
        )
        .expect("key")
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");
    let out = Command::new("python3")
        .args([
            script,
            env!("CARGO_BIN_EXE_somnus"),
            &db.to_string_lossy(),
            &key,
        ])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("mcp subagent ok"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // staged as the sub-agent's proposal, with its reason
    let nx = somnus::Nexus::open(&db).expect("open");
    let ps = somnus::review::proposals::list(&nx, None, 10).expect("list");
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].actor, "scout");
    assert_eq!(
        ps[0].items[0].rationale,
        "a new kind of thing the scout keeps meeting"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
