//! Who someone is to the one a text is about, from words alone: the roles
//! of family and of others (`Tianshu 太太`, his wife; `Ana's boss`), in
//! the languages the import and the cycle read. The import reads them in
//! people lists and titles; the cycle in a clause before its cue (what a
//! partner likes is not the user's).

/// Whether a text says one of `words` as a word of its own (the spaced
/// scripts: `Ana's boss`) or one of `parts` anywhere in it (the scripts
/// that do not space words: `Tianshu 同事`), case aside.
pub fn says_any(text: &str, words: &[&str], parts: &[&str]) -> bool {
    let t = text.to_lowercase();
    t.split(|c: char| !c.is_alphanumeric())
        .any(|w| words.contains(&w))
        || parts.iter().any(|p| t.contains(p))
}

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
pub fn family_role(role: &str) -> bool {
    says_any(role, FAMILY_ROLES, FAMILY_PARTS)
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
pub fn names_a_relation(title: &str) -> bool {
    family_role(title) || says_any(title, OTHER_ROLES, OTHER_PARTS)
}
