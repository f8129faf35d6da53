//! The cross-engine KIP conformance suite (a copy kept in tests/data), every
//! case including those the reference engine skips.

use somnus::conformance::{collect, run_fixture};
use std::path::PathBuf;

#[test]
fn every_conformance_case_passes() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance");
    let files = collect(&[dir]).expect("fixtures");
    assert_eq!(files.len(), 34, "expected the 34 fixture files");
    let mut failed = Vec::new();
    let mut passed = 0;
    let mut departed = 0;
    for f in files {
        for r in run_fixture(&f).expect("fixture runs") {
            if r.passed {
                passed += 1;
                departed += usize::from(r.departure.is_some());
            } else {
                failed.push(format!("{} :: {}: {}", r.file, r.case, r.detail));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert_eq!(passed, 217);
    // the two cases of kql-clause-independence.json that contradict §3.4
    // are checked against the specification's answer
    assert_eq!(departed, somnus::conformance::DEPARTURES.len());
    assert_eq!(departed, 2);
}
