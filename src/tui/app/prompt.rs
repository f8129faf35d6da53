//! The console's prompts: what the operator types before an explanation
//! or an import, its keys (Tab completes a folder from the disk, a
//! concept from the memory) and its box.

use super::*;

impl App {
    /// Keys while the operator types what to explain.
    pub(super) fn ask_key(&mut self, key: KeyEvent) {
        let Some((ask, input)) = &mut self.ask else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.ask = None,
            KeyCode::Enter => {
                let text = input.trim().to_string();
                let job = match ask {
                    _ if text.is_empty() => return,
                    Ask::Element => Job::WhyOf(text),
                    Ask::Pair(Some(a)) => Job::WhyPair(a.clone(), text),
                    Ask::Pair(None) => match text.split_once(" / ") {
                        Some((a, b)) => Job::WhyPair(a.trim().into(), b.trim().into()),
                        None => {
                            self.say("give two concepts as Type:Name / Type:Name");
                            return;
                        }
                    },
                    Ask::Import => match super::super::component::ImportJob::parse(&text) {
                        Ok(j) => {
                            self.importing = Some((j.cancel.clone(), j.source.clone()));
                            Job::Import(j)
                        }
                        Err(e) => {
                            self.say(e);
                            return;
                        }
                    },
                };
                self.ask = None;
                self.spawn(job);
            }
            KeyCode::Tab => {
                let ask = ask.clone();
                self.complete_ask(&ask);
            }
            _ => {
                super::super::component::edit_line(input, &key);
            }
        }
    }

    /// Tab in a prompt: the import's folder completed from the disk, a
    /// concept (`Type:Name`) from the memory's concepts. One match is
    /// taken whole; several extend the text as far as they agree and are
    /// listed in the status line.
    fn complete_ask(&mut self, ask: &Ask) {
        let Some((_, input)) = &self.ask else { return };
        let input = input.clone();
        let (head, word, cands) = match ask {
            Ask::Import => {
                let at = input.rfind(' ').map_or(0, |i| i + 1);
                let (head, word) = input.split_at(at);
                if word.starts_with("--") || at == 0 {
                    return;
                }
                (head.to_string(), word.to_string(), path_candidates(word))
            }
            Ask::Element | Ask::Pair(_) => {
                if !self.explorer.index_loaded {
                    self.spawn(Job::Index);
                    self.say("reading the memory's concepts: Tab again");
                    return;
                }
                let at = input.rfind(" / ").map_or(0, |i| i + 3);
                let (head, word) = input.split_at(at);
                let w = word.to_lowercase();
                let mut c: Vec<String> = self
                    .explorer
                    .index
                    .iter()
                    .map(|e| format!("{}:{}", e.ty, e.name))
                    .filter(|t| {
                        let t = t.to_lowercase();
                        t.starts_with(&w)
                            || t.split_once(':').is_some_and(|(_, n)| n.starts_with(&w))
                    })
                    .collect();
                c.sort();
                c.dedup();
                (head.to_string(), word.to_string(), c)
            }
        };
        match cands.as_slice() {
            [] => self.say(format!("nothing matches `{word}`")),
            [one] => {
                if let Some((_, input)) = &mut self.ask {
                    *input = format!("{head}{one}");
                }
            }
            many => {
                let common = common_prefix(many);
                if common.chars().count() > word.chars().count()
                    && let Some((_, input)) = &mut self.ask
                {
                    *input = format!("{head}{common}");
                }
                let shown: Vec<&str> = many.iter().take(6).map(String::as_str).collect();
                self.say(format!(
                    "{} match: {}{}",
                    many.len(),
                    shown.join("  "),
                    if many.len() > 6 { "  …" } else { "" }
                ));
            }
        }
    }

    pub(super) fn render_ask(&self, f: &mut Frame, area: Rect) {
        let Some((ask, input)) = &self.ask else {
            return;
        };
        let question = match ask {
            Ask::Element => "why? an element: C:12, P:40 or Type:Name".to_string(),
            Ask::Pair(Some(a)) => format!("why is {a} not merged with (Type:Name)"),
            Ask::Pair(None) => "why not merged? Type:Name / Type:Name".to_string(),
            Ask::Import => {
                "import: openclaw DIR or engram DIR (then --user NAME, --extra-path PATH, --dry-run)".to_string()
            }
        };
        let enter = if *ask == Ask::Import {
            " Enter import · Esc cancel · ^U clear "
        } else {
            " Enter explain · Esc cancel · ^U clear "
        };
        let width = if area.width < 14 {
            area.width
        } else {
            (area.width - 4).min(100)
        };
        let rect = Rect {
            x: area.x + (area.width.saturating_sub(width)) / 2,
            y: area.y + area.height / 3,
            width,
            height: 3.min(area.height),
        };
        f.render_widget(Clear, rect);
        let room = (width as usize).saturating_sub(4);
        let chars: Vec<char> = input.chars().collect();
        let shown: String = chars[chars.len().saturating_sub(room)..].iter().collect();
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::raw(shown),
                Span::styled("▏", theme::accent()),
            ]))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme::border(true))
                    .title(Span::styled(format!(" {question} "), theme::title()))
                    .title_bottom(Span::styled(enter, theme::dim())),
            ),
            rect,
        );
    }
}

/// What a typed path could be: the entries of its folder that start with
/// its last part, folders ending in `/` (hidden ones only when asked for
/// with a leading `.`), sorted; at most 200.
fn path_candidates(word: &str) -> Vec<String> {
    let (dir, part) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word),
    };
    let base = if dir.is_empty() { "." } else { dir };
    let base = match base.strip_prefix("~/") {
        Some(rest) => std::env::var("HOME").map_or(base.to_string(), |h| format!("{h}/{rest}")),
        None => base.to_string(),
    };
    let Ok(rd) = std::fs::read_dir(&base) else {
        return vec![];
    };
    let mut out: Vec<String> = rd
        .filter_map(Result::ok)
        .take(10_000)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            if !name.starts_with(part) || (name.starts_with('.') && !part.starts_with('.')) {
                return None;
            }
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            Some(format!("{dir}{name}{}", if is_dir { "/" } else { "" }))
        })
        .collect();
    out.sort();
    out.truncate(200);
    out
}

/// The longest text every candidate starts with.
fn common_prefix(items: &[String]) -> String {
    let Some(first) = items.first() else {
        return String::new();
    };
    let mut n = first.chars().count();
    for it in &items[1..] {
        n = n.min(
            first
                .chars()
                .zip(it.chars())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    first.chars().take(n).collect()
}
