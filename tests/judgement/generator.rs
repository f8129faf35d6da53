//! Synthetic memories with planted defects and look-alike traps, from a
//! seed: an assistant's notes on a musician's life, with names drawn from
//! several languages and forms, random noise, and in every class the cases
//! a sleep cycle must find and the ones it must leave alone.

use serde_json::{Map, Value, json};
use somnus::Nexus;
use somnus::Response;
use somnus::protocol::{Outcome, Request};

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }
    pub fn next(&mut self) -> u64 {
        // SplitMix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() % 10_000) as f64 / 10_000.0 < p
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }
}

/// Given names and the forms people go by.
const NICKNAMES: &[(&str, &[&str])] = &[
    ("Elizabeth", &["Liz", "Beth", "Betty"]),
    ("Robert", &["Bob", "Rob"]),
    ("William", &["Bill", "Will"]),
    ("Margaret", &["Peggy", "Maggie"]),
    ("Katherine", &["Kate", "Kathy"]),
    ("Alexander", &["Alex", "Sasha"]),
    ("Michael", &["Mike"]),
    ("James", &["Jim", "Jamie"]),
    ("Thomas", &["Tom"]),
    ("Christopher", &["Chris"]),
    ("Jennifer", &["Jen", "Jenny"]),
    ("Richard", &["Rick"]),
    ("Victoria", &["Vicky"]),
    ("Nicholas", &["Nick"]),
    ("Susan", &["Sue"]),
    ("Daniel", &["Dan"]),
    ("Rebecca", &["Becky"]),
    ("Samuel", &["Sam"]),
    ("Edward", &["Ted"]),
    ("Patricia", &["Patty"]),
];

/// One thing written with and without its accents, and what each note
/// says of it (the second often about another side of it, naming others).
const ACCENTED: &[(&str, &str, &str, &str)] = &[
    (
        "Dvořák Cello Concerto",
        "Dvorak Cello Concerto",
        "Concerto she played in Prague with the Czech Philharmonic",
        "Recording by Rostropovich she listens to before lessons",
    ),
    (
        "Fauré Requiem",
        "Faure Requiem",
        "Choral piece the Uppsala choir sang at Easter",
        "Her mother's favourite, played at the funeral",
    ),
    (
        "Saint-Saëns Organ Symphony",
        "Saint-Saens Organ Symphony",
        "Symphony on the Gothenburg season programme",
        "Piece Sven wants to hear live",
    ),
    (
        "Café Schäfer",
        "Cafe Schafer",
        "Coffee place next to the Berlin Philharmonie",
        "Where she met Giulia after the audition",
    ),
];

/// A name and its short form in a hurried note ("one name extends the
/// other's words"), a slip of the keys, and a name with its alias.
const SHORTENED: &[(&str, &str)] = &[
    ("Elgar Conc", "Elgar Concerto"),
    ("Rehearsal sched", "Rehearsal schedule"),
    ("Postgres", "PostgreSQL"),
    ("Sibelius Symph", "Sibelius Symphony"),
];
const SLIPS: &[(&str, &str)] = &[
    ("Conservatoire orchestra", "Conservatoire orchestar"),
    ("Chamber music weekend", "Chamber musci weekend"),
    ("Rachmaninov Preludes", "Rachmaninov Prelduse"),
];
/// Different things whose names are a slip apart.
const SLIP_TRAPS: &[(&str, &str, &str, &str)] = &[
    (
        "Lindqvist Quartet",
        "Lundqvist Quartet",
        "String quartet from Malmö she coached",
        "Jazz quartet that played at the Bergen wedding",
    ),
    (
        "Holmberg Ensemble",
        "Holmgren Ensemble",
        "Baroque group in Uppsala",
        "Brass band from Leipzig",
    ),
];

/// A person's name in another script and its romanisation.
const SCRIPTS: &[(&str, &str)] = &[
    ("陈静", "Chen Jing"),
    ("王芳", "Wang Fang"),
    ("李娜", "Li Na"),
    ("Галина Вишневская", "Galina Vishnevskaya"),
    ("Даниил Шафран", "Daniil Shafran"),
    ("やまだ はなこ", "Yamada Hanako"),
];

/// Names written surname first by their owners and given name first by
/// others.
const NAME_ORDERS: &[(&str, &str)] = &[
    ("Zhang Wei", "Wei Zhang"),
    ("Nagy Imre", "Imre Nagy"),
    ("Tanaka Yuki", "Yuki Tanaka"),
    ("Kovács Anna", "Anna Kovács"),
];

const GIVEN: &[&str] = &[
    "Farah",
    "Erik",
    "Ingrid",
    "Astrid",
    "Lars",
    "Sven",
    "Björn",
    "Yuki",
    "Hiroshi",
    "Aiko",
    "Chidi",
    "Ngozi",
    "Oluwaseun",
    "José",
    "Lucía",
    "Pilar",
    "Matteo",
    "Giulia",
    "Amélie",
    "Étienne",
    "Zofia",
    "Krzysztof",
    "Mehmet",
    "Aylin",
    "Priya",
    "Arjun",
    "Wei",
    "Mei",
    "Fatima",
    "Omar",
    "Leila",
    "Kwame",
    "Siobhán",
    "Niamh",
    "Øystein",
    "Camille",
    "Hannah",
    "Jonas",
];

const SURNAMES: &[&str] = &[
    "Hartmann",
    "Siddiqui",
    "Okafor",
    "Adeyemi",
    "Tanaka",
    "Watanabe",
    "Moreau",
    "Lefèvre",
    "García",
    "Fernández",
    "Nowak",
    "Wiśniewski",
    "Haddad",
    "Kowalczyk",
    "Rossi",
    "Bianchi",
    "Sjöberg",
    "Lindqvist",
    "Dvořák",
    "Öztürk",
    "Yılmaz",
    "Patel",
    "Sharma",
    "Nakamura",
    "Mensah",
    "O'Brien",
    "MacLeod",
    "Van der Berg",
    "De Luca",
    "Schneider",
    "Becker",
    "Ivanova",
    "Kimura",
    "Achterberg",
    "Delacroix",
    "Castellanos",
    "Halvorsen",
    "Szabó",
];

/// One person's name in two transliterations (given, surname).
type FullName = (&'static str, &'static str);
const TRANSLITERATED: &[(FullName, FullName)] = &[
    (("Mstislav", "Rostropovich"), ("Mstislav", "Rostropowitsch")),
    (("Pyotr", "Tchaikovsky"), ("Pjotr", "Tschaikowsky")),
    (("Fyodor", "Dostoevsky"), ("Fyodor", "Dostoyevsky")),
    (("Sergei", "Rachmaninoff"), ("Sergei", "Rachmaninov")),
    (("Sergei", "Prokofiev"), ("Sergej", "Prokofjew")),
    (("Dmitri", "Shostakovich"), ("Dmitri", "Schostakowitsch")),
    (("Igor", "Stravinsky"), ("Igor", "Strawinsky")),
    (("Modest", "Mussorgsky"), ("Modest", "Mussorgski")),
    (("Natalia", "Gutman"), ("Natalija", "Gutmann")),
];

/// A place's local name and its English exonym.
const EXONYMS: &[(&str, &str)] = &[
    ("Göteborg", "Gothenburg"),
    ("München", "Munich"),
    ("Köln", "Cologne"),
    ("Wien", "Vienna"),
    ("Praha", "Prague"),
    ("Warszawa", "Warsaw"),
    ("København", "Copenhagen"),
    ("Lisboa", "Lisbon"),
    ("Firenze", "Florence"),
    ("Napoli", "Naples"),
    ("Bruxelles", "Brussels"),
    ("Genève", "Geneva"),
];

/// Places written with an abbreviation, and in full.
const ABBREVIATED: &[(&str, &str)] = &[
    ("St Malo", "Saint-Malo"),
    ("St. Ives", "Saint Ives"),
    ("Mt Hood", "Mount Hood"),
    ("Ft Worth", "Fort Worth"),
    ("St-Étienne", "Saint-Étienne"),
    ("Ste-Foy", "Sainte-Foy"),
];

/// Organisations and the initialisms they go by.
const INITIALISMS: &[(&str, &str)] = &[
    ("RNCM", "Royal Northern College of Music"),
    ("RAM", "Royal Academy of Music"),
    ("GSMD", "Guildhall School of Music and Drama"),
    ("LSO", "London Symphony Orchestra"),
    ("COE", "Chamber Orchestra of Europe"),
    ("ASMF", "Academy of St Martin in the Fields"),
    ("NYO", "National Youth Orchestra"),
    ("BBC SO", "BBC Symphony Orchestra"),
    ("SRSO", "Swedish Radio Symphony Orchestra"),
];

/// Venues known with and without a word that says what they are, the
/// word appearing in the short name's description.
const EXTRA_WORD: &[(&str, &str, &str)] = &[
    (
        "Hagabadet",
        "Hagabadet Spa",
        "A day spa in the old bathhouse",
    ),
    (
        "Wigmore",
        "Wigmore Hall",
        "The concert hall on Wigmore Street",
    ),
    ("Tivoli", "Tivoli Gardens", "The gardens and amusement park"),
    (
        "Konserthuset",
        "Konserthuset Stockholm",
        "Concert house of the Stockholm orchestra",
    ),
    ("Steinway", "Steinway & Sons Inc", "Piano maker"),
    (
        "Bärenreiter",
        "Bärenreiter GmbH",
        "Music publisher of the urtext editions",
    ),
];

/// Topics in the singular and the plural.
const PLURALS: &[(&str, &str)] = &[
    ("String quartet", "String quartets"),
    ("Bach suite", "Bach suites"),
    ("Masterclass", "Masterclasses"),
    ("Sight-reading exercise", "Sight-reading exercises"),
    ("Competition entry", "Competition entries"),
];

/// The domains of the memory and the words their members are written in.
pub const DOMAINS: &[(&str, &str, &[&str])] = &[
    (
        "Music",
        "Performances, rehearsals, repertoire and recordings",
        &[
            "rehearsal",
            "concerto",
            "sonata",
            "recital",
            "repertoire",
            "bowing",
            "intonation",
            "orchestra",
            "conductor",
            "cadenza",
            "recording",
            "tour",
            "score",
            "quartet",
            "encore",
        ],
    ),
    (
        "Health",
        "Body, injuries, treatment and wellbeing",
        &[
            "physiotherapy",
            "tendon",
            "shoulder",
            "posture",
            "injury",
            "doctor",
            "stretching",
            "sleep",
            "diet",
            "medication",
            "appointment",
            "massage",
            "wrist",
            "strain",
            "recovery",
        ],
    ),
    (
        "Travel",
        "Journeys, flights, hotels and visas",
        &[
            "flight",
            "hotel",
            "visa",
            "luggage",
            "airport",
            "train",
            "booking",
            "passport",
            "itinerary",
            "layover",
            "checkin",
            "taxi",
            "timezone",
            "jetlag",
            "ferry",
        ],
    ),
    (
        "Teaching",
        "Students, lessons and masterclasses she gives",
        &[
            "student",
            "lesson",
            "pupil",
            "exam",
            "curriculum",
            "feedback",
            "etude",
            "scales",
            "progress",
            "audition",
            "syllabus",
            "homework",
            "beginner",
            "grading",
            "mentoring",
        ],
    ),
    (
        "Finances",
        "Fees, invoices, taxes and contracts",
        &[
            "invoice",
            "fee",
            "tax",
            "contract",
            "payment",
            "royalty",
            "insurance",
            "receipt",
            "budget",
            "accountant",
            "salary",
            "expense",
            "pension",
            "deposit",
            "refund",
        ],
    ),
];

/// A theme no domain covers, for a new domain: items that share its word.
const THEMES: &[(&str, &[&str])] = &[
    (
        "garden",
        &[
            "Tomato seedlings|started tomatoes for the garden",
            "Compost bin|compost for the garden beds",
            "Allotment plot|the garden plot by the river",
            "Rose pruning|pruning the garden roses in March",
        ],
    ),
    (
        "sailing",
        &[
            "Dinghy course|sailing course on the lake",
            "Life jacket|bought for sailing weekends",
            "Harbour berth|a berth for the sailing boat",
            "Knot practice|bowline and reef knots for sailing",
        ],
    ),
];

const NOISE_WORDS: &[&str] = &[
    "morning", "window", "yellow", "notebook", "bicycle", "umbrella", "kitchen", "balcony",
    "library", "coffee", "letter", "candle", "ribbon", "blanket", "mirror", "pencil",
];

#[derive(Debug, Default)]
pub struct Planted {
    /// (type, name a, name b): must be merged
    pub duplicates: Vec<(String, String, String)>,
    /// (type, name a, name b): must not be merged
    pub duplicate_traps: Vec<(String, String, String)>,
    /// (subject, predicate, object a, object b, verdicts that would be
    /// wrong)
    pub contradictions: Vec<(String, String, String, String, Vec<&'static str>)>,
    /// (subject, predicate, object a, object b): not a conflict
    pub contradiction_traps: Vec<(String, String, String, String)>,
    /// (type, name, expected domain or "Unsorted")
    pub orphans: Vec<(String, String, String)>,
    /// (type, name, expected domain; "*theme" for a new domain; "" for
    /// staying with a logged reason)
    pub unsorted: Vec<(String, String, String)>,
}

pub struct Gen {
    pub rng: Rng,
    pub planted: Planted,
    used: std::collections::HashSet<String>,
    people: Vec<String>,
    pub kml: Vec<(String, Value)>,
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A JSON object as KIP `key: value` pairs, nulls left out.
fn kv(v: &Value) -> String {
    v.as_object()
        .map(|o| {
            o.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            planted: Planted::default(),
            used: Default::default(),
            people: Vec::new(),
            kml: Vec::new(),
        }
    }

    fn fresh(&mut self, name: &str) -> bool {
        self.used.insert(somnus::sleep::similarity::normalise(name))
    }

    fn sentence(&mut self, words: &[&str], n: usize) -> String {
        let mut w: Vec<&str> = (0..n).map(|_| *self.rng.pick(words)).collect();
        w.dedup();
        let mut s = w.join(" ");
        if let Some(c) = s.get(..1) {
            s = c.to_uppercase() + &s[1..];
        }
        s
    }

    fn concept(&mut self, ty: &str, name: &str, attrs: Value, domain: Option<&str>) {
        let attrs = kv(&attrs);
        let set = if attrs.is_empty() {
            String::new()
        } else {
            format!(" SET ATTRIBUTES {{ {attrs} }}")
        };
        let dom = domain
            .map(|d| {
                format!(
                    r#" SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: {}}}) }}"#,
                    q(d)
                )
            })
            .unwrap_or_default();
        self.kml.push((
            format!(
                "UPSERT {{ CONCEPT ?c {{ {{type: {}, name: {}}}{set}{dom} }} }}",
                q(ty),
                q(name)
            ),
            json!({}),
        ));
    }

    fn link(&mut self, s: (&str, &str), p: &str, o: (&str, &str), meta: Value) {
        let m = kv(&meta);
        let with = if m.is_empty() {
            String::new()
        } else {
            format!(" WITH METADATA {{ {m} }}")
        };
        self.kml.push((
            format!(
                "UPSERT {{ PROPOSITION ?l {{ ({{type: {}, name: {}}}, {}, {{type: {}, name: {}}}) }}{with} }}",
                q(s.0),
                q(s.1),
                q(p),
                q(o.0),
                q(o.1)
            ),
            json!({}),
        ));
    }

    fn person_name(&mut self) -> String {
        loop {
            let g = if self.rng.chance(0.4) {
                self.rng.pick(NICKNAMES).0
            } else {
                *self.rng.pick(GIVEN)
            };
            let n = format!("{g} {}", self.rng.pick(SURNAMES));
            if self.fresh(&n) {
                return n;
            }
        }
    }

    fn date(&mut self, year_from: i32, year_to: i32) -> String {
        let y = year_from + self.rng.below((year_to - year_from + 1) as usize) as i32;
        format!(
            "{y}-{:02}-{:02}T10:00:00Z",
            1 + self.rng.below(12),
            1 + self.rng.below(28)
        )
    }

    fn schema(&mut self) {
        let mut defs = String::from("UPSERT {\n");
        for (i, ty) in [
            "Place",
            "Organization",
            "Topic",
            "Setting",
            "Status",
            "Drink",
        ]
        .iter()
        .enumerate()
        {
            defs += &format!(
                "  CONCEPT ?t{i} {{ {{type: \"$ConceptType\", name: \"{ty}\"}} SET ATTRIBUTES {{ description: \"{ty}\" }} }}\n"
            );
        }
        let preds: &[(&str, &str)] = &[
            ("lives_in", r#"cardinality: "single""#),
            ("works_at", r#"cardinality: "single""#),
            ("born_in", r#"cardinality: "single""#),
            ("knows", ""),
            ("studied_at", ""),
            ("performed_at", ""),
            ("visited", ""),
            ("speaks", ""),
            ("drinks", ""),
            ("uses_setting", ""),
            ("has_status", r#"slot_by: "name_prefix""#),
            ("parent_of", ""),
            ("sibling_of", ""),
            ("located_in", r#"cardinality: "single""#),
            ("interested_in", ""),
        ];
        for (i, (p, extra)) in preds.iter().enumerate() {
            let extra = if extra.is_empty() {
                String::new()
            } else {
                format!(", {extra}")
            };
            defs += &format!(
                "  CONCEPT ?p{i} {{ {{type: \"$PropositionType\", name: \"{p}\"}} SET ATTRIBUTES {{ description: \"{p}\"{extra} }} }}\n"
            );
        }
        for (i, (d, desc, _)) in DOMAINS.iter().enumerate() {
            defs += &format!(
                "  CONCEPT ?d{i} {{ {{type: \"Domain\", name: \"{d}\"}} SET ATTRIBUTES {{ description: \"{desc}\" }} }}\n"
            );
        }
        defs += "  CONCEPT ?u { {type: \"Domain\", name: \"Unsorted\"} }\n}";
        self.kml.push((defs, json!({})));
    }

    /// A domain's members: topics written in its words.
    fn domains(&mut self) {
        for (d, _, words) in DOMAINS {
            for _ in 0..6 {
                let name = self.sentence(words, 2);
                if !self.fresh(&name) {
                    continue;
                }
                let desc = self.sentence(words, 5);
                self.concept("Topic", &name, json!({"description": desc}), Some(d));
            }
        }
    }

    fn noise(&mut self) {
        for _ in 0..(30 + self.rng.below(20)) {
            let name = self.person_name();
            let d = self.rng.pick(DOMAINS).0;
            let desc = format!(
                "{} she met through {}",
                self.sentence(NOISE_WORDS, 2),
                self.rng.pick(DOMAINS).2[0]
            );
            self.concept("Person", &name, json!({"description": desc}), Some(d));
            self.people.push(name);
        }
        for _ in 0..(15 + self.rng.below(10)) {
            let name = format!(
                "{} {}",
                self.sentence(NOISE_WORDS, 1),
                self.rng
                    .pick(&["Café", "Studio", "Park", "Bakery", "Bridge"])
            );
            if !self.fresh(&name) {
                continue;
            }
            let desc = self.sentence(NOISE_WORDS, 4);
            let d = self.rng.pick(DOMAINS).0;
            self.concept("Place", &name, json!({"description": desc}), Some(d));
        }
        // random acquaintances
        for _ in 0..40 {
            let a = self.rng.pick(&self.people).clone();
            let b = self.rng.pick(&self.people).clone();
            if a != b {
                self.link(("Person", &a), "knows", ("Person", &b), json!({}));
            }
        }
    }

    /// A duplicate of `(ty, name)` written as `other`, with a description
    /// and neighbours like a second note on the same thing would have.
    fn duplicate(&mut self, ty: &str, name: &str, other: &str, desc: &str, domain: &str) {
        if !self.fresh(name) || !self.fresh(other) {
            return;
        }
        let friend = self.rng.pick(&self.people).clone();
        // a note often says where
        let desc = if self.rng.chance(0.3) {
            let city = *self
                .rng
                .pick(&["Malmö", "Bergen", "Leipzig", "Lyon", "Porto"]);
            format!("{desc}, met in {city}")
        } else {
            desc.to_string()
        };
        let desc = desc.as_str();
        self.concept(ty, name, json!({"description": desc}), Some(domain));
        let second = match self.rng.below(10) {
            0..=4 => format!("{desc}, noted again"),
            5..=6 => String::new(),
            // another note on it, sharing a word with the first
            7..=8 => {
                let said = self.sentence(DOMAINS.iter().find(|d| d.0 == domain).unwrap().2, 4);
                let words: Vec<&str> = desc.split_whitespace().filter(|w| w.len() >= 5).collect();
                match words.first() {
                    Some(w) => format!("{said} ({})", w.trim_matches(',')),
                    None => said,
                }
            }
            // another side of it, naming someone else
            _ => {
                let who = self.rng.pick(&self.people).clone();
                format!("Mentioned by {who} over dinner")
            }
        };
        let second = (!second.is_empty()).then_some(second);
        self.concept(ty, other, json!({"description": second}), Some(domain));
        let p = if ty == "Person" { "knows" } else { "visited" };
        let to = |n: &str| {
            if ty == "Person" {
                ("Person", n.to_string())
            } else {
                (ty, n.to_string())
            }
        };
        let (t1, n1) = to(name);
        self.link(("Person", &friend), p, (t1, &n1), json!({}));
        // a second note is often written from other episodes: the same
        // friend, another one, or none
        let (t2, n2) = to(other);
        match self.rng.below(10) {
            0..=5 => self.link(("Person", &friend), p, (t2, &n2), json!({})),
            6..=7 => {
                let other_friend = self.rng.pick(&self.people).clone();
                if other_friend != friend {
                    self.link(("Person", &other_friend), p, (t2, &n2), json!({}));
                }
            }
            _ => {}
        }
        self.planted
            .duplicates
            .push((ty.into(), name.into(), other.into()));
    }

    fn duplicates(&mut self) {
        let n = 3 + self.rng.below(2);
        for _ in 0..n {
            let (full, nicks) = *self.rng.pick(NICKNAMES);
            let s = *self.rng.pick(SURNAMES);
            let nick = *self.rng.pick(nicks);
            let desc = format!(
                "{} from the {} days",
                self.rng
                    .pick(&["Violinist", "Pianist", "Oboist", "Violist", "Singer"]),
                self.rng.pick(&["conservatoire", "festival", "orchestra"])
            );
            match self.rng.below(4) {
                0 => self.duplicate(
                    "Person",
                    &format!("{full} {s}"),
                    &format!("{nick} {s}"),
                    &desc,
                    "Music",
                ),
                1 => self.duplicate(
                    "Person",
                    &format!("{full} {s}"),
                    &format!("Dr. {full} {s}"),
                    &desc,
                    "Health",
                ),
                2 => self.duplicate(
                    "Person",
                    &format!("{full} {s}"),
                    &format!("{s}, {full}"),
                    &desc,
                    "Music",
                ),
                _ => {
                    // an initial fits one person only, or it is rightly left alone
                    let initial = &full[..1];
                    let surname = somnus::sleep::similarity::normalise(s);
                    let clash = self.used.iter().any(|u| {
                        u.ends_with(&format!(" {surname}"))
                            && u.starts_with(&initial.to_lowercase())
                    });
                    if !clash {
                        self.duplicate(
                            "Person",
                            &format!("{full} {s}"),
                            &format!("{initial}. {s}"),
                            &desc,
                            "Music",
                        );
                    }
                }
            }
        }
        // a single given name, the only one of its kind
        if self.rng.chance(0.7) {
            let (full, nicks) = *self.rng.pick(NICKNAMES);
            // the given name must name one person only, or the single name
            // is ambiguous and rightly left alone
            let variants: Vec<&str> = std::iter::once(full).chain(nicks.iter().copied()).collect();
            let clash = self.used.iter().any(|u| {
                variants.iter().any(|v| {
                    u.starts_with(&format!("{} ", v.to_lowercase())) || u == &v.to_lowercase()
                })
            });
            if !clash {
                let s = *self.rng.pick(SURNAMES);
                let nick = *self.rng.pick(nicks);
                self.duplicate(
                    "Person",
                    &format!("{full} {s}"),
                    nick,
                    "Her stand partner in the quartet",
                    "Music",
                );
            }
        }
        let mut picks: Vec<usize> = (0..TRANSLITERATED.len()).collect();
        self.rng.shuffle(&mut picks);
        for &i in picks.iter().take(2) {
            let ((g1, s1), (g2, s2)) = TRANSLITERATED[i];
            self.duplicate(
                "Person",
                &format!("{g1} {s1}"),
                &format!("{g2} {s2}"),
                "Russian cellist and teacher whose recordings she studies",
                "Music",
            );
        }
        let mut picks: Vec<usize> = (0..EXONYMS.len()).collect();
        self.rng.shuffle(&mut picks);
        for &i in picks.iter().take(2) {
            let (a, b) = EXONYMS[i];
            self.duplicate(
                "Place",
                a,
                b,
                "City where she played on the autumn tour",
                "Travel",
            );
        }
        let (a, b) = *self.rng.pick(ABBREVIATED);
        self.duplicate("Place", a, b, "Summer festival town by the sea", "Travel");
        let mut picks: Vec<usize> = (0..INITIALISMS.len()).collect();
        self.rng.shuffle(&mut picks);
        for &i in picks.iter().take(2) {
            let (a, b) = INITIALISMS[i];
            self.duplicate(
                "Organization",
                b,
                a,
                "Where she studied and later taught",
                "Music",
            );
        }
        let (a, b, d) = *self.rng.pick(EXTRA_WORD);
        self.duplicate("Place", a, b, d, "Music");
        let (a, b) = *self.rng.pick(PLURALS);
        self.duplicate(
            "Topic",
            a,
            b,
            "Practice material for the spring season",
            "Teaching",
        );
        // one thing with and without its accents, two notes on two sides
        let (a, b, da, db) = *self.rng.pick(ACCENTED);
        self.duplicate_described("Topic", a, b, da, db, "Music");
        let (a, b) = *self.rng.pick(SHORTENED);
        self.duplicate("Topic", b, a, "Score for the autumn concert", "Music");
        let (a, b) = *self.rng.pick(SLIPS);
        self.duplicate(
            "Topic",
            a,
            b,
            "Planned with the string department",
            "Teaching",
        );
        if self.fresh("BBC Proms") && self.fresh("The Proms") {
            self.concept(
                "Organization",
                "BBC Proms",
                json!({"description": "Summer concert season in London", "aliases": ["The Proms"]}),
                Some("Music"),
            );
            self.concept(
                "Organization",
                "The Proms",
                json!({"description": "Where she hopes to play one day"}),
                Some("Music"),
            );
            let friend = self.rng.pick(&self.people).clone();
            self.link(
                ("Person", &friend),
                "visited",
                ("Organization", "BBC Proms"),
                json!({}),
            );
            self.planted.duplicates.push((
                "Organization".into(),
                "BBC Proms".into(),
                "The Proms".into(),
            ));
        }
        // a name in its own script and romanised
        let (a, b) = *self.rng.pick(SCRIPTS);
        self.duplicate(
            "Person",
            a,
            b,
            "Cellist she met at the Beijing masterclass",
            "Music",
        );
        // a name written in the order its owner uses and in the other
        if self.rng.chance(0.5) {
            let (a, b) = *self.rng.pick(NAME_ORDERS);
            self.duplicate(
                "Person",
                a,
                b,
                "Visiting professor from the Budapest academy",
                "Music",
            );
        }
        // a title, with notes written months apart on two sides
        if self.rng.chance(0.5) {
            let g = *self.rng.pick(GIVEN);
            let s = *self.rng.pick(SURNAMES);
            self.duplicate_described(
                "Person",
                &format!("{g} {s}"),
                &format!("Dr. {g} {s}"),
                "Her GP in Uppsala",
                "Prescribed the physiotherapy after the Vienna tour",
                "Health",
            );
        }
    }

    /// A duplicate whose two notes say different things of it.
    fn duplicate_described(
        &mut self,
        ty: &str,
        name: &str,
        other: &str,
        da: &str,
        db: &str,
        domain: &str,
    ) {
        if !self.fresh(name) || !self.fresh(other) {
            return;
        }
        self.concept(ty, name, json!({"description": da}), Some(domain));
        self.concept(ty, other, json!({"description": db}), Some(domain));
        let friend = self.rng.pick(&self.people).clone();
        let p = if ty == "Person" { "knows" } else { "visited" };
        self.link(("Person", &friend), p, (ty, name), json!({}));
        if self.rng.chance(0.5) {
            self.link(("Person", &friend), p, (ty, other), json!({}));
        }
        self.planted
            .duplicates
            .push((ty.into(), name.into(), other.into()));
    }

    fn trap(&mut self, ty: &str, a: &str, b: &str, da: &str, db: &str, link: Option<&str>) {
        if !self.fresh(a) || !self.fresh(b) {
            return;
        }
        let d = self.rng.pick(DOMAINS).0;
        self.concept(ty, a, json!({"description": da}), Some(d));
        self.concept(ty, b, json!({"description": db}), Some(d));
        // two things: they know different people
        let x = self.rng.pick(&self.people).clone();
        let mut y = self.rng.pick(&self.people).clone();
        while y == x {
            y = self.rng.pick(&self.people).clone();
        }
        if ty == "Person" {
            self.link((ty, a), "knows", ("Person", &x), json!({}));
            self.link((ty, b), "knows", ("Person", &y), json!({}));
        }
        if let Some(p) = link {
            self.link((ty, a), p, (ty, b), json!({}));
        }
        self.planted
            .duplicate_traps
            .push((ty.into(), a.into(), b.into()));
    }

    fn traps(&mut self) {
        let g = *self.rng.pick(GIVEN);
        self.trap(
            "Person",
            &format!("{g} Lund"),
            &format!("{g} Lundgren"),
            "Luthier in Malmö who rehairs her bows",
            "Accountant at the Gothenburg orchestra office",
            None,
        );
        let g = *self.rng.pick(GIVEN);
        self.trap(
            "Person",
            &format!("{g} Berg"),
            &format!("{g} Borg"),
            "Oboist in the Bergen Philharmonic",
            "Dentist near the Stockholm flat",
            None,
        );
        self.trap(
            "Person",
            "Maria Lopez",
            "Mario Lopez",
            "Soprano in the Madrid production",
            "Sound engineer at the Lisbon studio",
            None,
        );
        self.trap(
            "Person",
            "Jan Novak",
            "Jana Novak",
            "Czech violist in the quartet",
            "Physiotherapist at the Prague clinic",
            None,
        );
        let s = *self.rng.pick(SURNAMES);
        self.trap(
            "Person",
            &format!("Ingrid {s}"),
            &format!("Astrid {s}"),
            "Her older sister, a lawyer",
            "Her younger sister, a nurse",
            Some("sibling_of"),
        );
        let s = *self.rng.pick(SURNAMES);
        self.trap(
            "Person",
            &format!("Lars {s}"),
            &format!("Lars {s} Jr."),
            "Her landlord in Uppsala",
            "The landlord's son, a student",
            Some("parent_of"),
        );
        self.trap(
            "Person",
            "Anna Müller",
            "Anna Miller",
            "Stage manager at the Zurich opera",
            "Pianist from Toronto",
            None,
        );
        // one name, two places
        if self.fresh("Cambridge") {
            self.concept(
                "Place",
                "Cambridge",
                json!({"description": "University city in England", "country": "United Kingdom"}),
                Some("Travel"),
            );
            self.kml.push((
                r#"UPSERT { CONCEPT ?c { {type: "Place", name: "Cambridge, MA"} SET ATTRIBUTES { description: "City across the river from Boston", country: "United States" } } }"#.into(),
                json!({}),
            ));
            self.planted.duplicate_traps.push((
                "Place".into(),
                "Cambridge".into(),
                "Cambridge, MA".into(),
            ));
        }
        self.trap(
            "Place",
            "Lund",
            "Lund Cathedral",
            "University town in Skåne",
            "Romanesque church in the centre",
            Some("located_in"),
        );
        self.trap(
            "Organization",
            "Royal College of Music",
            "Royal Northern College of Music",
            "Conservatoire in South Kensington, London",
            "Conservatoire in Manchester",
            None,
        );
        self.trap(
            "Organization",
            "CSO",
            "City of Stockholm Orchestra",
            "Chicago Symphony Orchestra, heard on tour",
            "Amateur orchestra in Södermalm",
            None,
        );
        self.trap(
            "Topic",
            "Bach",
            "Bach suites",
            "Johann Sebastian Bach, composer",
            "Six suites for solo cello she is recording",
            None,
        );
        self.trap(
            "Place",
            "Hagaparken",
            "Hagabadet Spa",
            "Park north of the city",
            "Day spa in the old bathhouse",
            None,
        );
        // an initial or a single given name that fits two people fits none
        let s = *self.rng.pick(SURNAMES);
        let (e1, e2) = ("Eleanor", "Edgar");
        if self.fresh(&format!("{e1} {s}"))
            && self.fresh(&format!("{e2} {s}"))
            && self.fresh(&format!("E. {s}"))
        {
            for n in [format!("{e1} {s}"), format!("{e2} {s}")] {
                self.concept(
                    "Person",
                    &n,
                    json!({"description": "Cousin on her mother's side"}),
                    Some("Music"),
                );
            }
            self.concept(
                "Person",
                &format!("E. {s}"),
                json!({"description": "Cousin who came to the premiere"}),
                Some("Music"),
            );
            self.planted.duplicate_traps.push((
                "Person".into(),
                format!("E. {s}"),
                format!("{e1} {s}"),
            ));
            self.planted.duplicate_traps.push((
                "Person".into(),
                format!("E. {s}"),
                format!("{e2} {s}"),
            ));
        }
        if self.fresh("Margaret Achterberg-Lind")
            && self.fresh("Margaret Sørensen")
            && self.fresh("Peggy")
        {
            for n in ["Margaret Achterberg-Lind", "Margaret Sørensen"] {
                self.concept(
                    "Person",
                    n,
                    json!({"description": "Friend from the choir"}),
                    Some("Music"),
                );
            }
            self.concept(
                "Person",
                "Peggy",
                json!({"description": "Friend who sings alto"}),
                Some("Music"),
            );
            self.planted.duplicate_traps.push((
                "Person".into(),
                "Peggy".into(),
                "Margaret Sørensen".into(),
            ));
        }
    }

    /// Two people with one name in the two orders, or one letter apart,
    /// or a father and son, who know someone in common.
    fn people_traps(&mut self) {
        let (a, b, da, db) = *self.rng.pick(SLIP_TRAPS);
        self.trap("Organization", a, b, da, db, None);
        let g = *self.rng.pick(GIVEN);
        let s = *self.rng.pick(SURNAMES);
        // two men whose names are the same words in the other order
        self.trap(
            "Person",
            &format!("{g} {s}"),
            &format!("{s} {g}"),
            "Colleague from the orchestra's tour office",
            "Student who wrote about the concert",
            None,
        );
        // a brother and a thesis supervisor one letter apart, both
        // knowing her flatmate
        let mate = self.rng.pick(&self.people).clone();
        let (a, b) = *self.rng.pick(&[
            ("Johan Lind", "Johan Linde"),
            ("Tomas Ek", "Tomas Eck"),
            ("Anders Holm", "Anders Holme"),
        ]);
        if self.fresh(a) && self.fresh(b) {
            self.concept(
                "Person",
                a,
                json!({"description": "Her brother, an engineer"}),
                Some("Music"),
            );
            self.concept(
                "Person",
                b,
                json!({"description": "Supervisor of her thesis"}),
                Some("Music"),
            );
            self.link(("Person", a), "knows", ("Person", &mate), json!({}));
            self.link(("Person", b), "knows", ("Person", &mate), json!({}));
            self.planted
                .duplicate_traps
                .push(("Person".into(), a.into(), b.into()));
        }
        // a father and his son, both knowing the mother
        let (full, _) = *self.rng.pick(NICKNAMES);
        let s = *self.rng.pick(SURNAMES);
        let (father, son) = (format!("{full} {s}"), format!("{full} {s} Jr."));
        let mother = format!("Ingeborg {s}");
        if self.fresh(&father) && self.fresh(&son) && self.fresh(&mother) {
            self.concept("Person", &mother, json!({}), Some("Music"));
            self.concept(
                "Person",
                &father,
                json!({"description": "Retired engineer, her neighbour"}),
                Some("Music"),
            );
            self.concept(
                "Person",
                &son,
                json!({"description": "Plays viola in the youth orchestra"}),
                Some("Music"),
            );
            self.link(("Person", &father), "knows", ("Person", &mother), json!({}));
            self.link(("Person", &son), "knows", ("Person", &mother), json!({}));
            self.planted
                .duplicate_traps
                .push(("Person".into(), father, son));
        }
    }

    fn fact(&mut self, s: &str, p: &str, o: (&str, &str), meta: Value) {
        if self.fresh(&format!("{}|{}", o.0, o.1)) {
            self.concept(
                o.0,
                o.1,
                json!({"description": format!("{} {}", o.0, o.1)}),
                Some("Travel"),
            );
        }
        self.link(("Person", s), p, o, meta);
    }

    fn contradictions(&mut self) {
        let me = self.person_name();
        self.concept(
            "Person",
            &me,
            json!({"description": "The cellist whose notes these are", "person_class": "Human"}),
            Some("Music"),
        );
        let pair = |g: &mut Gen, a: &str, b: &str| {
            let mut xs = vec![a.to_string(), b.to_string()];
            g.rng.shuffle(&mut xs);
            xs
        };
        let mut cities: Vec<&str> = vec![
            "Leeds", "York", "Bristol", "Malmö", "Uppsala", "Bergen", "Turku", "Ghent", "Bologna",
            "Porto",
        ];
        self.rng.shuffle(&mut cities);
        let (old, new) = (self.date(2015, 2019), self.date(2021, 2025));
        // single-valued: moved house
        self.fact(
            &me,
            "lives_in",
            ("Place", cities[0]),
            json!({"observed_at": old, "confidence": 0.8}),
        );
        self.fact(
            &me,
            "lives_in",
            ("Place", cities[1]),
            json!({"observed_at": new, "confidence": 0.8}),
        );
        self.planted.contradictions.push((
            me.clone(),
            "lives_in".into(),
            cities[0].into(),
            cities[1].into(),
            vec![],
        ));
        // a diet changed
        let diets = pair(self, "Vegan", "Flexitarian");
        for (i, d) in diets.iter().enumerate() {
            let obs = if i == 0 { old.clone() } else { new.clone() };
            self.concept("Preference", d, json!({"description": format!("Eats a {} diet", d.to_lowercase()), "category": "diet"}), Some("Health"));
            self.link(
                ("Person", &me),
                "prefers",
                ("Preference", d),
                json!({"observed_at": obs, "confidence": 0.8}),
            );
        }
        self.planted.contradictions.push((
            me.clone(),
            "prefers".into(),
            diets[0].clone(),
            diets[1].clone(),
            vec![],
        ));
        // an explicit slot
        for (i, t) in ["Dark theme", "Light theme"].iter().enumerate() {
            self.concept(
                "Setting",
                t,
                json!({"description": format!("{t} in the notation app"), "slot": "ui theme"}),
                Some("Music"),
            );
            self.link(
                ("Person", &me),
                "uses_setting",
                ("Setting", t),
                json!({"observed_at": if i == 0 { &old } else { &new }}),
            );
        }
        self.planted.contradictions.push((
            me.clone(),
            "uses_setting".into(),
            "Dark theme".into(),
            "Light theme".into(),
            vec![],
        ));
        // a declared name slot
        for (i, t) in ["Visa: pending", "Visa: approved"].iter().enumerate() {
            self.concept(
                "Status",
                t,
                json!({"description": "US work visa"}),
                Some("Travel"),
            );
            self.link(
                ("Person", &me),
                "has_status",
                ("Status", t),
                json!({"observed_at": if i == 0 { &old } else { &new }}),
            );
        }
        self.planted.contradictions.push((
            me.clone(),
            "has_status".into(),
            "Visa: pending".into(),
            "Visa: approved".into(),
            vec![],
        ));
        // a birthplace: cannot change; the newer from an unreliable listing
        self.fact(
            &me,
            "born_in",
            ("Place", cities[2]),
            json!({"observed_at": old, "confidence": 0.95, "source": "passport"}),
        );
        self.fact(&me, "born_in", ("Place", cities[3]), json!({"observed_at": new, "confidence": 0.5, "reliability": 0.4, "source": "web listing"}));
        self.planted.contradictions.push((
            me.clone(),
            "born_in".into(),
            cities[2].into(),
            cities[3].into(),
            vec!["keep_newer"],
        ));
        // an employer from a low-reliability listing
        let orchestras = [
            "Hallé",
            "Bergen Philharmonic",
            "Gothenburg Symphony",
            "Ulster Orchestra",
        ];
        let (o1, o2) = (
            orchestras[self.rng.below(2)],
            orchestras[2 + self.rng.below(2)],
        );
        for o in [o1, o2] {
            self.concept(
                "Organization",
                o,
                json!({"description": format!("{o} orchestra")}),
                Some("Music"),
            );
        }
        self.link(
            ("Person", &me),
            "works_at",
            ("Organization", o1),
            json!({"observed_at": old, "confidence": 0.9, "source": "contract"}),
        );
        self.link(("Person", &me), "works_at", ("Organization", o2), json!({"observed_at": new, "confidence": 0.5, "reliability": 0.3, "source": "web listing"}));
        self.planted.contradictions.push((
            me.clone(),
            "works_at".into(),
            o1.into(),
            o2.into(),
            vec!["keep_newer"],
        ));

        // traps: a move with its end recorded
        let other = self.rng.pick(&self.people).clone();
        let until = self.date(2019, 2019);
        self.fact(
            &other,
            "lives_in",
            ("Place", cities[4]),
            json!({"observed_at": old, "valid_until": until}),
        );
        self.fact(
            &other,
            "lives_in",
            ("Place", cities[5]),
            json!({"observed_at": new}),
        );
        self.planted.contradiction_traps.push((
            other.clone(),
            "lives_in".into(),
            cities[4].into(),
            cities[5].into(),
        ));
        // a pair resolved "both valid" earlier
        let third = loop {
            let p = self.rng.pick(&self.people).clone();
            if p != other {
                break p;
            }
        };
        self.fact(
            &third,
            "lives_in",
            ("Place", cities[6]),
            json!({"observed_at": old, "valid_until": new}),
        );
        self.fact(
            &third,
            "lives_in",
            ("Place", cities[7]),
            json!({"observed_at": new, "valid_from": new}),
        );
        self.planted.contradiction_traps.push((
            third.clone(),
            "lives_in".into(),
            cities[6].into(),
            cities[7].into(),
        ));
        // a shared name prefix where the predicate declares no slot
        for (i, t) in ["Hot drinks: rooibos tea", "Hot drinks: oat flat white"]
            .iter()
            .enumerate()
        {
            self.concept(
                "Drink",
                t,
                json!({"description": "What she orders"}),
                Some("Health"),
            );
            self.link(
                ("Person", &me),
                "drinks",
                ("Drink", t),
                json!({"observed_at": if i == 0 { &old } else { &new }}),
            );
        }
        self.planted.contradiction_traps.push((
            me.clone(),
            "drinks".into(),
            "Hot drinks: rooibos tea".into(),
            "Hot drinks: oat flat white".into(),
        ));
        // Preferences of one category that add up
        for (i, (t, d)) in [
            ("Baroque music", "Loves baroque music on gut strings"),
            ("Jazz standards", "Enjoys jazz standards after concerts"),
        ]
        .iter()
        .enumerate()
        {
            self.concept(
                "Preference",
                t,
                json!({"description": d, "category": "music"}),
                Some("Music"),
            );
            self.link(
                ("Person", &me),
                "prefers",
                ("Preference", t),
                json!({"observed_at": if i == 0 { &old } else { &new }}),
            );
        }
        self.planted.contradiction_traps.push((
            me.clone(),
            "prefers".into(),
            "Baroque music".into(),
            "Jazz standards".into(),
        ));
        // a change already resolved: the older superseded
        let was = loop {
            let p = self.rng.pick(&self.people).clone();
            if p != other && p != third {
                break p;
            }
        };
        self.fact(
            &was,
            "lives_in",
            ("Place", cities[8]),
            json!({"observed_at": old, "superseded": true}),
        );
        self.fact(
            &was,
            "lives_in",
            ("Place", cities[9]),
            json!({"observed_at": new}),
        );
        self.planted.contradiction_traps.push((
            was,
            "lives_in".into(),
            cities[8].into(),
            cities[9].into(),
        ));
        // many languages
        for l in ["Swedish", "English", "German"] {
            self.fact(&me, "speaks", ("Topic", l), json!({"observed_at": new}));
        }
        self.planted.contradiction_traps.push((
            me.clone(),
            "speaks".into(),
            "Swedish".into(),
            "English".into(),
        ));
        // two people, two homes
        self.fact(
            &other,
            "works_at",
            ("Organization", o1),
            json!({"observed_at": new}),
        );
        self.fact(
            &third,
            "works_at",
            ("Organization", o2),
            json!({"observed_at": new}),
        );
        self.planted
            .contradiction_traps
            .push((other, "works_at".into(), o1.into(), o2.into()));
    }

    fn orphans(&mut self) {
        for _ in 0..(2 + self.rng.below(2)) {
            let (d, _, words) = *self.rng.pick(DOMAINS);
            let name = format!("{} notes", self.sentence(words, 1));
            if !self.fresh(&name) {
                continue;
            }
            let desc = self.sentence(words, 4);
            self.concept("Topic", &name, json!({"description": desc}), None);
            self.planted.orphans.push(("Topic".into(), name, d.into()));
        }
        // an orphan nothing describes
        let name = format!("{} {}", self.sentence(NOISE_WORDS, 1), self.rng.below(1000));
        if self.fresh(&name) {
            let desc = self.sentence(NOISE_WORDS, 3);
            self.concept("Topic", &name, json!({"description": desc}), None);
            self.planted
                .orphans
                .push(("Topic".into(), name, "Unsorted".into()));
        }
    }

    fn unsorted(&mut self) {
        for _ in 0..(2 + self.rng.below(2)) {
            let (d, _, words) = *self.rng.pick(DOMAINS);
            // inflected forms of the domain's words: "rehearsals"
            let name = format!("{}s to sort", self.sentence(words, 1));
            if !self.fresh(&name) {
                continue;
            }
            let desc = format!("{}s and {}", self.rng.pick(words), self.sentence(words, 2));
            self.concept(
                "Topic",
                &name,
                json!({"description": desc}),
                Some("Unsorted"),
            );
            self.planted.unsorted.push(("Topic".into(), name, d.into()));
        }
        let (theme, items) = *self.rng.pick(THEMES);
        for it in items.iter().take(3 + self.rng.below(2)) {
            let (name, desc) = it.split_once('|').unwrap();
            if self.fresh(name) {
                self.concept(
                    "Topic",
                    name,
                    json!({"description": desc}),
                    Some("Unsorted"),
                );
                self.planted
                    .unsorted
                    .push(("Topic".into(), name.into(), format!("*{theme}")));
            }
        }
        let name = format!("{} {}", self.sentence(NOISE_WORDS, 2), self.rng.below(1000));
        if self.fresh(&name) {
            self.concept(
                "Topic",
                &name,
                json!({"description": "?"}),
                Some("Unsorted"),
            );
            self.planted
                .unsorted
                .push(("Topic".into(), name, String::new()));
        }
    }

    /// The whole memory, in an order a notebook would have it.
    pub fn build(seed: u64) -> Gen {
        let mut g = Gen::new(seed);
        g.schema();
        g.domains();
        g.noise();
        g.duplicates();
        g.traps();
        g.people_traps();
        g.contradictions();
        g.orphans();
        g.unsorted();
        g
    }

    pub fn load(&self, nx: &mut Nexus) {
        for (cmd, params) in &self.kml {
            let p: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
            let req = Request::command(cmd).with_params(p);
            match nx.execute(&req) {
                Response::Single(Outcome::Ok { .. }) => {}
                other => panic!("{cmd}: {other:?}"),
            }
        }
    }
}
