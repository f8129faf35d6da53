//! What says who someone is to the user, from words alone: the roles of
//! family and of others (`Tianshu 太太`, his wife; `Ana's boss`), and the
//! handles a profile gives (`Telegram @ariffazil`). Read by the blocks of
//! `MEMORY.md`, the people lists and the saved conversations alike.

pub(super) use crate::analysis::relations::{family_role, names_a_relation};

/// The handles a text gives (`Telegram @ariffazil`), lowercase without
/// the `@`; never an address's (`ana@example.com`).
pub(super) fn handles_in(text: &str) -> Vec<String> {
    static HANDLE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = HANDLE.get_or_init(|| {
        regex::Regex::new(r"(?:^|[^\w.@])@([A-Za-z0-9_][A-Za-z0-9_.]{2,31})")
            .expect("the handle pattern")
    });
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(text) {
        let h = c[1].trim_end_matches('.').to_lowercase();
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_never_an_address() {
        assert_eq!(
            handles_in("Alert preference: Telegram @ariffazil. Mail ana@example.com, @Ana_Lima"),
            vec!["ariffazil".to_string(), "ana_lima".to_string()]
        );
        assert!(handles_in("@ab and x@yz and email@host.com").is_empty());
    }

    #[test]
    fn a_title_that_says_what_someone_is_to_the_user() {
        assert!(names_a_relation("+6597777239 (Tianshu 太太)"));
        assert!(names_a_relation("Tianshu 同事 Hchen"));
        assert!(names_a_relation("Ana's boss"));
        assert!(!names_a_relation("About Arif (Permanent Facts)"));
        assert!(!names_a_relation("Talbot's preferences"));
    }
}
