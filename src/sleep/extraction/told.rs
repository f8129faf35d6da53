//! What the user said in a conversation, read for what the cues do not
//! read: the user's own messages, whether they tell something of the user,
//! and whether they ask the agent to keep something or set it a rule.

/// A conversation's messages (each opens a line with its role: `user
/// (08:50): …`, `assistant: …`) that the user sent, joined.
pub fn users_turns(transcript: &str) -> String {
    // a conversation not written as messages is what it says
    if !transcript.lines().any(|l| turn_opening(l).is_some()) {
        return transcript.to_string();
    }
    let mut out: Vec<&str> = Vec::new();
    let mut user = false;
    // in a quote of someone's message (`> Arif wrote:` and the `> ` lines
    // under it): their words, not the user's
    let mut quote = false;
    for mut line in transcript.lines() {
        let opens = turn_opening(line);
        if let Some((role, rest)) = opens {
            user = role == "user";
            quote = false;
            line = rest;
        }
        let t = line.trim_start();
        if t.starts_with('>') && t.trim_end().ends_with(" wrote:") {
            quote = true;
        }
        if quote && t.starts_with('>') {
            // (a message opened by a quote still opens: its line kept blank)
            if user && opens.is_some() {
                out.push("");
            }
            continue;
        }
        quote = false;
        if user {
            out.push(line);
        }
    }
    out.join("\n")
}

/// `user (08:50): text` → (`user`, `text`).
fn turn_opening(line: &str) -> Option<(&str, &str)> {
    for role in ["user", "assistant"] {
        let Some(rest) = line.strip_prefix(role) else {
            continue;
        };
        let rest = match rest.strip_prefix(" (") {
            Some(r) => r.split_once(')')?.1,
            None => rest,
        };
        if let Some(text) = rest.strip_prefix(": ").or_else(|| rest.strip_prefix(':')) {
            return Some((role, text));
        }
    }
    None
}

/// First-person words (singular) in the languages the cues are listed for
/// and in Polish (`ja`, `mój`, `chcę`: "I", "my", "I want"):
/// a user who says "I" or "my" of more than a few words tells the agent
/// something about themselves, their plans or their work.
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i've", "i'll", "i'd", "my", "me", "mine", "ich", "mein", "meine", "meinen",
    "meinem", "meiner", "mich", "mir", "je", "j'ai", "moi", "mon", "ma", "mes", "yo", "mi", "mis",
    "eu", "meu", "minha", "meus", "minhas", "io", "mio", "mia", "я", "мой", "моя", "моё", "мои",
    "меня", "мне", "ja", "mój", "moja", "moje", "mnie", "mną", "chcę", "jestem", "mam", "wolę",
    "lubię",
];

/// The first-person characters of Chinese, Japanese and Korean, which are
/// written inside the words around them.
const FIRST_PERSON_CJK: &[&str] = &["我", "私", "僕", "俺", "나는", "내가", "저는", "제가"];

/// Whether the user's messages in a conversation tell something of the
/// user: a message of at least eight words (twelve characters in Chinese,
/// Japanese or Korean) that speaks in the first person singular ("Ich werd
/// Talking Heads machen, gleichzeitig will ich …"). A reply ("Ja", "keep
/// going", "1") tells nothing. The heuristic reasoner reads only the cues
/// it has; what the user told of themselves in other words is not
/// "nothing durable".
pub fn tells_of_self(users_turns: &str) -> bool {
    users_turns.split("\n\n").any(|message| {
        let lower = message.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .filter(|w| !w.is_empty())
            .collect();
        let cjk = lower
            .chars()
            .filter(|c| super::super::similarity::segment::is_cjk(*c))
            .count();
        (words.len() >= 8
            && words
                .iter()
                .any(|w| FIRST_PERSON.contains(&w.replace('’', "'").as_str())))
            || (cjk >= 12 && FIRST_PERSON_CJK.iter().any(|p| lower.contains(p)))
    })
}

/// What a user says to set the agent a standing rule or to have it keep
/// something, in the languages the cues are listed for: "remember", "from
/// now on", "stop …ing", "don't ever", "every time". Matched at word
/// boundaries (inside the text for Chinese and Japanese).
const KEEP_ASKED: &[&str] = &[
    "remember",
    "don't forget",
    "do not forget",
    "from now on",
    "going forward",
    "in future",
    "in the future",
    "every time",
    "whenever",
    "stop doing",
    "stop using",
    "don't ever",
    "never again",
    "lembra-te",
    "lembra",
    "lembrar",
    "não te esqueças",
    "a partir de agora",
    "daqui para a frente",
    "daqui em diante",
    "sempre que",
    "deixa de",
    "deixes de",
    "deixasses de",
    "para de",
    "pára de",
    "não voltes a",
    "recuerda",
    "no olvides",
    "a partir de ahora",
    "de ahora en adelante",
    "cada vez que",
    "deja de",
    "no vuelvas a",
    "souviens-toi",
    "rappelle-toi",
    "n'oublie pas",
    "désormais",
    "à partir de maintenant",
    "chaque fois que",
    "arrête de",
    "merk dir",
    "vergiss nicht",
    "ab jetzt",
    "von nun an",
    "künftig",
    "jedes mal",
    "hör auf",
    "ricorda",
    "d'ora in poi",
    "ogni volta che",
    "smetti di",
    "запомни",
    "не забудь",
    "впредь",
    "с этого момента",
    "каждый раз",
    "перестань",
];

/// The same, for languages written without spaces.
const KEEP_ASKED_UNSPACED: &[&str] = &[
    "记住",
    "記住",
    "别忘",
    "別忘",
    "以后",
    "以後",
    "从现在开始",
    "從現在開始",
    "每次",
    "别再",
    "不要再",
    "覚えて",
    "忘れないで",
    "これから",
    "今後",
    "기억해",
    "앞으로",
];

/// Whether the user's messages in a conversation set the agent a standing
/// rule or ask it to keep something ("1 and remember it", "queria muito
/// que deixasses de fazer referências a gremlins", "记住我下周三去上海"):
/// what the heuristic reasoner cannot extract from them is not "nothing
/// durable".
pub fn asks_to_keep(users_turns: &str) -> bool {
    let lower = users_turns.to_lowercase().replace('’', "'");
    let spaced = format!(
        " {} ",
        lower
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '\'' || c == '-' {
                    c
                } else {
                    ' '
                }
            })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    );
    // ("what do you remember about …", "I remember when …": a question
    // or a recollection, not a request)
    let told = |k: &str, at: usize| {
        k != "remember"
            || !spaced[..at]
                .split_whitespace()
                .next_back()
                .is_some_and(|w| RECALLERS.contains(&w))
    };
    KEEP_ASKED.iter().any(|k| {
        let needle = format!(" {k} ");
        spaced.match_indices(&needle).any(|(at, _)| told(k, at))
    }) || KEEP_ASKED_UNSPACED.iter().any(|k| lower.contains(k))
}

/// The words before "remember" that make it a question or a recollection
/// ("do you remember", "I remember"), not a request.
const RECALLERS: &[&str] = &[
    "i", "you", "we", "they", "he", "she", "i'll", "we'll", "i'd", "who", "still",
];

/// Whether a clause names someone else before its cue (a partner, a
/// child, a friend, a colleague: the roles the import reads in people
/// lists): what follows is theirs.
pub(super) fn someone_else(before: &str) -> bool {
    crate::analysis::relations::names_a_relation(before)
}

/// Whether a text states what someone close to the user likes, decided or
/// plans (`their partner: name Bunga, likes food`): the heuristic reasoner
/// files no one's but the user's, and such a text is not "nothing
/// durable".
pub fn tells_of_others(text: &str) -> bool {
    super::clauses(text).into_iter().any(|clause| {
        let lower = format!(" {} ", clause.trim().to_lowercase());
        let spaced = super::EXTRACTION_CUES
            .iter()
            .filter_map(|(c, _)| lower.find(&format!(" {c} ")))
            .min();
        let unspaced = super::EXTRACTION_CUES_UNSPACED
            .iter()
            .filter_map(|(c, _)| lower.find(c))
            .min();
        spaced
            .into_iter()
            .chain(unspaced)
            .min()
            .is_some_and(|i| someone_else(&lower[..i]))
    })
}
