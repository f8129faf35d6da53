//! Choosing a topic domain for an item: shared by the Unsorted inbox (phase 3) and
//! the orphans (phase 4).

use super::context::*;
use super::decay;
use crate::sleep::topic_words::{self, past_participle};

pub(super) fn domain_views(
    nx: &mut Nexus,
    ty: &str,
    cache: &mut HashMap<String, Vec<DomainView>>,
) -> KipResult<Vec<DomainView>> {
    if let Some(v) = cache.get(ty) {
        return Ok(v.clone());
    }
    let v = find(
        nx,
        r#"FIND(?d) WHERE { ?d {type: "Domain"} } LIMIT 500"#,
        json!({}),
    )?;
    let mut out = Vec::new();
    for d in v.as_array().cloned().unwrap_or_default() {
        let name = s(&d, &["name"]);
        if SYSTEM_DOMAINS.contains(&name.as_str()) || s(&d, &["attributes", "status"]) == "archived"
        {
            continue;
        }
        let m = find(
            nx,
            r#"FIND(?m) WHERE { ?m {type: :t} (?m, "belongs_to_domain", {type: "Domain", name: :d}) } LIMIT 40"#,
            json!({"t": ty, "d": name}),
        )?;
        let member_texts = m
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| {
                        format!(
                            "{} {}",
                            s(x, &["name"]),
                            s(x, &["attributes", "description"])
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(DomainView {
            description: s(&d, &["attributes", "description"]),
            name,
            member_texts,
        });
    }
    cache.insert(ty.to_string(), out.clone());
    Ok(out)
}

/// What an element says: a concept's description, an Event's summary.
fn said(node: &Value) -> Option<String> {
    ["description", "content_summary", "content", "text"]
        .iter()
        .map(|k| s(node, &["attributes", k]))
        .find(|t| !t.trim().is_empty())
}

pub(super) fn item_view(nx: &mut Nexus, ty: &str, name: &str) -> KipResult<Option<ItemView>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { ?n {type: :t, name: :n} }"#,
        json!({"t": ty, "n": name}),
    )?;
    let Some(node) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(None);
    };
    let mut neighbour_domains = Vec::new();
    for text in [
        r#"FIND(?d.name) WHERE { ?x {type: :t, name: :n} (?x, ?p, ?y) (?y, "belongs_to_domain", ?d) } LIMIT 200"#,
        r#"FIND(?d.name) WHERE { ?x {type: :t, name: :n} (?y, ?p, ?x) (?y, "belongs_to_domain", ?d) } LIMIT 200"#,
    ] {
        let d = find(nx, text, json!({"t": ty, "n": name}))?;
        neighbour_domains.extend(
            strs(Some(&d))
                .into_iter()
                .filter(|d| !SYSTEM_DOMAINS.contains(&d.as_str())),
        );
    }
    Ok(Some(ItemView {
        id: s(&node, &["id"]),
        ty: ty.to_string(),
        name: name.to_string(),
        text: said(&node).unwrap_or_default(),
        neighbour_domains,
    }))
}

pub(super) fn classify_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    items: &[(String, String)],
    class: &str,
) -> KipResult<Vec<Draft>> {
    let mut cache = HashMap::new();
    let mut drafts = Vec::new();
    let mut judged: Vec<(ItemView, Classification)> = Vec::new();
    for (ty, name) in items {
        cx.cancelled()?;
        let Some(view) = item_view(nx, ty, name)? else {
            continue;
        };
        let domains = domain_views(nx, ty, &mut cache)?;
        let c = cx
            .reasoner
            .classify(&mut Look(nx), std::slice::from_ref(&view), &domains)?
            .into_iter()
            .next();
        if let Some(c) = c {
            judged.push((view, c));
        }
    }
    // a theme several unfiled or weakly filed items share, that no domain
    // covers, goes before a weak filing
    let open: Vec<ItemView> = judged
        .iter()
        .filter(|(_, c)| c.domain.is_none() || c.confidence < WEAK_FILING)
        .map(|(v, _)| v.clone())
        .collect();
    let (themed, used, routine) = if class == "unsorted" {
        new_domains(cx, nx, &open, class)?
    } else {
        (Vec::new(), HashSet::new(), HashMap::new())
    };
    for (view, c) in judged.iter_mut() {
        if let Some((home, why)) = routine.get(&view.id) {
            *c = Classification {
                item: c.item.clone(),
                domain: Some(home.clone()),
                confidence: ROUTINE_FILING,
                rationale: why.clone(),
            };
        }
    }
    for _ in &themed {
        cx.rule(&format!("{class}: new domain for a shared theme"), true);
    }
    drafts.extend(themed);
    for (view, c) in judged {
        if used.contains(&view.id) {
            continue;
        }
        let (ty, name) = (&view.ty, &view.name);
        let in_unsorted = class == "unsorted";
        cx.rule(
            &format!(
                "{class}: {}",
                if c.domain.is_some() {
                    "filed by fit"
                } else {
                    "no domain fits"
                }
            ),
            c.domain.is_some() || class == "orphan",
        );
        match (&c.domain, in_unsorted) {
            (Some(d), _) => {
                let mut commands = vec![r#"UPSERT {
  PROPOSITION ?membership {
    ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: :domain})
  }
}
WITH METADATA { source: "SleepReclassification", author: "$system", confidence: :confidence, created_at: :ts }"#
                    .to_string()];
                if in_unsorted {
                    commands.push(
                        r#"DELETE PROPOSITIONS ?link
WHERE {
  ?link ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: "Unsorted"})
}"#
                        .to_string(),
                    );
                }
                drafts.push(Draft {
                    class: "reclassify".into(),
                    key: format!("domain:{}>{d}", view.id),
                    title: format!("File {ty} \"{name}\" under {d}{}", if in_unsorted { " (out of Unsorted)" } else { "" }),
                    commands,
                    params: pm(json!({"item_type": ty, "item_name": name, "domain": d, "confidence": (c.confidence * 100.0).round() / 100.0, "ts": cx.opts.now})),
                    rationale: c.rationale.clone(),
                    evidence: vec![view.id.clone()],
                    confidence: c.confidence,
                });
            }
            (None, false) if class == "orphan" => {
                drafts.push(Draft {
                    class: "reclassify".into(),
                    key: format!("domain:{}>Unsorted", view.id),
                    title: format!("File orphan {ty} \"{name}\" in Unsorted for review"),
                    commands: vec![
                        r#"UPSERT {
  PROPOSITION ?membership {
    ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: "Unsorted"})
  }
}
WITH METADATA { source: "OrphanResolution", author: "$system", confidence: 0.5, created_at: :ts }"#
                            .to_string(),
                    ],
                    params: pm(json!({"item_type": ty, "item_name": name, "ts": cx.opts.now})),
                    rationale: c.rationale.clone(),
                    evidence: vec![view.id.clone()],
                    confidence: 0.5,
                });
            }
            _ => {
                cx.line(format!(
                    "{ty} \"{name}\" stays in Unsorted: {}",
                    c.rationale
                ));
                decay::note(
                    nx,
                    &view.id,
                    &format!("{ty}:{name}"),
                    cx.run,
                    "kept in Unsorted",
                    "no domain fits",
                    &json!({"why": c.rationale}),
                )?;
            }
        }
    }
    Ok(drafts)
}

/// How sure a filing by a domain's routine is: its members share the
/// item's theme, which is one word's evidence.
pub const ROUTINE_FILING: f64 = 0.75;

/// A filing this confident or more is kept over a shared theme.
pub const WEAK_FILING: f64 = 0.9;

/// Items sharing a theme no domain covers: at least this many, for a new
/// domain to be proposed (phase 3 may create one).
pub const NEW_DOMAIN_MIN_ITEMS: usize = 3;

/// What each member of a domain opens with, and its stems, by (type,
/// domain): read once per cycle.
type Openings = Vec<(String, HashSet<String>)>;

/// Items that share a theme, as `new_domains` gathers them.
struct Group {
    /// The items (indices into the items left unfiled).
    items: Vec<usize>,
    /// The theme as written, and its key (a stem, or `cjk:` and the word).
    word: String,
    key: String,
    /// The items of the theme itself, before others joined.
    seed: Vec<usize>,
    /// Themes whose items joined, strongest first.
    also: Vec<String>,
}

/// What [`new_domains`] finds: new domains proposed, the items they take,
/// and items whose theme a domain's members already share (item id →
/// that domain, why).
type Themed = (
    Vec<Draft>,
    HashSet<String>,
    HashMap<String, (String, String)>,
);

/// A theme at least one in this many of its items says in its name goes
/// first.
pub const NAMED_THEME_SHARE: usize = 3;

/// From this many unfiled items up, a theme that more than half of them
/// share is too general to be a domain.
pub const GENERAL_THEME_MIN_ITEMS: usize = 10;

/// Words for the kind of record an item is ("episode", "entry",
/// "session"): no theme of what it is about.
const RECORD_WORDS: [&str; 40] = [
    "episode",
    "episodes",
    "event",
    "events",
    "entry",
    "entries",
    "note",
    "notes",
    "record",
    "records",
    "item",
    "items",
    "memory",
    "memories",
    // (the memory's own word for itself: "Memoria Sesión Extendida")
    "memoria",
    "memorias",
    "memória",
    "mémoire",
    "gedächtnis",
    "память",
    "session",
    "sessions",
    "sesión",
    "sesion",
    "sesiones",
    "sessão",
    "sessao",
    "sessões",
    "sessione",
    "sessioni",
    "séance",
    "sitzung",
    "sitzungen",
    "eintrag",
    "einträge",
    "notiz",
    "notizen",
    "registro",
    "registros",
    "сессия",
];

/// A theme whose word is at least this common (Zipf,
/// [`crate::analysis::frequency`]) in the memory's languages or English,
/// about one in 12,000 words ("write", "security", "model", "porta"), is a
/// domain only with [`NEW_DOMAIN_MIN_ITEMS`] items named for it; a listed
/// word rarer than this ("garden", 4.6; "pattern", 4.5) with two items
/// about it (named for it, saying it twice, or short:
/// [`SHORT_TEXT_WORDS`]). Either way at least half of its items must be,
/// or a domain's worth, which it then takes alone.
pub const COMMON_THEME_ZIPF: f32 = 4.9;

/// A text of at most this many words per time it says a theme is about
/// it ("Tomato seedlings: started tomatoes for the garden"); in a longer
/// one, a common word said once is in passing.
pub const SHORT_TEXT_WORDS: usize = 15;

/// A new topic domain for items left unfiled that share a word no domain's
/// name or description has: proposed with their memberships.
fn new_domains(cx: &mut Cx, nx: &mut Nexus, left: &[ItemView], class: &str) -> KipResult<Themed> {
    let mut taken = HashSet::new();
    let mut routine = HashMap::new();
    if left.len() < NEW_DOMAIN_MIN_ITEMS {
        return Ok((Vec::new(), taken, routine));
    }
    let v = find(
        nx,
        r#"FIND(?d) WHERE { ?d {type: "Domain"} } LIMIT 500"#,
        json!({}),
    )?;
    let covered: HashSet<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|d| {
            theme_stems(&format!(
                "{} {}",
                s(d, &["name"]),
                s(d, &["attributes", "description"])
            ))
        })
        .collect();
    // a person is who an item concerns, not what it is about: the user's
    // or anyone's name is no theme
    // (and the agent's own name, from its identity, is who writes them)
    let people = find(
        nx,
        r#"FIND(?p.name, ?p.attributes.name, ?p.attributes.identity.name, ?p.attributes.aliases) WHERE { ?p {type: "Person"} } LIMIT 5000"#,
        json!({}),
    )?;
    let personal: HashSet<String> = people
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|col| col.as_array().cloned().unwrap_or_default())
        // (a Person's `aliases` are a list of names)
        .flat_map(|n| match n {
            Value::Array(names) => names,
            n => vec![n],
        })
        .filter_map(|n| n.as_str().map(str::to_string))
        .filter(|n| n != "$self")
        // (each word, and the words written as one: `Money Penny` is
        // `MoneyPenny` in the notes)
        .flat_map(|n| {
            let words = similarity::segment::words(&n);
            let joined = (words.len() > 1).then(|| words.concat());
            words.into_iter().chain(joined)
        })
        .collect();
    let domain_text: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            format!(
                "{} {}",
                s(d, &["name"]),
                s(d, &["attributes", "description"])
            )
        })
        .collect();
    // stem → the items that use it, and how often each form is written
    let mut themes: BTreeMap<String, (Vec<usize>, BTreeMap<String, usize>)> = BTreeMap::new();
    // (stem, item) → how often the item says it
    let mut says: HashMap<(String, usize), usize> = HashMap::new();
    let mut add = |key: String, word: String, i: usize| {
        *says.entry((key.clone(), i)).or_default() += 1;
        let e = themes.entry(key).or_default();
        *e.1.entry(word).or_default() += 1;
        if !e.0.contains(&i) {
            e.0.push(i);
        }
    };
    let texts: Vec<String> = left.iter().map(theme_text).collect();
    // German writes its nouns (and names) with a capital, and its verbs,
    // adjectives and adverbs without: in a German text, a theme is a word
    // with a capital, and not one the German texts also write in lower
    // case ("direkt", "aktuell"), capitalised only where it opens a line
    // or a title ("Direkt relevant für …")
    let langs: Vec<Option<crate::analysis::Language>> =
        texts.iter().map(|t| crate::analysis::language(t)).collect();
    let german: Vec<bool> = langs
        .iter()
        .map(|l| l.is_some_and(|l| l.code() == "de"))
        .collect();
    // Vietnamese writes each syllable apart: one alone names nothing
    let vietnamese: Vec<bool> = texts.iter().map(|t| topic_words::vietnamese(t)).collect();
    // the memory's languages, for how common a word is in them
    let mut languages: Vec<crate::analysis::Language> = Vec::new();
    for l in langs.iter().flatten() {
        if !languages.contains(l) {
            languages.push(*l);
        }
    }
    let lower_in_german: HashSet<&str> = texts
        .iter()
        .zip(&german)
        .filter(|(_, de)| **de)
        .flat_map(|(t, _)| t.split_whitespace())
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        // a word of prose, not of an address (`ernst@outlook.de`), a path
        // or code
        .filter(|w| {
            w.chars().next().is_some_and(char::is_lowercase)
                && w.chars().all(|c| c.is_alphabetic() || c == '-')
        })
        .collect();
    // Spanish, Portuguese, Italian and French put an adjective after its
    // noun ("Sesión Extendida", "Arquitectura Empresarial", "datos
    // reales"): a word the Romance texts only ever write right after
    // another word of content (never after an article or a preposition,
    // never opening a phrase) says what kind, not what about
    let romance: Vec<bool> = langs
        .iter()
        .map(|l| l.is_some_and(|l| ["es", "pt", "it", "fr"].contains(&l.code())))
        .collect();
    let modifiers = romance_modifiers(
        texts
            .iter()
            .zip(&romance)
            .filter(|(_, r)| **r)
            .map(|(t, _)| t.as_str()),
    );
    // Japanese writes an action as a noun and する ("削除した", "作成する",
    // "確認済み"): a word some note inflects so is something done, not
    // what the notes are about (the dictionary, made for Chinese, finds
    // such Japanese words rare, so they pass as themes)
    // (only texts with hiragana can: a Chinese memory reads none again)
    let kana: Vec<&String> = texts
        .iter()
        .filter(|t| t.chars().any(|c| ('\u{3041}'..='\u{309F}').contains(&c)))
        .collect();
    let mut done: HashMap<String, bool> = HashMap::new();
    for (i, it) in left.iter().enumerate() {
        // a person is not about a theme: people are filed by what they
        // are linked to (phase 4), never into a domain named for a word
        if it.ty == "Person" {
            continue;
        }
        let text = &texts[i];
        // the item's own type is what it is, not what it is about
        let kind: HashSet<String> = similarity::stems_of(&it.ty);
        // Chinese and Japanese: the text's rarer nouns, segmented by a
        // dictionary (a run of characters between punctuation is a
        // phrase, and a common word such as 工作 says nothing of a topic)
        for w in similarity::segment::cjk_theme_words(text) {
            if personal.contains(&w)
                || topic_words::never_a_theme(&w)
                || domain_text.iter().any(|d| d.contains(&w))
                || *done
                    .entry(w.clone())
                    .or_insert_with(|| kana.iter().any(|t| inflected_as_a_verb(t, &w)))
            {
                continue;
            }
            add(format!("cjk:{w}"), w, i);
        }
        // each word whole, as written: "OpenClaw" is one theme; an
        // identifier (`reply_to_current`, `message_id`) is code, no word;
        // a compound is a name of its own, and its parts are no themes
        // ("Context" of "Minimal → Context-Graph")
        for w in text.split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-') {
            let w = w.trim_matches('-');
            // CJK runs were read above
            if w.is_empty() || similarity::segment::has_cjk(w) || w.contains(['_', '-']) {
                continue;
            }
            let Some(stem) = similarity::stem_whole(w) else {
                continue;
            };
            let w = w.to_string();
            // a number or a date is no theme, nor the kind of record an
            // item is ("episode", "entry", "log"), nor its type ("Person
            // 12" is not about persons)
            if covered.contains(&stem)
                || kind.contains(&stem)
                || w.chars().count() < 4
                || w.chars().any(|c| c.is_ascii_digit())
                || personal.contains(&similarity::normalise(&w))
                // (a name's genitive written on to it, as Swedish, German
                // and Dutch do: "Annas prioriteringar", Anna's priorities)
                || similarity::normalise(&w)
                    .strip_suffix('s')
                    .is_some_and(|n| n.chars().count() >= 3 && personal.contains(n))
                || RECORD_WORDS.contains(&w.to_lowercase().as_str())
                || topic_words::never_a_theme(&w)
                || past_participle(&w)
                || (german[i] && !noun_in_german(&w, &lower_in_german))
                || (vietnamese[i] && topic_words::vietnamese_syllable(&w))
                || modifiers.contains(&stem)
            {
                continue;
            }
            add(stem, w, i);
        }
        // what a title names before its dash or colon ("Le Nez — TikTok
        // видео", "Timly HR - Package System") is its subject: a name of
        // several words is a theme as a whole (its words alone may be too
        // short to be one, or say something else)
        // (not when it names the kind of record the item is: "Security
        // Event — 4:00 AM" is about security)
        if let Some(head) = title_head(&it.name) {
            let key = head.to_lowercase();
            let words = similarity::segment::words(&head);
            if !words.iter().any(|w| personal.contains(w))
                && !head.split_whitespace().any(|w| {
                    RECORD_WORDS.contains(&w.to_lowercase().as_str())
                        || similarity::stem_whole(w).is_some_and(|st| kind.contains(&st))
                })
                && !domain_text.iter().any(|d| d.to_lowercase().contains(&key))
                // (nor a head of modifiers only: "Operativo Empresarial")
                && !words.iter().all(|w| {
                    modifiers.contains(&similarity::stem_whole(w).unwrap_or_else(|| w.to_lowercase()))
                })
                && !theme_stems(&head).iter().all(|st| covered.contains(st))
            {
                add(format!("head:{key}"), head, i);
            }
        }
    }
    // a word most of the items say ("step" in a log of "approved next
    // step: …") is what the memory is, not a part of it: no topic
    let things = left.iter().filter(|it| it.ty != "Person").count();
    // a theme is named as its items most often write it ("Build" in
    // "Overnight Build Restart" and "Build Log", not "building" once)
    let said: HashMap<String, usize> = themes
        .iter()
        .map(|(key, (_, forms))| (key.clone(), forms.values().sum()))
        .collect();
    let best: Vec<(String, (Vec<usize>, String))> = themes
        .into_iter()
        .map(|(key, (items, forms))| {
            let most = forms.values().copied().max().unwrap_or(0);
            let form = forms
                .into_iter()
                .find(|(_, n)| *n == most)
                .map(|(f, _)| f)
                .unwrap_or_default();
            (key, (items, form))
        })
        .filter(|(_, (items, _))| items.len() >= NEW_DOMAIN_MIN_ITEMS)
        .filter(|(_, (items, _))| things < GENERAL_THEME_MIN_ITEMS || items.len() * 2 <= things)
        .collect();
    // a topic is what items are named for: a theme that many of its items
    // say in their names ("Heartbeat 15:50") goes before one their texts
    // only share ("cron" in every heartbeat, "create" in a log of steps)
    let name_stems: Vec<HashSet<String>> = left
        .iter()
        .map(|it| theme_stems(&own_name(&it.name)))
        .collect();
    let carries = |key: &str, i: usize| {
        if let Some(w) = key.strip_prefix("cjk:") {
            own_name(&left[i].name).contains(w)
        } else if let Some(h) = key.strip_prefix("head:") {
            title_head(&left[i].name).is_some_and(|t| t.to_lowercase() == h)
        } else {
            name_stems[i].contains(key)
        }
    };
    let named = |key: &str, items: &[usize]| {
        let n = items.iter().filter(|&&i| carries(key, i)).count();
        n * NAMED_THEME_SHARE >= items.len()
    };
    // a word any text may share ("pattern", "error", "account") says
    // nothing of what its items are about unless they are about it: a
    // theme of a word among the commonest of the memory's languages
    // (`frequency`) is a topic only for the items named for it, saying it
    // again, or saying little else ("started tomatoes for the garden"),
    // and when at least half of its items are, the rest go with them; a
    // word rarer than those ("FortiGate", "heartbeat") is a topic as it is
    let zipf = |word: &str| crate::analysis::frequency::commonest(word, &languages);
    let lengths: Vec<usize> = texts
        .iter()
        .map(|t| {
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .count()
        })
        .collect();
    // (a word of the commonest thousands, "porta" of a firewall's notes,
    // "problem", is said again by any text on anything: only a name says
    // an item is about it)
    let about = |key: &str, i: usize, z: f32| {
        let n = says.get(&(key.to_string(), i)).copied().unwrap_or(0);
        carries(key, i)
            || (z < COMMON_THEME_ZIPF && (n >= 2 || (n >= 1 && n * SHORT_TEXT_WORDS >= lengths[i])))
    };
    let mut best: Vec<(String, (Vec<usize>, String))> = best
        .into_iter()
        .filter_map(|(key, (items, word))| {
            let Some(z) = zipf(&word).filter(|_| !key.contains(':')) else {
                return Some((key, (items, word)));
            };
            let on: Vec<usize> = items
                .iter()
                .copied()
                .filter(|&i| about(&key, i, z))
                .collect();
            // (and a domain's worth of items named for it: "write",
            // "security", "role" of one title or two are not enough)
            let least = if z >= COMMON_THEME_ZIPF {
                NEW_DOMAIN_MIN_ITEMS
            } else {
                2
            };
            if on.len() < least {
                None
            } else if on.len() * 2 >= items.len() {
                Some((key, (items, word)))
            } else if on.len() >= NEW_DOMAIN_MIN_ITEMS {
                Some((key, (on, word)))
            } else {
                None
            }
        })
        .collect();
    // then the theme more items share, then the one they say more often
    // ("PolyCop" twice in each note before the "case" it is said in once),
    // then a title's subject ("Digital Twin Bidirecional") before its words
    best.sort_by_cached_key(|(key, (items, _))| {
        (
            std::cmp::Reverse(named(key, items)),
            std::cmp::Reverse(items.len()),
            std::cmp::Reverse(said.get(key).copied().unwrap_or(0)),
            // (a title's whole subject before any one of its words)
            !key.starts_with("head:"),
            key.clone(),
        )
    });
    // one routine, one domain: a theme whose items mostly already went to
    // a broader theme ("心跳" and "heartbeat" of one check) brings its
    // other items there instead of starting a domain of its own
    // (compared with the items of the group's own theme, so that a group
    // does not snowball through themes that each touch the last one)
    let mut groups: Vec<Group> = Vec::new();
    for (key, (items, word)) in best {
        let home = groups.iter().position(|g| {
            let shared = items.iter().filter(|i| g.seed.contains(i)).count();
            shared * 2 >= items.len()
        });
        let claimed: HashSet<usize> = groups.iter().flat_map(|g| g.items.clone()).collect();
        let more: Vec<usize> = items
            .iter()
            .copied()
            .filter(|i| !claimed.contains(i))
            .collect();
        // a group that would grow past half the items is no longer a
        // part of the memory but what the memory is about (the same
        // bound as for one theme): it keeps what it has
        let home = home.filter(|&h| {
            things < GENERAL_THEME_MIN_ITEMS || (groups[h].items.len() + more.len()) * 2 <= things
        });
        match home {
            Some(h) => {
                groups[h].items.extend(more);
                // the domain's description names its other themes, so
                // that the next cycle files their items there instead of
                // proposing a domain for each
                if groups[h].also.len() < 6 {
                    groups[h].also.push(word);
                }
            }
            None => groups.push(Group {
                items: items.clone(),
                word,
                seed: items,
                also: Vec::new(),
                key,
            }),
        }
    }
    let mut used: HashSet<usize> = HashSet::new();
    let mut drafts = Vec::new();
    let mut member_texts: HashMap<(String, String), Openings> = HashMap::new();
    for Group {
        items,
        word,
        also,
        key,
        ..
    } in groups
    {
        let items: Vec<usize> = items.into_iter().filter(|i| !used.contains(i)).collect();
        if items.len() < NEW_DOMAIN_MIN_ITEMS {
            continue;
        }
        used.extend(items.iter().copied());
        // one routine, one domain across cycles too: a theme that most
        // members of a domain already share is that domain's routine
        // ("alerts" in every heartbeat note filed under Cron), and its
        // items are filed there
        let texts: Vec<&str> = items.iter().map(|&i| left[i].text.as_str()).collect();
        // each item that opens with the routine's own words is filed
        // there; the others may still share a theme of their own
        // (but an item named for this theme, "Security Event — 4:00 AM",
        // is about it, whatever routine its text also mentions)
        let mut items = items;
        if let Some((home, own)) = named_home(&v, &texts) {
            let (home_items, rest): (Vec<usize>, Vec<usize>) = items
                .into_iter()
                .partition(|&i| !carries(&key, i) && !opening_stems(&left[i]).is_disjoint(&own));
            for i in home_items {
                routine.insert(
                    left[i].id.clone(),
                    (
                        home.clone(),
                        format!("it says what {home} is named for, as most items of its theme \"{word}\" do: one routine, one domain"),
                    ),
                );
            }
            items = rest;
        } else if let Some(home) =
            routine_home(nx, &v, &left[items[0]].ty, &key, &word, &mut member_texts)?
        {
            for &i in &items {
                routine.insert(
                    left[i].id.clone(),
                    (
                        home.clone(),
                        format!("it shares the theme \"{word}\" with most of the members of {home}: one routine, one domain"),
                    ),
                );
            }
            items.clear();
        }
        if items.len() < NEW_DOMAIN_MIN_ITEMS {
            continue;
        }
        // a name is written as its items write it: "Llorona" is "La
        // Llorona" in every note
        let word = if key.contains(':') {
            word
        } else {
            let of = |i: usize| [left[i].name.as_str(), left[i].text.as_str()];
            let whole = written_whole(
                &word,
                items.iter().flat_map(|&i| of(i)),
                (0..left.len()).flat_map(of),
            );
            if whole == word {
                written_on(&word, items.iter().map(|&i| left[i].name.as_str()))
            } else {
                whole
            }
        };
        let domain = domain_name(&word);
        let members: Vec<&ItemView> = items.iter().map(|&i| &left[i]).collect();
        let mut commands = vec![
            r#"UPSERT {
  CONCEPT ?domain {
    {type: "Domain", name: :domain}
    SET ATTRIBUTES { description: :description, status: "active" }
  }
}
WITH METADATA { source: "SleepReclassification", author: "$system", created_at: :ts }"#
                .to_string(),
        ];
        let mut params = json!({
            "domain": domain,
            "description": format!(
                "{word}{}: proposed for {} items that share this theme and fit no other domain",
                if also.is_empty() { String::new() } else { format!(" (also {})", also.join(", ")) },
                members.len()
            ),
            "ts": cx.opts.now,
        });
        for (k, m) in members.iter().enumerate() {
            commands.push(format!(
                r#"UPSERT {{
  PROPOSITION ?membership {{
    ({{type: :type_{k}, name: :item_{k}}}, "belongs_to_domain", {{type: "Domain", name: :domain}})
  }}
}}
WITH METADATA {{ source: "SleepReclassification", author: "$system", confidence: 0.6, created_at: :ts }}"#
            ));
            if class == "unsorted" {
                commands.push(format!(
                    r#"DELETE PROPOSITIONS ?link
WHERE {{
  ?link ({{type: :type_{k}, name: :item_{k}}}, "belongs_to_domain", {{type: "Domain", name: "Unsorted"}})
}}"#
                ));
            }
            params[format!("type_{k}")] = json!(m.ty);
            params[format!("item_{k}")] = json!(m.name);
        }
        let names: Vec<String> = members
            .iter()
            .map(|m| format!("{} \"{}\"", m.ty, m.name))
            .collect();
        drafts.push(Draft {
            class: "domain".into(),
            key: format!("new_domain:{}", similarity::normalise(&domain)),
            title: format!("New domain \"{domain}\" for {} items: {}", members.len(), names.join(", ")),
            commands,
            params: pm(params),
            rationale: format!(
                "{} items fit no domain and share the theme \"{word}\", which no domain's name or description covers",
                members.len()
            ),
            evidence: members.iter().map(|m| m.id.clone()).collect(),
            confidence: 0.6,
        });
        taken.extend(members.iter().map(|m| m.id.clone()));
    }
    Ok((drafts, taken, routine))
}

/// Whether a word of a German text can be a noun or a name: it opens
/// with a capital, and is not one the memory's German texts also write in
/// lower case (`Direkt` opening a title), unless it has capitals of its
/// own (`OpenClaw`).
fn noun_in_german(w: &str, lower: &HashSet<&str>) -> bool {
    let mut chars = w.chars();
    if !chars.next().is_some_and(char::is_uppercase) {
        return false;
    }
    !chars.all(char::is_lowercase) || !lower.contains(w.to_lowercase().as_str())
}

/// The words an item's theme is read from.
fn theme_text(it: &ItemView) -> String {
    // an Event's name is made of where it was written (a file name, a
    // heading, a day): its theme is what its text says
    // (and a part of a block, `工作方法论（海星图总结） › Keep`, shares
    // the block's title with its siblings by how it was written: the
    // parts of one block are no theme of several items)
    let text = if it.ty == "Event" && !it.text.trim().is_empty() {
        topic_words::prose(&it.text)
    } else {
        format!("{} {}", own_name(&it.name), topic_words::prose(&it.text))
    };
    // where something was written down (`SOUL.md`, a link) is not what
    // it is about
    let text = topic_words::without_files(&text);
    // nor how its lines are labelled (`**Spec:** …` in every note)
    topic_words::without_labels(&text)
}

/// How nearly always (in tenths of its uses) a word must follow another
/// word of content to be taken for its modifier.
pub const ROMANCE_MODIFIER_TENTHS: usize = 8;

/// The words that texts in a Romance language (nearly) always write right after
/// another word of content, on one line with nothing between (no comma,
/// no mark): modifiers of the word before them. A word after an article,
/// a preposition, a number or a mark, or opening a line, is not one.
fn romance_modifiers<'a>(texts: impl Iterator<Item = &'a str>) -> HashSet<String> {
    // word → (times written, times right after a word of content)
    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    for t in texts {
        for line in t.lines() {
            let mut prev: Option<&str> = None;
            for raw in line.split_whitespace() {
                let opened = raw.trim_start_matches(|c: char| !c.is_alphanumeric());
                let word = opened.trim_end_matches(|c: char| !c.is_alphanumeric());
                let clean = !word.is_empty() && word.chars().all(|c| c.is_alphabetic() || c == '-');
                if clean {
                    // (a mark before it, `(reales`, `**Datos`, opens a phrase)
                    let after = opened.len() == raw.len()
                        && prev.is_some_and(|p| !crate::analysis::never_a_topic(p));
                    // (all of a word's forms together: `Operativo`,
                    // `operativos`)
                    let key = similarity::stem_whole(word).unwrap_or_else(|| word.to_lowercase());
                    let e = seen.entry(key).or_default();
                    e.0 += 1;
                    if after {
                        e.1 += 1;
                    }
                }
                // (a word that a mark ends, `Sesión,`, closes its phrase)
                prev = (clean && opened.len() == word.len()).then_some(word);
            }
        }
    }
    // (nearly always: "NO empresarial" once among "Operativo Empresarial"
    // seven times)
    seen.into_iter()
        .filter(|(_, (n, after))| *n >= 2 && after * 10 >= n * ROMANCE_MODIFIER_TENTHS)
        .map(|(w, _)| w)
        .collect()
}

/// An item's own name: a part of a block is named `Block › Part` (by the
/// import), and only the part is its own.
/// How Japanese goes on after a noun it uses as a verb: する and its
/// forms, できる (can be done), 済み (done).
const VERB_TAILS: [&str; 10] = [
    "する", "した", "して", "しな", "しま", "しよ", "され", "させ", "でき", "済",
];

/// Whether `text` writes `word` (a Chinese or Japanese word) as a verb:
/// followed by one of [`VERB_TAILS`] ("削除したもの", "作成済み").
fn inflected_as_a_verb(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, m)| {
        VERB_TAILS
            .iter()
            .any(|t| text[i + m.len()..].starts_with(t))
    })
}

/// The subject a title names before its dash or colon, if it names one:
/// "2026-02-16 Le Nez — Алгоритм подбора" is about "Le Nez". The day it
/// opens with, an emoji, and a remark in parentheses ("Scoutly (Timly HR)
/// — …") are not part of it; it is two or three words, each opening with
/// a capital (a name, not the start of a sentence: "Работа по ТЗ: …" is
/// not), with no digit and none of four letters or more that is never a
/// theme ("Key Decisions", "Next Steps" are how notes are laid out), and
/// what follows is not empty.
fn title_head(name: &str) -> Option<String> {
    let own = own_name(name);
    let mut own = own.as_str();
    // the day or time it opens with
    while let Some((first, rest)) = own.split_once(' ')
        && first.chars().any(|c| c.is_ascii_digit())
        && first
            .chars()
            .all(|c| c.is_ascii_digit() || "-:./T".contains(c))
    {
        own = rest.trim_start();
    }
    let own = own.trim_start_matches(|c: char| !c.is_alphanumeric());
    let cut = [" — ", " – ", " - ", ": "]
        .iter()
        .filter_map(|sep| own.find(sep).map(|i| (i, sep.len())))
        .min()?;
    let (head, rest) = (&own[..cut.0], &own[cut.0 + cut.1..]);
    if !rest.chars().any(char::is_alphanumeric) {
        return None;
    }
    let head = match head.find(['(', '（']) {
        Some(i) => &head[..i],
        None => head,
    };
    let head = head.trim().trim_end_matches(|c: char| !c.is_alphanumeric());
    let words: Vec<&str> = head.split_whitespace().collect();
    let named = (2..=3).contains(&words.len())
        && words
            .iter()
            .all(|w| w.chars().next().is_some_and(char::is_uppercase))
        && !head.chars().any(|c| c.is_ascii_digit())
        && !words
            .iter()
            .any(|w| w.chars().count() >= 4 && topic_words::never_a_theme(w))
        && !words.iter().all(|w| topic_words::never_a_theme(w));
    named.then(|| words.join(" "))
}

/// A text cut where a name's words end (an apostrophe is inside one:
/// `O'Brien`); an empty piece is a mark between two cuts.
fn name_pieces(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .collect()
}

/// A name as its texts write it whole: the capitalised word that comes
/// before it in four of five places or more ("La Llorona", "Claude Code"),
/// at least twice, and is itself written before it at least every other
/// time, is part of it ("Agent" of "Market Research Agent Paper
/// validation", said of many other things, is not).
/// (`texts` are its items', `all` every text of the memory that was read.)
fn written_whole<'a>(
    word: &str,
    texts: impl Iterator<Item = &'a str>,
    all: impl Iterator<Item = &'a str>,
) -> String {
    if !word.chars().next().is_some_and(char::is_uppercase) {
        return word.to_string();
    }
    let split = name_pieces;
    let mut before: HashMap<&str, usize> = HashMap::new();
    let mut total = 0;
    for text in texts {
        let words = split(text);
        for (i, w) in words.iter().enumerate() {
            if *w != word {
                continue;
            }
            total += 1;
            // (the word right before, with nothing but a space between:
            // an empty piece is a mark)
            if let Some(p) = i.checked_sub(1).map(|j| words[j])
                && !p.is_empty()
                && text.contains(&format!("{p} {word}"))
            {
                *before.entry(p).or_default() += 1;
            }
        }
    }
    let Some((p, n)) = before.into_iter().max_by_key(|(p, n)| (*n, *p)) else {
        return word.to_string();
    };
    if n < 2
        || n * 5 < total * 4
        || !p.chars().next().is_some_and(char::is_uppercase)
        || !p.chars().all(char::is_alphabetic)
    {
        return word.to_string();
    }
    // how often the memory writes it, and how often before the word
    let (mut alone, mut paired) = (0, 0);
    for text in all {
        let words = split(text);
        for (i, w) in words.iter().enumerate() {
            if *w == p {
                alone += 1;
                if words.get(i + 1) == Some(&word) {
                    paired += 1;
                }
            }
        }
    }
    if paired * 2 >= alone {
        format!("{p} {word}")
    } else {
        word.to_string()
    }
}

/// A name as its items are named: the capitalised word that follows it
/// in four of five of their names that say it, at least twice ("Light
/// Sleep", "Digital Twin", "Lofi Shaman"), unless that word says what was
/// done to it ("Account Created"), the kind of record the items are
/// ("Security Event") or is a word of no topic. Written as the
/// names write it.
fn written_on<'a>(word: &str, names: impl Iterator<Item = &'a str>) -> String {
    let lower = word.to_lowercase();
    let mut after: HashMap<(&str, &str), usize> = HashMap::new();
    let mut total = 0;
    for name in names {
        let words = name_pieces(name);
        for (i, w) in words.iter().enumerate() {
            if w.to_lowercase() != lower {
                continue;
            }
            total += 1;
            if let Some(q) = words.get(i + 1)
                && !q.is_empty()
                && name.contains(&format!("{w} {q}"))
            {
                *after.entry((w, q)).or_default() += 1;
            }
        }
    }
    match after.into_iter().max_by_key(|(pair, n)| (*n, *pair)) {
        Some(((w, q), n))
            if n >= 2
                && n * 5 >= total * 4
                && w.chars().next().is_some_and(char::is_uppercase)
                && q.chars().next().is_some_and(char::is_uppercase)
                && q.chars().count() >= 3
                && q.chars().all(char::is_alphabetic)
                && !past_participle(q)
                && !RECORD_WORDS.contains(&q.to_lowercase().as_str())
                && !topic_words::never_a_theme(q) =>
        {
            format!("{w} {q}")
        }
        _ => word.to_string(),
    }
}

fn own_name(name: &str) -> String {
    topic_words::without_dated_remarks(name.rsplit(" › ").next().unwrap_or(name))
}

/// A theme as a domain's name: its first letter capitalised, a word
/// shouted in capitals written as a word ("LEARNING" is "Learning"; an
/// acronym of four letters or fewer, "GEO", stays).
fn domain_name(word: &str) -> String {
    let shouted = word.chars().count() > 4
        && word.chars().any(char::is_alphabetic)
        && !word.chars().any(char::is_lowercase);
    let mut chars = word.chars();
    match chars.next() {
        Some(c) if shouted => c
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A text's stems, its words split (camel case too) and whole: what a
/// theme or a domain's name is compared with.
fn theme_stems(text: &str) -> HashSet<String> {
    let mut out = similarity::stems_of(text);
    out.extend(
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty() && !similarity::segment::has_cjk(w))
            .filter_map(similarity::stem_whole),
    );
    out
}

/// What an item opens with, its name and its text's first line: a note
/// of a routine says so there ("Heartbeat 18:00", "Heartbeat check: …"),
/// where a note that only mentions the routine in passing does not.
fn opening_stems(it: &ItemView) -> HashSet<String> {
    theme_stems(&opening(&it.name, &it.text))
}

/// A name and the first line of its text (up to 160 characters).
fn opening(name: &str, text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first: String = first.chars().take(160).collect();
    format!("{name} {first}")
}

/// The domain (not a system one) whose name's words, or the first theme
/// its description lists as `(also …)`, at least half of these texts
/// contain, if any: heartbeat notes whose word for this cycle is "alerts"
/// still belong to the domain named for their routine.
fn named_home(domains: &Value, texts: &[&str]) -> Option<(String, HashSet<String>)> {
    let stems: Vec<HashSet<String>> = texts.iter().map(|t| similarity::stems_of(t)).collect();
    for d in domains.as_array().into_iter().flatten() {
        let name = s(d, &["name"]);
        if SYSTEM_DOMAINS.contains(&name.as_str()) || s(d, &["attributes", "status"]) == "archived"
        {
            continue;
        }
        // and the strongest of the themes merged into it, first in its
        // description's `(also …)`
        let first_also = s(d, &["attributes", "description"])
            .split_once("(also ")
            .and_then(|(_, rest)| rest.split([',', ')']).next().map(str::to_string))
            .unwrap_or_default();
        let own = similarity::stems_of(&format!("{name} {first_also}"));
        if own.is_empty() {
            continue;
        }
        let sharing = stems.iter().filter(|t| !t.is_disjoint(&own)).count();
        if sharing * 2 >= texts.len() {
            return Some((name, own));
        }
    }
    None
}

/// The domain (not a system one) at least half of whose members of type
/// `ty` (three or more of them) open with a theme (in their names or first
/// lines: a routine's notes say it there), if any. A word their texts
/// only mention ("sent to Telegram" at the end of each brief) is no
/// routine.
fn routine_home(
    nx: &mut Nexus,
    domains: &Value,
    ty: &str,
    key: &str,
    word: &str,
    cache: &mut HashMap<(String, String), Openings>,
) -> KipResult<Option<String>> {
    for d in domains.as_array().into_iter().flatten() {
        let name = s(d, &["name"]);
        if SYSTEM_DOMAINS.contains(&name.as_str()) || s(d, &["attributes", "status"]) == "archived"
        {
            continue;
        }
        let at = (ty.to_string(), name.clone());
        if !cache.contains_key(&at) {
            let m = find(
                nx,
                r#"FIND(?m) WHERE { ?m {type: :t} (?m, "belongs_to_domain", {type: "Domain", name: :d}) } LIMIT 40"#,
                json!({"t": ty, "d": name}),
            )?;
            // what each member opens with: its name and its first line
            let texts = m
                .as_array()
                .into_iter()
                .flatten()
                .map(|x| {
                    let o = opening(&s(x, &["name"]), &said(x).unwrap_or_default());
                    let stems = theme_stems(&o);
                    (o, stems)
                })
                .collect();
            cache.insert(at.clone(), texts);
        }
        let texts = &cache[&at];
        if texts.len() < NEW_DOMAIN_MIN_ITEMS {
            continue;
        }
        let sharing = texts
            .iter()
            .filter(|(text, stems)| {
                if key.starts_with("cjk:") {
                    text.contains(word)
                } else if key.starts_with("head:") {
                    text.to_lowercase().contains(&word.to_lowercase())
                } else {
                    stems.contains(key)
                }
            })
            .count();
        if sharing * 2 >= texts.len() {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_romance_word_nearly_always_after_another_is_its_modifier() {
        let texts = [
            "## Memoria Sesión Extendida — 2026-05-03\nDatos reales del documento: puntajes reales, **Datos REALES**",
            "Arquitectura Empresarial ZEUS; Sistema Operativo Empresarial; Memoria Empresarial; NO empresarial; Evolución empresarial",
            "Criei monitor de incentivos solares. Os incentivos de Portugal; Incentivos fiscais",
        ];
        let m = romance_modifiers(texts.iter().copied());
        let modifier = |w: &str| m.contains(&similarity::stem_whole(w).expect("a word"));
        for w in ["reales", "REALES", "empresarial"] {
            assert!(modifier(w), "{w}: {m:?}");
        }
        // (a noun after an article or a preposition, or opening a line, is none)
        for w in ["incentivos", "memoria", "datos", "zeus"] {
            assert!(!modifier(w), "{w}: {m:?}");
        }
    }

    #[test]
    fn a_japanese_noun_followed_by_suru_is_an_action() {
        assert!(inflected_as_a_verb("不要なファイルを削除したもの", "削除"));
        assert!(inflected_as_a_verb("LPを作成する", "作成"));
        assert!(inflected_as_a_verb("設定は確認済み", "確認"));
        assert!(!inflected_as_a_verb("箱根ガラスの森リゾート", "箱根"));
        assert!(!inflected_as_a_verb("顧客として扱う", "顧客"));
        assert!(!inflected_as_a_verb("心跳检查正常", "心跳"));
    }

    #[test]
    fn a_name_is_written_whole_when_its_texts_always_do() {
        let notes = [
            "Synced La Llorona.",
            "La Llorona sync failed; La Llorona retried",
            "Market Research Agent Paper validation; Agent Paper run",
        ];
        let all = [
            notes[0],
            notes[1],
            notes[2],
            "Agent rules, Agent profile, Agent source, Agent handoff",
        ];
        let whole = |w: &str| written_whole(w, notes.iter().copied(), all.iter().copied());
        assert_eq!(whole("Llorona"), "La Llorona");
        // "Agent" is said of many other things
        assert_eq!(whole("Paper"), "Paper");
        assert_eq!(whole("sync"), "sync");
        assert_eq!(whole("Research"), "Research");
    }

    #[test]
    fn a_name_is_written_on_when_the_items_names_always_do() {
        let on = |w: &str, names: &[&str]| written_on(w, names.iter().copied());
        let sleep = ["2026-04-16 Light Sleep", "2026-04-17 Light Sleep", "notes"];
        assert_eq!(on("light", &sleep), "Light Sleep");
        let shaman = [
            "Lofi Shaman Video COMPLETE",
            "Lofi Shaman Animation v2",
            "Lofi Shaman YouTube Channel Progress",
            "Vercel Deployment",
        ];
        assert_eq!(on("Lofi", &shaman), "Lofi Shaman");
        // what was done to it, once, or less than four times in five
        let accounts = ["Proton Mail Account Created", "Google Account Created"];
        assert_eq!(on("Account", &accounts), "Account");
        assert_eq!(on("Lofi", &shaman[..1]), "Lofi");
        let security = ["Security Event — 9:53 PM", "Security Event — 1:25 AM"];
        assert_eq!(on("Security", &security), "Security");
        let mixed = ["Build Log", "Build Log", "Build Failure", "Build Notes"];
        assert_eq!(on("Build", &mixed), "Build");
    }

    #[test]
    fn a_title_names_its_subject_before_its_dash() {
        let head = |n: &str| title_head(n);
        assert_eq!(
            head("2026-02-16 Le Nez — Алгоритм подбора парфюма 🌸").as_deref(),
            Some("Le Nez")
        );
        assert_eq!(
            head("2026-02-16 Scoutly (Timly HR) — Баг исправлен ✅"),
            None,
            "one word: a word theme"
        );
        assert_eq!(
            head("Timly HR - Package System").as_deref(),
            Some("Timly HR")
        );
        assert_eq!(
            head("memory/2026-02-10.md › Timly HR — Работа по ТЗ").as_deref(),
            Some("Timly HR")
        );
        // a sentence, a layout heading, nothing after the dash, a number
        assert_eq!(head("Работа по ТЗ: пакеты"), None);
        assert_eq!(head("Key Decisions: none"), None);
        assert_eq!(head("Next Steps — review"), None);
        assert_eq!(head("Le Nez — ✅"), None);
        assert_eq!(head("Release 2 Plan — notes"), None);
        assert_eq!(head("Le Nez iOS app"), None);
    }

    #[test]
    fn a_domain_is_named_as_a_word_not_shouted() {
        assert_eq!(domain_name("LEARNING"), "Learning");
        assert_eq!(domain_name("GEO"), "GEO");
        assert_eq!(domain_name("polyCop"), "PolyCop");
        assert_eq!(domain_name("心跳检查记录"), "心跳检查记录");
        assert_eq!(domain_name("ÉTÉ"), "ÉTÉ");
        assert_eq!(domain_name("heartbeat"), "Heartbeat");
    }

    #[test]
    fn a_product_name_is_one_theme() {
        let t = theme_stems("OpenClaw and PolyCop");
        assert!(t.contains("openclaw") && t.contains("polycop"), "{t:?}");
    }
}
