//! Drawing the workbench: the editor with its highlighting and live
//! check, the completion list, the parameters, the status line, the
//! result table and the popups.

use super::*;

impl Workbench {
    pub(super) fn render_editor(&mut self, f: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Editor;
        let verdict = match self.live_check() {
            Check::Empty => Line::default(),
            Check::Unchecked => Line::styled(" long text: checked when run ", theme::dim()),
            Check::Ok(kind) => Line::from(vec![
                Span::styled(" ✓ ", theme::ok()),
                Span::styled(format!("{kind} parses "), theme::dim()),
            ]),
            Check::Err { .. } if !self.missing_params().is_empty() => Line::from(vec![
                Span::styled(
                    format!(
                        " ✗ {} needs a value: press ",
                        self.missing_params()
                            .iter()
                            .map(|m| format!(":{m}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    theme::error(),
                ),
                Span::styled("F3 ", theme::key()),
            ]),
            Check::Err { code, line, column } => {
                let at = match (line, column) {
                    (Some(l), Some(c)) => format!(" at {l}:{c}"),
                    _ => String::new(),
                };
                Line::from(vec![Span::styled(
                    format!(" ✗ {code}{at} "),
                    theme::error(),
                )])
            }
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(focused))
            .title(Span::styled(" KIP ", theme::title()))
            .title_bottom(Line::from(vec![
                Span::styled(" F5", theme::key()),
                Span::raw(" run "),
                Span::styled("F6", theme::key()),
                Span::raw(" dry run "),
            ]))
            .title_bottom(verdict.right_aligned());
        let inner = block.inner(area);
        f.render_widget(block, area);
        let lines = self.editor.lines();
        let ratatui_textarea::DataCursor(crow, ccol) = self.editor.cursor();
        let gutter = 4usize;
        let h = inner.height as usize;
        let w = (inner.width as usize).saturating_sub(gutter);
        if crow < self.scroll.0 {
            self.scroll.0 = crow;
        } else if h > 0 && crow >= self.scroll.0 + h {
            self.scroll.0 = crow + 1 - h;
        }
        if ccol < self.scroll.1 {
            self.scroll.1 = ccol;
        } else if w > 0 && ccol >= self.scroll.1 + w {
            self.scroll.1 = ccol + 1 - w;
        }
        // bracket under or before the cursor
        let line_c = &lines[crow];
        let byte_at =
            |l: &str, c: usize| l.char_indices().nth(c).map(|(b, _)| b).unwrap_or(l.len());
        let mut marks: Vec<(usize, usize)> = Vec::new();
        for probe in [ccol, ccol.wrapping_sub(1)] {
            if probe == usize::MAX {
                continue;
            }
            let b = byte_at(line_c, probe);
            if b < line_c.len()
                && let Some(m) = highlight::matching_bracket(lines, crow, b)
            {
                marks.push((crow, b));
                marks.push(m);
                break;
            }
        }
        let mut out_lines = Vec::new();
        for (i, l) in lines.iter().enumerate().skip(self.scroll.0).take(h) {
            let my_marks: Vec<usize> = marks
                .iter()
                .filter(|(r, _)| *r == i)
                .map(|(_, c)| *c)
                .collect();
            let start_b = byte_at(l, self.scroll.1);
            let visible = &l[start_b..];
            let shifted: Vec<usize> = my_marks
                .iter()
                .filter(|m| **m >= start_b)
                .map(|m| m - start_b)
                .collect();
            let mut spans = vec![Span::styled(format!("{:>3} ", i + 1), theme::dim())];
            spans.extend(highlight::spans(
                visible,
                &self.types,
                &self.predicates,
                &shifted,
            ));
            out_lines.push(Line::from(spans));
        }
        if lines.len() == 1 && lines[0].is_empty() {
            out_lines = vec![Line::from(vec![
                Span::styled("  1 ", theme::dim()),
                Span::styled(
                    "FIND(?n.name) WHERE { ?n {type: \"Person\"} }   (Tab completes, F5 runs)",
                    theme::dim(),
                ),
            ])];
        }
        f.render_widget(Paragraph::new(out_lines), inner);
        if focused && matches!(self.popup, Popup::None) {
            let x = inner.x + gutter as u16 + (ccol - self.scroll.1) as u16;
            let y = inner.y + (crow - self.scroll.0) as u16;
            f.set_cursor_position((x.min(inner.right().saturating_sub(1)), y));
        }
        // the completion list is drawn last, over the results
        self.complete_at = (
            inner.x + gutter as u16 + (ccol - self.scroll.1) as u16,
            inner.y + (crow - self.scroll.0) as u16 + 1,
            area.right(),
        );
    }

    pub(super) fn render_completion(&self, f: &mut Frame) {
        let Popup::Complete {
            items, selected, ..
        } = &self.popup
        else {
            return;
        };
        let (cx, y, right) = self.complete_at;
        let x = cx.min(right.saturating_sub(30));
        let hh = (items.len() as u16 + 2).min(10);
        let rect = Rect {
            x,
            y: y.min(f.area().bottom().saturating_sub(hh)),
            width: 30.min(f.area().width),
            height: hh,
        };
        let lines: Vec<Line> = items
            .iter()
            .enumerate()
            .skip(selected.saturating_sub(7))
            .take(8)
            .map(|(i, s)| {
                Line::styled(
                    s.clone(),
                    if i == *selected {
                        theme::selected()
                    } else {
                        theme::base()
                    },
                )
            })
            .collect();
        f.render_widget(Clear, rect);
        f.render_widget(
            Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" complete ")),
            rect,
        );
    }

    pub(super) fn render_params(&mut self, f: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Params;
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(focused))
            .title(Span::styled(" parameters (JSON) ", theme::title()));
        self.params.set_block(block);
        self.params.set_cursor_line_style(theme::base());
        self.params.set_cursor_style(if focused {
            theme::selected()
        } else {
            theme::base()
        });
        f.render_widget(&self.params, area);
    }

    pub(super) fn status_line(&self) -> Line<'static> {
        if let Some(t) = self.running {
            return Line::from(vec![
                Span::styled(format!(" {} ", SPINNER[self.spinner]), theme::accent()),
                Span::raw(format!("running {:.1} s  ", t.elapsed().as_secs_f64())),
                Span::styled("Esc", theme::key()),
                Span::raw(" cancels"),
            ]);
        }
        match &self.outcome {
            None => Line::styled(" ready", theme::dim()),
            Some(Outcome::Error { code, message, .. }) => Line::from(vec![
                Span::styled(format!(" ✗ {code} "), theme::error()),
                Span::raw(message.clone()),
            ]),
            Some(Outcome::Table {
                table,
                elapsed,
                next_cursor,
                dry_run,
                kind,
                summary,
            }) => {
                let size = match summary {
                    Some(s) => s.clone(),
                    None => format!("{} rows", table.rows.len()),
                };
                let mut v = vec![
                    Span::styled(" ✓ ", theme::ok()),
                    Span::raw(format!(
                        "{kind}{} · {size} · {:.1} ms",
                        if *dry_run {
                            " (dry run, nothing written)"
                        } else {
                            ""
                        },
                        elapsed.as_secs_f64() * 1000.0
                    )),
                ];
                if next_cursor.is_some() {
                    v.push(Span::raw(" · more: "));
                    v.push(Span::styled("n", theme::key()));
                    v.push(Span::raw(" next page"));
                }
                Line::from(v)
            }
        }
    }

    pub(super) fn render_results(&mut self, f: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Results;
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme::border(focused))
            .title(Span::styled(
                format!(" results {}", self.filter.title()),
                theme::title(),
            ));
        let inner = block.inner(area);
        f.render_widget(block, area);
        match &self.outcome {
            None => {
                f.render_widget(
                    Paragraph::new(Line::styled(
                        "Run a command to see its answer here.",
                        theme::dim(),
                    )),
                    inner,
                );
            }
            Some(Outcome::Error {
                code,
                message,
                hint,
            }) => {
                let mut lines = vec![
                    Line::styled(code.to_string(), theme::error()),
                    Line::raw(message.clone()),
                    Line::raw(""),
                ];
                lines.extend(
                    hint.lines()
                        .map(|l| Line::styled(l.to_string(), theme::dim())),
                );
                f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
            }
            Some(Outcome::Table { table, .. }) => {
                let h = inner.height.saturating_sub(1) as usize;
                self.results_height = h;
                if self.row < self.row_offset {
                    self.row_offset = self.row;
                } else if h > 0 && self.row >= self.row_offset + h {
                    self.row_offset = self.row + 1 - h;
                }
                let first_col = self
                    .col
                    .saturating_sub(2)
                    .min(table.headers.len().saturating_sub(1));
                let cols: Vec<usize> = (first_col..table.headers.len()).collect();
                let shown = self.shown();
                let visible: Vec<&Vec<Value>> = shown
                    .iter()
                    .skip(self.row_offset)
                    .take(h)
                    .filter_map(|&i| table.rows.get(i))
                    .collect();
                let mut widths: Vec<u16> = cols
                    .iter()
                    .map(|&c| {
                        let mut w = table.headers[c].chars().count();
                        for r in &visible {
                            w = w.max(cell_text(r.get(c).unwrap_or(&Value::Null)).chars().count());
                        }
                        w.max(4)
                    })
                    .collect::<Vec<usize>>()
                    .into_iter()
                    .map(|w| w as u16)
                    .collect();
                // the width there is: natural widths when they fit, else
                // each column at most its share (never under 40)
                let room = inner.width as usize;
                let natural: usize = widths
                    .iter()
                    .map(|w| *w as usize + 2)
                    .sum::<usize>()
                    .saturating_sub(2);
                if natural > room {
                    let cap = (room / widths.len().max(1)).max(40) as u16;
                    for w in widths.iter_mut() {
                        *w = (*w).min(cap);
                    }
                }
                if let Some(last) = widths.last_mut() {
                    *last = (*last).max(4);
                }
                let header = Row::new(
                    cols.iter()
                        .map(|&c| Span::styled(table.headers[c].clone(), theme::title())),
                );
                let rows: Vec<Row> = visible
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let ri = self.row_offset + i;
                        Row::new(cols.iter().map(|&c| {
                            let v = r.get(c).unwrap_or(&Value::Null);
                            let mut s = cell_text(v);
                            let w = widths[c - first_col] as usize;
                            if s.chars().count() > w {
                                s = s.chars().take(w.saturating_sub(1)).collect::<String>() + "…";
                            }
                            let st = if ri == self.row && c == self.col && focused {
                                theme::selected()
                            } else if v.is_null() {
                                theme::dim()
                            } else {
                                theme::base()
                            };
                            Span::styled(s, st)
                        }))
                        .style(if ri == self.row {
                            ratatui::style::Style::default()
                                .add_modifier(ratatui::style::Modifier::BOLD)
                        } else {
                            theme::base()
                        })
                    })
                    .collect();
                if shown.is_empty() && !table.rows.is_empty() {
                    f.render_widget(
                        Paragraph::new(Line::styled(
                            format!(
                                "no row of {} holds \"{}\" (Esc clears the filter)",
                                table.rows.len(),
                                self.filter.text.trim()
                            ),
                            theme::dim(),
                        )),
                        inner,
                    );
                    return;
                }
                let t = Table::new(rows, widths.iter().map(|w| Constraint::Length(*w)))
                    .header(header)
                    .column_spacing(2);
                f.render_widget(t, inner);
            }
        }
    }

    pub(super) fn render_popup(&mut self, f: &mut Frame, area: Rect) {
        match &mut self.popup {
            Popup::Detail { text, scroll } => {
                let rect = centered(area, 80, 80);
                f.render_widget(Clear, rect);
                let p = Paragraph::new(text.clone()).scroll((*scroll, 0)).block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(theme::border(true))
                        .title(" value (↑↓ scroll, y copy, Esc close) "),
                );
                f.render_widget(p, rect);
            }
            Popup::History { filter, selected } => {
                let filter = filter.clone();
                let sel = *selected;
                let matches = self.history_matches(&filter);
                let rect = centered(area, 80, 70);
                f.render_widget(Clear, rect);
                let block = Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme::border(true))
                    .title(" history (type to filter, Enter loads, Esc closes) ");
                let inner = block.inner(rect);
                f.render_widget(block, rect);
                let [input, list] =
                    Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
                f.render_widget(
                    Paragraph::new(Line::from(vec![
                        Span::styled("› ", theme::accent()),
                        Span::raw(filter.clone()),
                    ])),
                    input,
                );
                let lines: Vec<Line> = matches
                    .iter()
                    .enumerate()
                    .take(list.height as usize)
                    .map(|(i, &hi)| {
                        let h = &self.history[hi];
                        let one = h.command.replace('\n', " ");
                        Line::from(vec![
                            Span::styled(format!("{} ", &h.at[..16.min(h.at.len())]), theme::dim()),
                            Span::raw(one),
                        ])
                        .style(if i == sel {
                            theme::selected()
                        } else {
                            theme::base()
                        })
                    })
                    .collect();
                if lines.is_empty() {
                    f.render_widget(
                        Paragraph::new(Line::styled("no history yet", theme::dim())),
                        list,
                    );
                } else {
                    f.render_widget(
                        Paragraph::new(super::super::component::cut_lines(lines, list.width)),
                        list,
                    );
                }
            }
            Popup::Export {
                csv,
                path,
                overwrite,
                error,
            } => {
                let rect = centered(area, 70, 30);
                f.render_widget(Clear, rect);
                let mut lines = vec![
                    Line::raw(format!(
                        "Write the results as {} to:",
                        if *csv { "CSV" } else { "JSON" }
                    )),
                    Line::from(vec![
                        Span::styled("› ", theme::accent()),
                        Span::raw(path.clone()),
                        Span::styled("▏", theme::accent()),
                    ]),
                    Line::raw(""),
                ];
                if let Some(e) = error {
                    lines.push(Line::styled(
                        e.clone(),
                        if *overwrite {
                            theme::warn()
                        } else {
                            theme::error()
                        },
                    ));
                }
                lines.push(Line::from(vec![
                    Span::styled(" Enter ", theme::key()),
                    Span::raw(if *overwrite { "replace   " } else { "write   " }),
                    Span::styled(" Ctrl+U ", theme::key()),
                    Span::raw("clear   "),
                    Span::styled(" Esc ", theme::key()),
                    Span::raw("cancel"),
                ]));
                f.render_widget(
                    Paragraph::new(lines).wrap(Wrap { trim: false }).block(
                        Block::default()
                            .borders(Borders::ALL)
                            .border_style(theme::border(true))
                            .title(" export "),
                    ),
                    rect,
                );
            }
            _ => {}
        }
    }
}
