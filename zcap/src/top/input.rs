//! The view's state and what each key does to it (the keys are listed in
//! [`super::render::KEYS`]).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::model::{By, SortKey};

/// What the person chose.
#[derive(Debug, Clone)]
pub(crate) struct View {
    pub(crate) sort: SortKey,
    pub(crate) reverse: bool,
    pub(crate) by: By,
    /// Rows shown hold this text (lower case; empty: all).
    pub(crate) filter: String,
    /// The filter being typed.
    pub(crate) editing: Option<String>,
    pub(crate) paused: bool,
    /// First row shown.
    pub(crate) scroll: usize,
    pub(crate) help: bool,
    /// Endpoints by name where one is known.
    pub(crate) names: bool,
    pub(crate) quit: bool,
}

/// What a key changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    None,
    /// Only what is drawn (scroll, help, the text being typed).
    Redraw,
    /// The rows (sort, grouping, filter, names): made again from the last snapshot.
    Rows,
}

impl View {
    pub(crate) fn new(sort: SortKey, by: By) -> View {
        View {
            sort,
            reverse: false,
            by,
            filter: String::new(),
            editing: None,
            paused: false,
            scroll: 0,
            help: false,
            names: true,
            quit: false,
        }
    }

    /// Applies key `k`; `rows` are the rows there are, `page` those the table shows.
    pub(crate) fn key(&mut self, k: KeyEvent, rows: usize, page: usize) -> Change {
        if k.kind == KeyEventKind::Release {
            return Change::None;
        }
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            self.quit = true;
            return Change::None;
        }
        if self.editing.is_some() {
            return self.edit_filter(k.code);
        }
        if self.help {
            self.help = false;
            if k.code == KeyCode::Char('q') {
                self.quit = true;
            }
            return Change::Redraw;
        }
        self.command(k.code, rows, page)
    }

    /// A key while the row filter is typed: Enter applies it, Esc clears it, others edit it.
    fn edit_filter(&mut self, code: KeyCode) -> Change {
        let Some(text) = self.editing.as_mut() else {
            return Change::None;
        };
        match code {
            KeyCode::Enter => {
                self.filter = text.trim().to_lowercase();
                self.editing = None;
                self.scroll = 0;
                return Change::Rows;
            }
            KeyCode::Esc => {
                self.editing = None;
                self.filter.clear();
                self.scroll = 0;
                return Change::Rows;
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) if text.chars().count() < 64 => text.push(c),
            _ => return Change::None,
        }
        Change::Redraw
    }

    /// A command key of the table's view (quit, help, sort, grouping, names, filter, pause,
    /// scroll); `rows` are the rows there are, `page` those the table shows.
    fn command(&mut self, code: KeyCode, rows: usize, page: usize) -> Change {
        let last = rows.saturating_sub(page.max(1));
        match code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('?') | KeyCode::Char('h') => {
                self.help = true;
                return Change::Redraw;
            }
            KeyCode::Char(c @ '1'..='3') => {
                self.sort = SortKey::Both(c as usize - '1' as usize);
                return Change::Rows;
            }
            KeyCode::Char('s') => {
                self.sort = self.sort.step(true);
                return Change::Rows;
            }
            KeyCode::Char('S') => {
                self.sort = self.sort.step(false);
                return Change::Rows;
            }
            KeyCode::Char('r') => {
                self.reverse = !self.reverse;
                return Change::Rows;
            }
            KeyCode::Char('g') => {
                self.by = self.by.next();
                self.scroll = 0;
                return Change::Rows;
            }
            KeyCode::Char('n') => {
                self.names = !self.names;
                return Change::Rows;
            }
            KeyCode::Char('/') => {
                self.editing = Some(self.filter.clone());
                return Change::Redraw;
            }
            KeyCode::Char('p') | KeyCode::Char(' ') => {
                self.paused = !self.paused;
                return Change::Rows;
            }
            KeyCode::Down | KeyCode::Char('j') => self.scroll = (self.scroll + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll = (self.scroll + page.max(1)).min(last),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page.max(1)),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = last,
            _ => return Change::None,
        }
        Change::Redraw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn keys_change_the_view() {
        let mut v = View::new(SortKey::Both(1), By::Flow);
        assert_eq!(v.key(key(KeyCode::Char('3')), 10, 5), Change::Rows);
        assert_eq!(v.sort, SortKey::Both(2));
        v.key(key(KeyCode::Char('g')), 10, 5);
        assert_eq!(v.by, By::Pair);
        for c in "/UDP".chars() {
            v.key(key(KeyCode::Char(c)), 10, 5);
        }
        assert_eq!(v.key(key(KeyCode::Enter), 10, 5), Change::Rows);
        assert_eq!(v.filter, "udp");
        v.key(key(KeyCode::End), 10, 5);
        assert_eq!(v.scroll, 5);
        v.key(key(KeyCode::Char('p')), 10, 5);
        assert!(v.paused);
        v.key(key(KeyCode::Char('?')), 10, 5);
        assert!(v.help);
        v.key(key(KeyCode::Char('x')), 10, 5);
        assert!(!v.help && !v.quit);
        v.key(
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            10,
            5,
        );
        assert!(v.quit);
    }
}
