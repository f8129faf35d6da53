//! Which language a text is written in, when it is one the heuristic
//! reasoner's cues do not read.

/// The languages the extraction's cues are written in (whatlang's names): what
/// the heuristic reasoner can read.
const READ_LANGUAGES: &[whatlang::Lang] = &[
    whatlang::Lang::Eng,
    whatlang::Lang::Fra,
    whatlang::Lang::Deu,
    whatlang::Lang::Spa,
    whatlang::Lang::Por,
    whatlang::Lang::Ita,
    whatlang::Lang::Rus,
    whatlang::Lang::Cmn,
    whatlang::Lang::Jpn,
    whatlang::Lang::Kor,
];

/// The language a text is written in when the heuristic reasoner reads
/// none of its cues (Hebrew, Indonesian, Turkish, …), by its English name:
/// it cannot say such a text holds nothing durable. `None` when it is in
/// a language it reads, or cannot be placed reliably (a few words, mixed
/// scripts), which is read as it always was.
pub fn unread_language(text: &str) -> Option<&'static str> {
    // (what the gateway says a message carried, `[media attached:
    // C:\Users\…\file.jpg (image/jpeg)]`, and the files and addresses a
    // text names are no words of its language)
    static MARKER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let marker = MARKER.get_or_init(|| {
        regex::Regex::new(r"\[media attached[^\]\n]*\]").expect("the marker pattern")
    });
    let prose = crate::sleep::topic_words::without_files(&crate::sleep::topic_words::prose(
        &marker.replace_all(text, " "),
    ));
    // letters by script: a text whose letters are for a good part in a
    // script no cue is written in (Hebrew, Arabic, Thai) is in that
    // script's language; one with Chinese, Japanese, Korean or Cyrillic
    // in it is read (a Chinese note full of tickers and code is no
    // Vietnamese, whatever the Latin letters look like)
    let (mut letters, mut other, mut read_script) = (0usize, 0usize, 0usize);
    for c in prose.chars().filter(|c| c.is_alphabetic()) {
        letters += 1;
        if crate::sleep::topic_words::unweighed_script(c.encode_utf8(&mut [0; 4])) {
            other += 1;
        } else if !(c as u32 <= 0x024F || (0x1E00..=0x1EFF).contains(&(c as u32))) {
            read_script += 1;
        }
    }
    if letters < 20 {
        return None;
    }
    let info = whatlang::detect(&prose)?;
    if other * 10 >= letters * 3 {
        return (!READ_LANGUAGES.contains(&info.lang())).then(|| info.lang().eng_name());
    }
    if read_script * 10 >= letters {
        return None;
    }
    // Latin letters: a language none of the cues is in, placed with
    // confidence, in a text that is not English with a few words of
    // another (English's commonest words make up a good part of any
    // English text, and of hardly any other)
    let english = crate::analysis::english_stop_share(&prose);
    (info.is_reliable()
        && info.confidence() >= 0.9
        && english < 0.05
        && !READ_LANGUAGES.contains(&info.lang()))
    .then(|| info.lang().eng_name())
}
