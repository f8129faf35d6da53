//! Colours that read on dark and light terminals: the terminal's own
//! foreground and background, with accents from the 16-colour palette.

use ratatui::style::{Color, Modifier, Style};

pub fn base() -> Style {
    Style::default()
}
pub fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}
pub fn title() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}
pub fn accent() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}
pub fn selected() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}
pub fn border(focused: bool) -> Style {
    if focused {
        Style::default().fg(Color::Cyan)
    } else {
        Style::default().add_modifier(Modifier::DIM)
    }
}
pub fn error() -> Style {
    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
}
pub fn ok() -> Style {
    Style::default().fg(Color::Green)
}
pub fn warn() -> Style {
    Style::default().fg(Color::Yellow)
}
pub fn keyword() -> Style {
    Style::default()
        .fg(Color::Magenta)
        .add_modifier(Modifier::BOLD)
}
pub fn variable() -> Style {
    Style::default().fg(Color::Cyan)
}
pub fn param() -> Style {
    Style::default().fg(Color::Yellow)
}
pub fn string() -> Style {
    Style::default().fg(Color::Green)
}
pub fn type_name() -> Style {
    Style::default()
        .fg(Color::Blue)
        .add_modifier(Modifier::BOLD)
}
pub fn predicate() -> Style {
    Style::default().fg(Color::LightMagenta)
}
pub fn number() -> Style {
    Style::default().fg(Color::LightYellow)
}
pub fn comment() -> Style {
    Style::default().add_modifier(Modifier::DIM | Modifier::ITALIC)
}
pub fn bracket_match() -> Style {
    Style::default().add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
}
pub fn key() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}
