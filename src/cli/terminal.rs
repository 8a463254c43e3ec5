//! `issuer play ID --terminal`: a unit played in the terminal as its
//! player would see it (docs/CLI.md), one step per key, recording nothing.
//! Every picture and every stop goes through the same redeemer and game
//! state machine as `show` and the service (`Redeemer::picture` with the
//! game's `drawing` and its stop rules), so what support replays here and
//! what the player saw cannot differ. The terminal is put back as it was
//! on every way out: the end, `q`, Esc, Ctrl-C (a key in raw mode), an
//! error, a panic (the guard's `Drop`).

use std::io::{IsTerminal, Write};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, terminal};

use ticket_issuer::error::Error;
use ticket_issuer::game::picture::Picture;
use ticket_issuer::redeemer::PictureAsk;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::Redeemer;

/// The terminal in raw mode on the alternate screen, until dropped.
struct Screen;

impl Screen {
    fn enter() -> Result<Screen, Error> {
        terminal::enable_raw_mode().map_err(tty)?;
        let screen = Screen;
        execute!(
            std::io::stdout(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )
        .map_err(tty)?;
        Ok(screen)
    }

    /// Clears the screen and writes `text` (raw mode wants `\r\n`).
    fn show(&self, text: &str) -> Result<(), Error> {
        let mut out = std::io::stdout();
        execute!(
            out,
            terminal::Clear(terminal::ClearType::All),
            cursor::MoveTo(0, 0)
        )
        .map_err(tty)?;
        out.write_all(text.replace('\n', "\r\n").as_bytes())
            .and_then(|_| out.flush())
            .map_err(tty)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = execute!(
            std::io::stdout(),
            cursor::Show,
            terminal::LeaveAlternateScreen
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// A terminal failure.
fn tty(e: std::io::Error) -> Error {
    Error::io(std::path::Path::new("/dev/tty"), e)
}

/// What a key asks for.
enum Key {
    /// The next throw or roll (Entrée, espace, « l » for Lancer).
    Next,
    /// « Arrêter » (« a »).
    Stop,
    /// Leave (« q », Esc, Ctrl-C).
    Quit,
}

/// Waits for a key press that means something.
fn key() -> Result<Key, Error> {
    loop {
        if let Event::Key(KeyEvent {
            code,
            modifiers,
            kind: KeyEventKind::Press,
            ..
        }) = event::read().map_err(tty)?
        {
            match code {
                KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => {
                    return Ok(Key::Quit)
                }
                KeyCode::Char('q') | KeyCode::Esc => return Ok(Key::Quit),
                KeyCode::Enter | KeyCode::Char(' ') | KeyCode::Char('l') => return Ok(Key::Next),
                KeyCode::Char('a') => return Ok(Key::Stop),
                _ => {}
            }
        }
    }
}

/// Waits for any key press.
fn any_key() -> Result<(), Error> {
    loop {
        if let Event::Key(KeyEvent {
            kind: KeyEventKind::Press,
            ..
        }) = event::read().map_err(tty)?
        {
            return Ok(());
        }
    }
}

/// Runs the unit `id` in the terminal.
pub fn play(redeemer: &Redeemer, id: &UnitId) -> Result<i32, Error> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Error::NotATerminal {
            what: "issuer play --terminal",
            instead: "`issuer show ID --steps DIR` or `issuer play ID --roll N`",
        });
    }
    // The unit is authenticated before the screen changes: a refusal is
    // printed on a normal terminal.
    let after = |n: u32| PictureAsk {
        after: Some(n),
        stop: None,
        reveal_all: true,
    };
    let paid = |stop: Option<u32>| PictureAsk {
        after: None,
        stop,
        reveal_all: true,
    };
    redeemer.picture(id, after(0))?;
    let step_by_step = id.game.step_by_step();
    let help = if step_by_step {
        "l / Entrée : Lancer · a : Arrêter · q : quitter"
    } else {
        "Entrée : lancer suivant · q : quitter"
    };
    let screen = Screen::enter()?;
    let page = |picture: &Picture, note: &str| {
        format!("unité de jeu {id}\n{}\n{note}\n", picture.text(true))
    };
    let mut steps = 0;
    let mut note = String::new();
    // What stays on the terminal once the screen is left: the last
    // picture shown, in words.
    let mut last;
    loop {
        // The play is over when the game draws no further step (its rules
        // refuse the moment); any other failure is an error.
        let over = match redeemer.picture(id, after(steps + 1)) {
            Ok(_) => false,
            Err(Error::BadStop { .. }) => true,
            Err(e) => return Err(e),
        };
        if over {
            let end = redeemer.picture(id, paid(None))?;
            screen.show(&page(&end, "fin de la partie · une touche pour quitter"))?;
            last = end;
            any_key()?;
            break;
        }
        let now = redeemer.picture(id, after(steps))?;
        screen.show(&page(&now, &format!("{note}\n{help}")))?;
        last = now;
        note.clear();
        match key()? {
            Key::Quit => break,
            Key::Next => steps += 1,
            Key::Stop if step_by_step => match redeemer.picture(id, paid(Some(steps))) {
                Ok(stopped) => {
                    screen.show(&page(&stopped, "« Arrêter » · une touche pour quitter"))?;
                    last = stopped;
                    any_key()?;
                    break;
                }
                // The rules refuse it now (before a first gain, after the
                // end): said as the player's screen says it. Any other
                // failure is an error, not a refused stop.
                Err(Error::BadStop { .. }) => note = "« Arrêter » n'est pas possible à ce moment de la partie : il l'est une fois un premier gain trouvé, jusqu'au dernier lancer (règlement, 3.2.6)".into(),
                Err(e) => return Err(e),
            },
            Key::Stop => note = "ce jeu n'a pas de bouton « Arrêter »".into(),
        }
    }
    drop(screen);
    // The screen is left; the game as it stood stays on the terminal.
    print!("{}", page(&last, ""));
    Ok(0)
}
