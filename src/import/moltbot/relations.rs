//! What says who someone is to the user, from words alone: the roles of
//! family and of others (`Tianshu 太太`, his wife; `Ana's boss`), and the
//! handles a profile gives (`Telegram @ariffazil`). Read by the blocks of
//! `MEMORY.md`, the people lists and the saved conversations alike.

/// What a person's role says when they are of the user's family, in the
/// spaced scripts (a word of the role) and the others (anywhere in it).
const FAMILY_ROLES: &[&str] = &[
    "son",
    "daughter",
    "wife",
    "husband",
    "mother",
    "father",
    "mom",
    "mum",
    "dad",
    "brother",
    "sister",
    "child",
    "kid",
    "partner",
    "spouse",
    "girlfriend",
    "boyfriend",
    "fiancé",
    "fiancée",
    "namorada",
    "namorado",
    "novia",
    "novio",
    "compagne",
    "compagnon",
    "filho",
    "filha",
    "esposa",
    "marido",
    "companheira",
    "companheiro",
    "mãe",
    "pai",
    "irmã",
    "irmão",
    "hijo",
    "hija",
    "esposo",
    "madre",
    "padre",
    "hermano",
    "hermana",
    "pareja",
    "sohn",
    "tochter",
    "ehefrau",
    "ehemann",
    "mutter",
    "vater",
    "bruder",
    "schwester",
    "lebensgefährtin",
    "lebensgefährte",
    "fils",
    "fille",
    "femme",
    "mari",
    "mère",
    "père",
    "frère",
    "sœur",
    "figlio",
    "figlia",
    "moglie",
    "marito",
    "fratello",
    "sorella",
    "сын",
    "дочь",
    "жена",
    "муж",
    "мать",
    "мама",
    "отец",
    "папа",
    "брат",
    "сестра",
];
const FAMILY_PARTS: &[&str] = &[
    "儿子", "女儿", "妻子", "太太", "丈夫", "老婆", "老公", "妈妈", "爸爸", "母亲", "父亲", "兒子",
    "女兒", "媽媽", "母親", "父親", "息子", "長女", "長男", "次女", "次男", "아들", "딸", "아내",
    "남편", "엄마", "아빠",
];

/// Whether a person's role says they are of the user's family (`Filho`,
/// `Tochter von Mitch`, `妻子`).
pub(super) fn family_role(role: &str) -> bool {
    super::says_any(role, FAMILY_ROLES, FAMILY_PARTS)
}

/// What someone is to the user besides family, in the spaced scripts (a
/// word) and the others (anywhere in it).
const OTHER_ROLES: &[&str] = &[
    "colleague",
    "coworker",
    "friend",
    "boss",
    "client",
    "kollege",
    "kollegin",
    "freund",
    "freundin",
    "collègue",
    "ami",
    "amie",
    "colega",
    "amigo",
    "amiga",
    "collega",
    "коллега",
    "друг",
    "подруга",
];
const OTHER_PARTS: &[&str] = &[
    "同事", "朋友", "老板", "客户", "同学", "同學", "上司", "同僚", "部下", "동료", "친구",
];

/// Whether a title says what someone is to the user (`Tianshu 太太`, his
/// wife; `Tianshu 同事`, a colleague; `Ana's boss`): it is about that
/// person, whoever else it names.
pub(super) fn names_a_relation(title: &str) -> bool {
    family_role(title) || super::says_any(title, OTHER_ROLES, OTHER_PARTS)
}

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
