//! Secrets in memory text: API keys, tokens, private keys, passwords and
//! wallet seed phrases, found so they can be counted (`somnus health`)
//! and redacted (the sleep cycle proposes it), never printed.
//!
//! The rules are gitleaks' default rule set (`data/gitleaks.toml`, MIT
//! licence in `data/LICENSE-gitleaks`): each rule's regex, its keywords
//! (a rule runs only on text holding one), its minimum Shannon entropy
//! for the secret, its secret group, and its allowlists (regexes on the
//! secret, the match or the line; stopwords), with the global allowlist.
//! Path allowlists do not apply (memory text has no path). Two rules are
//! this module's own: a password given after a label in any of several
//! languages (`password: …`, `mot de passe : …`, `密码：…`), however
//! weak, and twelve or more consecutive BIP-39 words (a seed phrase).

use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use std::sync::OnceLock;

/// A secret found in a text: the rule that found it and where it is
/// (byte offsets of the secret itself, not its label).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: String,
    pub start: usize,
    pub end: usize,
}

/// What replaces a secret: the rule's name, so the fact that a secret
/// was there stays.
pub fn mask(rule: &str) -> String {
    format!("[redacted {rule}]")
}

/// Texts longer than this are scanned in their first this many bytes
/// only (a memory's attribute is rarely longer; the cost stays bounded).
pub const MAX_SCANNED_BYTES: usize = 256 * 1024;

#[derive(Deserialize)]
struct File {
    allowlist: Option<Allow>,
    rules: Vec<RawRule>,
}

#[derive(Deserialize, Default)]
struct Allow {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default, rename = "regexTarget")]
    target: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
}

#[derive(Deserialize)]
struct RawRule {
    id: String,
    regex: Option<String>,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(rename = "secretGroup")]
    secret_group: Option<usize>,
    #[serde(default)]
    allowlists: Vec<Allow>,
}

struct AllowSet {
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
    /// `secret` (the default), `match` or `line`.
    target: String,
}

struct Rule {
    id: String,
    src: String,
    /// Compiled on first use (a rule whose keywords a text never holds
    /// costs nothing).
    regex: OnceLock<Option<Regex>>,
    entropy: Option<f64>,
    keywords: Vec<String>,
    group: Option<usize>,
    allow: Vec<AllowSet>,
}

struct Rules {
    rules: Vec<Rule>,
    global: AllowSet,
    /// Every rule's keywords, found in one pass (ASCII case ignored).
    keywords: Option<aho_corasick::AhoCorasick>,
    /// The rules each keyword of `keywords` stands for.
    keyword_rules: Vec<Vec<usize>>,
}

fn compile(src: &str) -> Option<Regex> {
    RegexBuilder::new(&ascii_classes(src))
        .size_limit(64 << 20)
        .dfa_size_limit(64 << 20)
        .build()
        .ok()
}

/// `src` with the classes `\\w`, `\\d`, `\\s` and `\\b` read as gitleaks reads
/// them (Go's regular expressions: ASCII only), where this engine would
/// read them as Unicode: `[\\w.=-]{10,150}` is a key's characters, never a
/// sentence in Chinese after `token:`.
fn ascii_classes(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 32);
    let mut chars = src.chars().peekable();
    let mut in_class = false;
    // the first character of a class is literal (`[]…]`, `[^]…]`)
    let mut class_start = false;
    while let Some(c) = chars.next() {
        if c == '\\' {
            let Some(n) = chars.next() else {
                out.push(c);
                break;
            };
            let swap = match (in_class, n) {
                (true, 'w') => Some("0-9A-Za-z_"),
                (true, 'd') => Some("0-9"),
                (true, 's') => Some("\\t\\n\\x0C\\r "),
                (false, 'w') => Some("[0-9A-Za-z_]"),
                (false, 'd') => Some("[0-9]"),
                (false, 's') => Some("[\\t\\n\\x0C\\r ]"),
                (false, 'b') => Some("(?-u:\\b)"),
                _ => None,
            };
            match swap {
                Some(t) => out.push_str(t),
                None => {
                    out.push(c);
                    out.push(n);
                }
            }
            class_start = false;
            continue;
        }
        if in_class && c == '[' && chars.peek() == Some(&':') {
            // a POSIX class inside a class (`[[:alnum:]]`), whole
            out.push(c);
            for p in chars.by_ref() {
                out.push(p);
                if p == ']' {
                    break;
                }
            }
            class_start = false;
            continue;
        }
        if in_class {
            if c == ']' && !class_start {
                in_class = false;
            }
            class_start = class_start && c == '^';
        } else if c == '[' {
            in_class = true;
            class_start = true;
        }
        out.push(c);
    }
    out
}

fn allow_set(a: Allow) -> Option<AllowSet> {
    // an allowlist that also needs a path (`condition = "AND"`) never
    // holds for memory text; a path-only one neither
    if !a.paths.is_empty()
        && (a.condition.as_deref() == Some("AND")
            || (a.regexes.is_empty() && a.stopwords.is_empty()))
    {
        return None;
    }
    Some(AllowSet {
        regexes: a.regexes.iter().filter_map(|r| compile(r)).collect(),
        stopwords: a.stopwords.iter().map(|s| s.to_lowercase()).collect(),
        target: a.target.unwrap_or_else(|| "secret".into()),
    })
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let file: File = toml::from_str(include_str!("../data/gitleaks.toml")).unwrap_or(File {
            allowlist: None,
            rules: Vec::new(),
        });
        let mut rules = Vec::new();
        for r in file.rules {
            let Some(src) = r.regex else { continue };
            rules.push(Rule {
                id: r.id,
                src,
                regex: OnceLock::new(),
                entropy: r.entropy,
                keywords: r.keywords.iter().map(|k| k.to_lowercase()).collect(),
                group: r.secret_group,
                allow: r.allowlists.into_iter().filter_map(allow_set).collect(),
            });
        }
        let global = file.allowlist.and_then(allow_set).unwrap_or(AllowSet {
            regexes: Vec::new(),
            stopwords: Vec::new(),
            target: "secret".into(),
        });
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            for k in &r.keywords {
                match words.iter().position(|w| w == k) {
                    Some(at) => keyword_rules[at].push(i),
                    None => {
                        words.push(k.clone());
                        keyword_rules.push(vec![i]);
                    }
                }
            }
        }
        let keywords = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .ok();
        Rules {
            rules,
            global,
            keywords,
            keyword_rules,
        }
    })
}

/// How many rules there are (the set's and this module's own), and the
/// ids of those this engine cannot compile (compiles every rule).
pub fn rule_count() -> (usize, Vec<String>) {
    let r = rules();
    let unusable = r
        .rules
        .iter()
        .filter(|x| x.regex.get_or_init(|| compile(&x.src)).is_none())
        .map(|x| x.id.clone())
        .collect();
    (r.rules.len() + 2, unusable)
}

/// Whether a value is a name of words joined by hyphens
/// (`Whisper-large-v2`, `gpt-4o-mini`): each part a word of letters, at
/// most one capital and that one first, or a short part of two or three
/// characters; and a name's mark among them, a capital first or a short
/// part with a digit (`v2`, `4o`). A key's parts are random (`sk-proj-9fQ…`),
/// a UUID's are hexadecimal with digits, and a passphrase of lower-case
/// words (`correct-horse-battery-staple`) is still a secret.
fn hyphenated_words(v: &str) -> bool {
    let parts: Vec<&str> = v.split('-').collect();
    let short = |p: &str| {
        (1..=3).contains(&p.chars().count()) && p.chars().all(|c| c.is_ascii_alphanumeric())
    };
    parts.len() >= 2
        && parts.iter().any(|p| p.chars().count() >= 4)
        && parts.iter().all(|p| {
            let word = (3..=12).contains(&p.chars().count())
                && p.chars().all(|c| c.is_ascii_alphabetic())
                && p.chars().skip(1).all(|c| c.is_ascii_lowercase());
            word || short(p)
        })
        && (parts[0].starts_with(|c: char| c.is_ascii_uppercase())
            || parts
                .iter()
                .any(|p| short(p) && p.chars().any(|c| c.is_ascii_digit())))
}

/// Shannon entropy of a string, in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

fn allowed(a: &AllowSet, secret: &str, whole: &str, line: &str) -> bool {
    let target = match a.target.as_str() {
        "match" => whole,
        "line" => line,
        _ => secret,
    };
    if a.regexes.iter().any(|r| r.is_match(target)) {
        return true;
    }
    let low = secret.to_lowercase();
    a.stopwords.iter().any(|w| low.contains(w.as_str()))
}

/// The line of `text` holding byte `at`.
fn line_at(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    &text[start..end]
}

/// Labels a password follows, lower case, in several languages.
const PASSWORD_LABELS: &str = r"(?i)(?:passphrase|pass phrase|password|passwort|passwd|pwd|mot de passe|contraseña|contrasena|senha|parola d'ordine|wachtwoord|hasło|пароль|密码|密碼|口令|パスワード|비밀번호)";

fn telegram_rule() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?-u:\b)[0-9]{8,10}:AA[0-9A-Za-z_-]{33}(?-u:\b)")
            .expect("the Telegram token pattern")
    })
}

fn password_rule() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(&format!(
            r#"{PASSWORD_LABELS}(?P<qual>(?:[ \t]+[^\s:：=`'"*]{{1,20}}){{1,3}}?)?(?:\**\s*[:：=]\**|\s+(?P<word>is|est|ist|es|é)\s*:?|\s*(?P<paren>\())\s*[`'"]?(?P<value>[^\s`'"，。,;*]{{4,128}})"#
        ))
        .expect("the password rule compiles")
    })
}

/// Words after a password label that say what is said of passwords, not
/// what one is for: `Password manager: 1Password`, `Password policy: 12+`.
const NOT_A_PASSWORDS_USE: &[&str] = &[
    "manager",
    "managers",
    "policy",
    "policies",
    "reset",
    "hint",
    "hints",
    "length",
    "rule",
    "rules",
    "requirement",
    "requirements",
    "change",
    "changed",
    "changes",
    "expiry",
    "expires",
    "strength",
    "field",
    "fields",
    "protected",
    "recovery",
    "vault",
    "store",
    "stored",
    "storage",
    "file",
    "files",
    "location",
    "path",
    "format",
    "manager.",
    "gestor",
    "política",
    "gerenciador",
    "verwaltung",
    "richtlinie",
    "gestionnaire",
    "politique",
];

/// Words that say where something is, after a password label's word
/// (`App Password: definido em .env.local`, `password: stored in the
/// vault`, `Passwort: hinterlegt im Tresor`).
const PLACE_WORDS: &[&str] = &[
    "in", "inside", "on", "at", "from", "via", "into", "em", "no", "na", "nos", "nas", "en",
    "dans", "im", "nel", "nella", "в", "во", "на",
];

/// Whether what follows a value (`after`) says where the password is kept:
/// the value was a word of that sentence (`definido` in `definido em
/// .env.local`), not a password.
fn said_where_kept(after: &str) -> bool {
    after.starts_with([' ', '\t'])
        && after
            .split_whitespace()
            .next()
            .is_some_and(|w| PLACE_WORDS.contains(&w.to_lowercase().as_str()))
}

/// Labels a `user / password` pair follows, lower case, in several
/// languages.
const CREDENTIAL_LABELS: &str = r"(?i)(?:credentials?|creds|credenciais|credenciales|credenziali|identifiants|zugangsdaten|anmeldedaten|login|логин|учётные данные|учетные данные|凭据|凭证|账号密码|帳號密碼|認証情報|ログイン情報)";

/// `Credentials: admin / S3cret!` (and `**Credenciais:** admin / …`): the
/// second half of the pair is the password.
fn credential_rule() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(&format!(
            r#"{CREDENTIAL_LABELS}\**\s*[:：=]\**\s*[`'"]?([^\s/`'"|]{{1,64}})[`'"]?(\s*/\s*)[`'"]?([^\s`'"，。,;*|]{{4,128}})"#
        ))
        .expect("the credential rule compiles")
    })
}

/// Accounts whose `name / password` pairs are written without a label
/// (`185.76.242.32 root/LOY3zoaZzR964`, `- SSH: root / …`), or an e-mail
/// address as the login, or after a remote-login label (`SSH: kirill / …`).
fn account_pair_rule() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r#"(?i)(?:^|[^\w/@.~\\-])(?:(?:root|admin|administrator|ubuntu|postgres|deploy|superuser)|(?P<mail>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)|(?:ssh|sftp|ftp|vnc|rdp)\**\s*[:：=]\**\s*[`'"]?[^\s/`'"|@]{1,64})[`'"]?(?:\s*/\s*)[`'"]?(?P<value>[^\s`'"，。,;*|/()]{8,128})"#,
        )
        .expect("the account pair rule compiles")
    })
}

/// A password beyond doubt without a label saying so: eight characters or
/// more, of three kinds at least (lower case, capitals, digits, symbols).
/// `root/backups`, `admin / Administrator`, `ssh: git / id_rsa` are not.
fn strong_password(v: &str) -> bool {
    let kinds = [
        v.chars().any(|c| c.is_lowercase()),
        v.chars().any(|c| c.is_uppercase()),
        v.chars().any(|c| c.is_ascii_digit()),
        v.chars().any(|c| !c.is_alphanumeric()),
    ];
    v.chars().count() >= 8 && kinds.iter().filter(|k| **k).count() >= 3
}

/// A word with a digit, a symbol or a capital after its first letter.
fn looks_like_password(v: &str) -> bool {
    v.chars()
        .any(|c| c.is_ascii_digit() || (!c.is_alphanumeric()))
        || v.chars().skip(1).any(char::is_uppercase)
}

/// Values that stand for a password without being one.
fn placeholder(v: &str) -> bool {
    if v.starts_with(['<', '$', '{', '[', '(']) {
        return true;
    }
    let low = v.to_lowercase();
    let low = low.trim_matches(|c: char| !c.is_alphanumeric() && c != '*');
    low.is_empty()
        || low
            .chars()
            .all(|c| c == '*' || c == 'x' || c == '.' || c == '•')
        || low.starts_with('<')
        || low.starts_with('$')
        || low.starts_with("{{")
        || low.contains("redacted")
        // a sample's stand-in (`PASSWORD = 'your_password'`), or the name
        // of a field where a format is described
        // (`username:password:email:email_password`)
        || low.starts_with("your")
        || ["example", "placeholder", "dummy", "sample"]
            .iter()
            .any(|w| low.contains(w))
        || low.ends_with("password")
        || low.ends_with("passwd")
        || matches!(
            low,
            "none"
                | "null"
                | "empty"
                | "unknown"
                | "changeme"
                | "password"
                | "secret"
                | "hidden"
                | "required"
                | "optional"
                | "same"
                | "set"
                | "reset"
                | "manager"
                | "protected"
        )
}

/// `text` as the rules read it, every character at the same byte offset:
/// Markdown's bold marks (`**API Key**: …`) become spaces, a full-width
/// colon, equals sign or quote (`API Key：sk-…`, as CJK text writes them)
/// becomes its ASCII form followed by two spaces, and the other
/// full-width and CJK punctuation that ends a phrase (`，。；、（）「」【】《》`)
/// becomes three spaces. gitleaks' rules are written for source code,
/// where a value ends at a quote, a space or a semicolon.
fn scannable(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() && !text.contains("**") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let ascii = match c {
            '：' => Some(':'),
            '＝' => Some('='),
            '＂' => Some('"'),
            '＇' => Some('\''),
            '｀' => Some('`'),
            '，' | '。' | '；' | '、' | '（' | '）' | '「' | '」' | '『' | '』' | '【' | '】'
            | '《' | '》' => Some(' '),
            _ => None,
        };
        match ascii {
            // each of these is three bytes in UTF-8
            Some(a) => {
                out.push(a);
                out.push_str("  ");
            }
            None if c == '*' && chars.peek() == Some(&'*') => {
                chars.next();
                out.push_str("  ");
            }
            None => out.push(c),
        }
    }
    debug_assert_eq!(out.len(), text.len());
    std::borrow::Cow::Owned(out)
}

/// Secrets in `text`, in order, none overlapping (the first rule to find
/// a span keeps it). Offsets are into `text` itself, on its character
/// boundaries.
pub fn find(text: &str) -> Vec<Finding> {
    let mut cut = text.len().min(MAX_SCANNED_BYTES);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let original = &text[..cut];
    let normal = scannable(original);
    let mut out = find_in(&normal);
    // a span that ends inside a character the scan saw as ASCII
    // punctuation ends before it
    for f in &mut out {
        while !original.is_char_boundary(f.end) {
            f.end -= 1;
        }
        while f.start < f.end && !original.is_char_boundary(f.start) {
            f.start += 1;
        }
    }
    out.retain(|f| f.end > f.start);
    out
}

fn find_in(text: &str) -> Vec<Finding> {
    let r = rules();
    // the rules whose keywords the text holds (all of them, were the
    // keywords not searchable)
    let mut keyed = vec![r.keywords.is_none(); r.rules.len()];
    if let Some(ac) = &r.keywords {
        for m in ac.find_overlapping_iter(text) {
            for &i in &r.keyword_rules[m.pattern().as_usize()] {
                keyed[i] = true;
            }
        }
    }
    let mut out: Vec<Finding> = Vec::new();
    let add = |f: Finding, out: &mut Vec<Finding>| {
        if f.end > f.start && !out.iter().any(|o| o.start < f.end && f.start < o.end) {
            out.push(f);
        }
    };
    for (i, rule) in r.rules.iter().enumerate() {
        if !rule.keywords.is_empty() && !keyed[i] {
            continue;
        }
        let Some(regex) = rule.regex.get_or_init(|| compile(&rule.src)) else {
            continue;
        };
        for caps in regex.captures_iter(text) {
            let Some(whole) = caps.get(0) else { continue };
            let m = match rule.group {
                Some(g) => caps.get(g),
                None => (1..caps.len()).find_map(|i| caps.get(i).filter(|m| !m.is_empty())),
            }
            .unwrap_or(whole);
            let secret = m.as_str();
            if rule.entropy.is_some_and(|e| entropy(secret) < e) {
                continue;
            }
            // (the generic rule's value, when it is words joined by
            // hyphens, is a name: `KEY SETUP: Whisper-large-v2 + …`)
            if rule.id == "generic-api-key" && hyphenated_words(secret) {
                continue;
            }
            let line = line_at(text, m.start());
            if allowed(&r.global, secret, whole.as_str(), line)
                || rule
                    .allow
                    .iter()
                    .any(|a| allowed(a, secret, whole.as_str(), line))
            {
                continue;
            }
            add(
                Finding {
                    rule: rule.id.clone(),
                    start: m.start(),
                    end: m.end(),
                },
                &mut out,
            );
        }
    }
    let password = |m: regex::Match<'_>| Finding {
        rule: "password".into(),
        start: m.start(),
        end: m.end(),
    };
    for caps in password_rule().captures_iter(text) {
        // after a word (`is`), only a value that looks like a password
        // (a digit, a symbol, a capital inside): `the password is stored`
        // is prose; and so after what the password is for (`Password
        // sudo: 7907`, `Senha do wifi: …`), unless that says it is about
        // passwords, not one (`Password manager: 1Password`), or the value
        // is where one is kept (a path, an address)
        // (and in parentheses after the label: `had a passphrase
        // (`NKYh…`)`)
        // (a label glued to a digit is a product's name: `NPM + 1Password
        // (publish/verify)`)
        let start = caps.get(0).map_or(0, |m| m.start());
        if text[..start].ends_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let worded = caps.name("word").is_some() || caps.name("paren").is_some();
        let qualified = caps
            .name("qual")
            .is_some_and(|q| !q.as_str().trim().is_empty());
        if qualified
            && caps.name("qual").is_some_and(|q| {
                q.as_str()
                    .split_whitespace()
                    .any(|w| NOT_A_PASSWORDS_USE.contains(&w.to_lowercase().as_str()))
            })
        {
            continue;
        }
        // (in parentheses, the label's own and all they hold: `had a
        // passphrase (NKYh…)`, never `password hashing error (72-byte
        // limit)`)
        // (the value runs to the parenthesis that closes it, unquoted:
        // `(NKYh…).`)
        if caps.name("paren").is_some() {
            let Some(m) = caps.name("value") else {
                continue;
            };
            let v = m.as_str();
            let len = v.find([')', '）']).unwrap_or(v.len());
            let after = text[m.start() + len..].trim_start_matches(['`', '\'', '"']);
            let value = &v[..len];
            if !qualified
                && after.starts_with([')', '）'])
                && value.chars().count() >= 4
                && !placeholder(value)
                && looks_like_password(value)
            {
                add(
                    Finding {
                        rule: "password".into(),
                        start: m.start(),
                        end: m.start() + len,
                    },
                    &mut out,
                );
            }
            continue;
        }
        if let Some(m) = caps.name("value")
            && !placeholder(m.as_str())
            && (!(worded || qualified) || looks_like_password(m.as_str()))
            && (!said_where_kept(&text[m.end()..]) || looks_like_password(m.as_str()))
            && !(qualified && (m.as_str().contains(['/', '~', '\\']) || m.as_str().contains("://")))
        {
            add(password(m), &mut out);
        }
    }
    // the second half of a `user / password` pair (not a path where the
    // credentials are kept: `Web creds: ~/.clawdbot/credentials/`)
    for caps in credential_rule().captures_iter(text) {
        let (user, slash) = (&caps[1], &caps[2]);
        if let Some(m) = caps.get(3)
            && !placeholder(m.as_str())
            && !(slash == "/" && (user.starts_with(['~', '.']) || m.as_str().contains('/')))
        {
            add(password(m), &mut out);
        }
    }
    // a pair without a label (an administrator's account or an e-mail
    // address before the slash, or after `SSH:`), when what follows it is
    // a password beyond doubt and not a path (`/root/backups`,
    // `root/ck#Wk…/x`)
    // (after an e-mail address, letters and digits are enough: `a@b.ie /
    // openclaw2026`)
    for caps in account_pair_rule().captures_iter(text) {
        if let Some(m) = caps.name("value")
            && !text[m.end()..].starts_with('/')
            && !placeholder(m.as_str())
            && (strong_password(m.as_str())
                || (caps.name("mail").is_some()
                    && m.as_str().chars().any(char::is_alphabetic)
                    && m.as_str().chars().any(|c| c.is_ascii_digit())))
        {
            add(password(m), &mut out);
        }
    }
    // a Telegram bot's token by its shape alone, whatever its label says
    // (`Bot Token: 8114115093:AA…` under a `## Telegram` heading): the
    // bot's id, a colon, then 35 characters that begin with `AA`
    // (gitleaks' rule needs "telegr" on the line)
    for m in telegram_rule().find_iter(text) {
        add(
            Finding {
                rule: "telegram-bot-api-token".into(),
                start: m.start(),
                end: m.end(),
            },
            &mut out,
        );
    }
    for (start, end) in seed_phrases(text) {
        add(
            Finding {
                rule: "seed-phrase".into(),
                start,
                end,
            },
            &mut out,
        );
    }
    out.sort_by_key(|f| f.start);
    out
}

/// Runs of twelve or more consecutive BIP-39 (English) words: byte spans.
fn seed_phrases(text: &str) -> Vec<(usize, usize)> {
    let words = bip39::Language::English;
    let mut out = Vec::new();
    let mut run: Vec<(usize, usize)> = Vec::new();
    let close = |run: &mut Vec<(usize, usize)>, out: &mut Vec<(usize, usize)>| {
        if run.len() >= 12 {
            out.push((run[0].0, run[run.len() - 1].1));
        }
        run.clear();
    };
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i].is_ascii_lowercase() {
            let s = i;
            while i < bytes.len() && bytes[i].is_ascii_lowercase() {
                i += 1;
            }
            // a word glued to other letters or digits is not one
            let glued = i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] >= 0x80);
            if !glued && words.find_word(&text[s..i]).is_some() {
                run.push((s, i));
            } else {
                close(&mut run, &mut out);
            }
        } else {
            // numbering and separators between the words keep a run
            if !(bytes[i].is_ascii_whitespace()
                || bytes[i].is_ascii_digit()
                || matches!(bytes[i], b'.' | b',' | b')' | b'-'))
            {
                close(&mut run, &mut out);
            }
            i += 1;
        }
    }
    close(&mut run, &mut out);
    out
}

/// `text` with each secret replaced by [`mask`]`(rule)`, and the rules
/// that found them (one per secret).
pub fn redact(text: &str) -> (String, Vec<String>) {
    let found = find(text);
    let mut out = text.to_string();
    for f in found.iter().rev() {
        out.replace_range(f.start..f.end, &mask(&f.rule));
    }
    (out, found.into_iter().map(|f| f.rule).collect())
}

/// Masks the secrets in every text of a JSON value, in place: each string
/// is redacted, and an object's string value is masked whole when it is
/// a secret by its key (`{"password": "hunter22"}`). Says how many it
/// masked.
pub fn redact_value(v: &mut serde_json::Value) -> usize {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            let (out, found) = redact(s);
            if !found.is_empty() {
                *s = out;
            }
            found.len()
        }
        Value::Array(items) => items.iter_mut().map(redact_value).sum(),
        Value::Object(map) => map
            .iter_mut()
            .map(|(k, x)| match x {
                Value::String(s) => {
                    let (out, found) = redact(s);
                    if !found.is_empty() {
                        *s = out;
                        return found.len();
                    }
                    // a secret only by its key
                    let labelled = find(&format!("{k}: {s}"));
                    match labelled.iter().find(|f| f.end > k.len() + 2) {
                        Some(f) => {
                            *s = mask(&f.rule);
                            1
                        }
                        None => 0,
                    }
                }
                _ => redact_value(x),
            })
            .sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_value_loses_its_secrets_and_keeps_its_shape() {
        let gh = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
        let mut v = serde_json::json!({
            "note": format!("token {gh}"),
            "password": "hunter22",
            "list": [gh.clone(), 3],
            "name": "Ada"
        });
        assert_eq!(redact_value(&mut v), 3);
        assert_eq!(
            v,
            serde_json::json!({
                "note": "token [redacted github-pat]",
                "password": "[redacted password]",
                "list": ["[redacted github-pat]", 3],
                "name": "Ada"
            })
        );
    }

    fn rules_of(text: &str) -> Vec<String> {
        find(text).into_iter().map(|f| f.rule).collect()
    }

    #[test]
    fn classes_are_read_as_ascii_as_gitleaks_reads_them() {
        assert_eq!(ascii_classes(r"[\w.=-]{10}"), "[0-9A-Za-z_.=-]{10}");
        assert_eq!(
            ascii_classes(r"\b\w+\s\d"),
            r"(?-u:\b)[0-9A-Za-z_]+[\t\n\x0C\r ][0-9]"
        );
        assert_eq!(
            ascii_classes(r"[]\w]\[\w\]"),
            r"[]0-9A-Za-z_]\[[0-9A-Za-z_]\]"
        );
        assert_eq!(ascii_classes(r"[^\s]\W"), r"[^\t\n\x0C\r ]\W");
        assert_eq!(
            ascii_classes(r"[[:alnum:]\w]\w"),
            r"[[:alnum:]0-9A-Za-z_][0-9A-Za-z_]"
        );
    }

    #[test]
    fn the_rule_set_loads_and_compiles() {
        let (n, unusable) = rule_count();
        assert!(n > 200, "{n}");
        assert!(unusable.len() <= 3, "{unusable:?}");
    }

    #[test]
    fn keys_tokens_and_private_keys_are_found() {
        // built from parts, so no scanner mistakes this file for a leak
        let gh = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
        assert_eq!(
            rules_of(&format!("my token is {gh} ok")),
            vec!["github-pat"]
        );
        let aws = format!("AKIA{}", "Z7Q4W2E6R5T3Y5U7");
        assert_eq!(
            rules_of(&format!("aws key {aws}")),
            vec!["aws-access-token"]
        );
        let pem = format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
        );
        assert_eq!(rules_of(&pem), vec!["private-key"]);
        let (red, found) = redact(&format!("use {gh} for the API"));
        assert_eq!(red, "use [redacted github-pat] for the API");
        assert_eq!(found, vec!["github-pat"]);
    }

    #[test]
    fn passwords_after_a_label_in_several_languages() {
        for (text, secret) in [
            ("The wifi password: hunter22", "hunter22"),
            ("mot de passe : Soleil2024!", "Soleil2024!"),
            ("邮箱密码：abc12345", "abc12345"),
            ("Passwort = geheim99", "geheim99"),
            ("my email password is Tr0ub4dor&3", "Tr0ub4dor&3"),
            ("- **Password:** hunter22", "hunter22"),
            ("**Credenciais:** admin / @CiaoMiau2955", "@CiaoMiau2955"),
            ("- Credentials: `root` / `toor1234`", "toor1234"),
            ("Login: admin / admin", "admin"),
            ("creds: admin/S3cret!", "S3cret!"),
            ("password: letmein for the guest wifi", "letmein"),
            ("password: Tr0ub4dor in the safe", "Tr0ub4dor"),
            // what the password is for, between its label and its colon
            ("- Password sudo: 7907", "7907"),
            ("Senha do wifi: Casa2024!", "Casa2024!"),
            // (a real conversation: the agent said what it decrypted)
            (
                "The VPS SSH key had a passphrase (`NKYhPiVpr9sWyioC7CRAfqgQmy8`). I decrypted it.",
                "NKYhPiVpr9sWyioC7CRAfqgQmy8",
            ),
            (
                "The VPS SSH key had a passphrase (NKYhPiVpr9sWyioC7CRAfqgQmy8). I decrypted it.",
                "NKYhPiVpr9sWyioC7CRAfqgQmy8",
            ),
            // an account's pair without a label (a real Russian workspace)
            ("- **SSH**: root / `gx1uGPsVs?HA5M`", "gx1uGPsVs?HA5M"),
            (
                "New server: 85.239.40.160 root/ck#WkW_BJpW+4F",
                "ck#WkW_BJpW+4F",
            ),
            (
                "- **Scoutly**: 188.225.24.157, root / `gx1uGPsVs?HA5M`",
                "gx1uGPsVs?HA5M",
            ),
            ("- root / `vgz^4hkW#jWM-5`", "vgz^4hkW#jWM-5"),
            ("SSH: kirill / Xq7!mPz2w", "Xq7!mPz2w"),
            ("- Panel: ops@example.ru / Zx81kLmq", "Zx81kLmq"),
            // (a real conversation: a test account's login)
            (
                "- `leamyclaw@gmail.com` / `openclaw2026` (front-end only)",
                "openclaw2026",
            ),
            (
                "- **Демо**: demo@walloflove.ru / password123",
                "password123",
            ),
        ] {
            let f = find(text);
            assert_eq!(f.len(), 1, "{text}: {f:?}");
            assert_eq!(&text[f[0].start..f[0].end], secret, "{text}");
        }
        for text in [
            "password: <your password>",
            "password: ********",
            "Reset your password: it takes a minute",
            "the password is stored in the manager",
            "Credentials: stored in Keychain / rotated monthly",
            "credentials: admin / <password>",
            "Login / logout flow",
            "Password manager: 1Password",
            "Password reset link: https://example.org/reset",
            "Password file: ~/.config/vdirsyncer/icloud_app_password",
            "password of the week: rotated",
            // a research note's code sample and a format (a real memory)
            "PASSWORD = 'your_password'",
            "twscrape add_accounts ./accounts.txt username:password:email:email_password",
            "password: example-pass-1",
            "Password (optional) field left blank",
            // (a real daily note)
            "3. **Bcrypt password hashing error** (72-byte limit)",
            "the password (Tr0ub4dor&3 or so) was reset",
            "the passphrase (the one on the sticky note) works",
            // where they are kept (a real workspace's AGENTS.md)
            "- Web creds: `~/.clawdbot/credentials/`; rerun `clawdbot login` if logged out",
            "Credentials: config/secrets/prod.json",
            // (a real TOOLS.md)
            "- App Password: definido em `.env.local` (não versionado)",
            "password: stored in the vault",
            "Passwort: hinterlegt im Tresor",
            // (OpenClaw's own AGENTS.md)
            "## NPM + 1Password (publish/verify)",
            // (a real research note)
            "  - KEY SETUP: Whisper-large-v2 + IEMOCAP 4-class SER; NNsight library",
            "1Password: Private vault",
            // paths and pairs that hold no password
            "- Бэкапы: /root/backups/ (03:00 daily)",
            "- Timly backups in /root/backups/ (daily 03:00 cron)",
            "SSH: root (пароль в чате)",
            "ssh: git / id_rsa",
            "admin / Administrator roles",
            "root/Documents/Reports2024/x",
            "Contact: anna@example.org / +7 916 123 45 67",
            "Mail hello@scoutly.ru / support@scoutly.ru",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", find(text));
        }
    }

    #[test]
    fn keys_in_markdown_and_cjk_punctuation_are_found() {
        let key = format!("sk-cp-{}", "kQ7mZ2xR9vT4bN8pL3wJ6yH1cF5dS0gA");
        let token = "UxEmbaiGxaP9RKsQqi3cTW9Dnug";
        for text in [
            format!("  - API Key：{key}"),
            format!("- **API Key**: `{key}`"),
            format!("自动写入飞书多维表格（联系人表 app_token: {token}）"),
            format!("app_token＝{token}，然后"),
        ] {
            let f = find(&text);
            assert_eq!(f.len(), 1, "{text}: {f:?}");
            let secret = &text[f[0].start..f[0].end];
            assert!(secret == key || secret == token, "{text}: {secret}");
            let (red, _) = redact(&text);
            assert!(!red.contains(secret), "{red}");
        }
        // a span never ends inside a character the scan read as ASCII
        for text in [
            "密码：abcd1234（备注）",
            "密码：ab：cd1234）",
            "**密码**：x（y）z1234",
        ] {
            for f in find(text) {
                assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            }
            let _ = redact(text);
        }
        assert!(find("**The key takeaway**：keep the migration behind a flag").is_empty());
        // a sentence after a label is no key: the rules' classes are ASCII
        // as gitleaks reads them
        assert!(find("**OAuth授权**：本地回调地址无法被外网飞书访问").is_empty());
        assert!(find("API Key：调用失败了没有返回任何结果").is_empty());
    }

    #[test]
    fn a_telegram_bots_token_is_found_without_the_word_telegram() {
        let t = "- Bot Token: 8114115093:AAFvRoF_xnhshKM92bMdcwZ3DBCCe4KpwxQ\n- Chris Telegram ID: 8772213652";
        assert_eq!(rules_of(t), vec!["telegram-bot-api-token"]);
        let f = find(t);
        assert_eq!(
            &t[f[0].start..f[0].end],
            "8114115093:AAFvRoF_xnhshKM92bMdcwZ3DBCCe4KpwxQ"
        );
        // a time and a short id are no token
        assert!(find("ID 8772213652 at 12:30, build 20260323:AAB").is_empty());
    }

    #[test]
    fn a_seed_phrase_is_found_and_prose_is_not() {
        let seed =
            "abandon ability able about above absent absorb abstract absurd abuse access accident";
        assert_eq!(rules_of(&format!("wallet: {seed}")), vec!["seed-phrase"]);
        assert!(
            find("We talked about the project and agreed to ship it next week after review.")
                .is_empty()
        );
    }

    #[test]
    fn ordinary_memory_text_has_no_secret() {
        for text in [
            "Prefers dark mode in every editor",
            "Time zone: Asia/Shanghai",
            "API design review with Priya on Tuesday",
            "The key takeaway: keep the migration behind a flag",
            "token budget is 4000 tokens per request",
            "User's e-mail is ada@example.org",
            "Model key: gpt-4o-mini",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", find(text));
        }
        // (a key or a UUID with hyphens is still one)
        let key = format!("sk-proj-{}", "9fQa8ZkLmN3xT7bW2cV5");
        assert_eq!(
            rules_of(&format!("api_key: {key}")),
            vec!["generic-api-key"]
        );
        assert!(hyphenated_words("Whisper-large-v2"));
        assert!(!hyphenated_words("550e8400-e29b-41d4-a716-446655440000"));
        assert!(!hyphenated_words(&key));
        assert!(hyphenated_words("gpt-4o-mini"));
        assert!(!hyphenated_words("correct-horse-battery-staple"));
    }
}
