//! Callers' keys and what their roles allow, below the servers: names,
//! digests, revocation, a sub-agent's staged writes and its policy.

use serde_json::json;
use somnus::protocol::Request;
use somnus::server::gate;
use somnus::store::keys::{self, Identity, Role};

fn scout() -> Identity {
    Identity {
        name: "scout".into(),
        role: Role::Subagent,
    }
}

#[test]
fn keys_are_named_digested_unique_and_revocable() {
    let nx = somnus::demo::in_memory().expect("demo");
    let c = nx.connection_for_checks();
    let k = keys::add(c, "scout", Role::Subagent, "test").expect("add");
    assert!(k.starts_with("smk_") && k.len() > 40, "{k}");
    // only the digest is kept
    let stored: String = c
        .query_row(
            "SELECT digest FROM api_keys WHERE name = 'scout'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_ne!(stored, k);
    assert_eq!(keys::lookup(c, &k).expect("lookup"), Some(scout()));
    assert_eq!(keys::lookup(c, "smk_other").expect("lookup"), None);
    // names: unique, never reserved, never odd
    for bad in [
        "scout", "operator", "$self", "$system", "Operator", "", "a b", "x\ny",
    ] {
        assert!(keys::add(c, bad, Role::Agent, "test").is_err(), "{bad:?}");
    }
    // revoked: refused at once, and the name stays taken
    keys::revoke(c, "scout").expect("revoke");
    assert_eq!(keys::lookup(c, &k).expect("lookup"), None);
    assert!(keys::revoke(c, "scout").is_err());
    assert!(keys::add(c, "scout", Role::Agent, "test").is_err());
    assert!(!keys::any_active(c).expect("any"));
}

#[test]
fn a_subagents_writes_wait_for_review_unless_its_policy_is_auto() {
    let mut nx = somnus::demo::in_memory().expect("demo");
    let write = |name: &str| {
        let mut r = Request::command("UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} } }");
        r.args.parameters.insert("n".into(), json!(name));
        r
    };
    let count = |nx: &mut somnus::Nexus, name: &str| {
        nx.execute(&Request::readonly(format!(
            "FIND(COUNT(?p)) WHERE {{ ?p {{type: \"Person\"}} FILTER(?p.name == \"{name}\") }}"
        )))
        .to_json()["result"]
            .clone()
    };
    assert!(gate::stages(&write("A"), &scout()));
    let r = gate::stage(&mut nx, &write("Staged One"), &scout()).to_json();
    assert_eq!(r["result"]["staged"], json!(true), "{r}");
    assert_eq!(r["result"]["status"], json!("pending"), "{r}");
    assert_eq!(count(&mut nx, "Staged One"), json!(0));
    // the same write again is not proposed twice
    let r = gate::stage(&mut nx, &write("Staged One"), &scout()).to_json();
    assert_eq!(r["result"]["staged"], json!(false), "{r}");
    assert!(
        r["result"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("already proposed"),
        "{r}"
    );
    // a batch: reads answer now, writes are staged into one proposal
    let mut batch = Request::command("x");
    batch.args.command = None;
    batch.args.commands = Some(vec![
        somnus::protocol::CommandItem::Text(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"B1\"} } }".into(),
        ),
        somnus::protocol::CommandItem::Text(
            "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }".into(),
        ),
        somnus::protocol::CommandItem::Text(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"B2\"} } }".into(),
        ),
    ]);
    let r = gate::stage(&mut nx, &batch, &scout()).to_json();
    let v = r["result"].as_array().expect("batch");
    assert_eq!(
        v[0]["result"]["proposal"], v[2]["result"]["proposal"],
        "{r}"
    );
    assert!(v[1]["result"].as_i64().is_some_and(|n| n > 0), "{r}");
    // auto: applied at once, still recorded as proposed and approved by policy
    somnus::sleep::proposals::set_policy(&nx, "subagent:scout", "auto", "test").expect("policy");
    let r = gate::stage(&mut nx, &write("Auto One"), &scout()).to_json();
    assert_eq!(r["result"]["status"], json!("applied"), "{r}");
    assert_eq!(count(&mut nx, "Auto One"), json!(1));
    let pid = r["result"]["proposal"].as_i64().expect("id");
    let p = somnus::sleep::proposals::get(&nx, pid)
        .expect("get")
        .expect("p");
    assert_eq!(p.actor, "scout");
    assert_eq!(p.items[0].decided_by.as_deref(), Some("policy"));
    // a policy for a name that can't be a key is refused
    assert!(somnus::sleep::proposals::set_policy(&nx, "subagent:$self", "auto", "t").is_err());
}
