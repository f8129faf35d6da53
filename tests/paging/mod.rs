//! Paging through a FIND as the sleep cycle and agents do, on any
//! backend: each page starts after the last row of the one before.

use base64::Engine;
use serde_json::Value;
use somnus::Nexus;
use somnus::protocol::Outcome;

fn ok(nx: &mut Nexus, cmd: &str) -> Value {
    match nx.kip(cmd) {
        Outcome::Ok { result, .. } => result,
        Outcome::Err(e) => panic!("{cmd}\n→ {} {}", e.code, e.message),
    }
}

/// A page's names and its next cursor.
fn page(nx: &mut Nexus, cmd: &str) -> (Vec<String>, Option<String>) {
    match nx.kip(cmd) {
        Outcome::Ok {
            result,
            next_cursor,
            ..
        } => (
            result
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect(),
            next_cursor,
        ),
        Outcome::Err(e) => panic!("{cmd}\n→ {} {}", e.code, e.message),
    }
}

fn names(range: std::ops::Range<usize>, skip: &[usize]) -> Vec<String> {
    range
        .filter(|i| !skip.contains(i))
        .map(|i| format!("k{i:02}"))
        .collect()
}

/// 25 Kits, each paired with the hub. A row deleted before the cursor
/// and one written after it neither skip nor repeat a row of the next
/// pages; a link query pages in the order of its whole answer; a token
/// of the offset-only form still reads its page.
pub fn pages_start_after_the_last_row(nx: &mut Nexus) {
    ok(
        nx,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Kit"} } CONCEPT ?p { {type: "$PropositionType", name: "pairs_with"} } }"#,
    );
    ok(
        nx,
        r#"UPSERT { CONCEPT ?h { {type: "Kit", name: "hub"} } }"#,
    );
    for i in 0..25 {
        ok(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?k {{ {{type: "Kit", name: "k{i:02}"}} SET PROPOSITIONS {{ ("pairs_with", {{type: "Kit", name: "hub"}}) }} }} }}"#
            ),
        );
    }
    let q = r#"FIND(?k.name) WHERE { ?k {type: "Kit"} FILTER(?k.name != "hub") } LIMIT 10"#;
    let (first, c1) = page(nx, q);
    assert_eq!(first, names(0..10, &[]));
    let c1 = c1.expect("a second page");
    // an earlier row goes, a later one comes
    ok(
        nx,
        r#"DELETE CONCEPT ?k DETACH WHERE { ?k {type: "Kit", name: "k03"} }"#,
    );
    ok(
        nx,
        r#"UPSERT { CONCEPT ?k { {type: "Kit", name: "k25"} } }"#,
    );
    let (second, c2) = page(nx, &format!(r#"{q} CURSOR "{c1}""#));
    assert_eq!(second, names(10..20, &[]), "no row skipped");
    let (third, c3) = page(
        nx,
        &format!(r#"{q} CURSOR "{}""#, c2.expect("a third page")),
    );
    assert_eq!(third, names(20..26, &[]));
    assert_eq!(c3, None);

    // two variables: the pages are the whole answer, in its order
    let links = r#"FIND(?l, ?k.name) WHERE { ?l (?k, "pairs_with", {type: "Kit", name: "hub"}) }"#;
    let whole = ok(nx, links);
    let mut paged: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let cmd = match &cursor {
            Some(c) => format!(r#"{links} LIMIT 7 CURSOR "{c}""#),
            None => format!("{links} LIMIT 7"),
        };
        let Outcome::Ok {
            result,
            next_cursor,
            ..
        } = nx.kip(&cmd)
        else {
            panic!("{cmd}");
        };
        paged.extend(result[1].as_array().cloned().unwrap_or_default());
        match next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(Value::Array(paged), whole[1]);
    assert_eq!(whole[1].as_array().map(Vec::len), Some(24));

    // a token of the offset-only form reads from its offset
    let old = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("somnus:20");
    let (rest, _) = page(nx, &format!(r#"{q} CURSOR "{old}""#));
    assert_eq!(rest, names(21..26, &[3]));
    // a token whose row is of another kind reads from its offset too
    let other = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"somnus:20:["x"]"#);
    let (rest, _) = page(nx, &format!(r#"{q} CURSOR "{other}""#));
    assert_eq!(rest, names(21..26, &[3]));
    // and a broken one is refused, naming the cursor
    let broken = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("somnus:20:[1,");
    match nx.kip(&format!(r#"{q} CURSOR "{broken}""#)) {
        Outcome::Err(e) => assert!(e.message.contains("invalid CURSOR"), "{}", e.message),
        Outcome::Ok { .. } => panic!("a broken cursor was read"),
    }
}
