//! The PAR sheet of a fixed-table game (L'île au trésor): every block
//! holds exactly the regulation's lot table, so every figure is a ratio of
//! the table's integers.

pub use super::lot_sheet::{sheet, LotLine, TableSheet};
use super::sample::{block_figures, Expected};
use super::{ParRequest, ParSheet};
use crate::error::Error;
use crate::game::Game;

/// The PAR sheet of a fixed-table game: one sheet per price asked (every
/// price when none is), and the request's block checked against its
/// price's sheet.
pub fn par_sheet(game: Game, request: &ParRequest<'_>) -> Result<ParSheet, Error> {
    let prices = match request.price_cents {
        Some(cents) => vec![cents],
        None => game.prices_cents().to_vec(),
    };
    let sheets = prices
        .iter()
        .map(|&cents| sheet(game, cents))
        .collect::<Result<Vec<_>, _>>()?;
    let block = request
        .block
        .map(|block| block_figures(block, Expected::Table(&sheets[0])))
        .transpose()?;
    let mut text = String::new();
    for s in &sheets {
        s.write_text(&mut text);
    }
    let mut par = ParSheet::default().with("prices", &sheets);
    if let Some(block) = &block {
        block.write_text(&mut text);
        // A fixed-table block pays exactly its table: no sampling error,
        // so anything but z = 0 is a failure.
        let pass = block.rtp.z == 0.0 && block.hit_frequency.z == 0.0;
        let verdict = super::BlockVerdict {
            level: 0.0,
            pass,
            reason: if pass {
                "the block pays exactly its lot table (an exact comparison: no sampling)".into()
            } else {
                "the block's return or hit frequency differs from its lot table's".into()
            },
            tests: Vec::new(),
        };
        super::line!(text, "{}", verdict.line());
        par = par.with("block", block).with("verdict", &verdict);
        par.block_ok = Some(pass);
    }
    par.text = text;
    Ok(par)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::par::Exact;

    #[test]
    fn the_regulation_pays_seventy_percent_at_every_price() {
        for &price in Game::ILE_AU_TRESOR.prices_cents() {
            let s = sheet(Game::ILE_AU_TRESOR, price).unwrap();
            assert_eq!(s.rtp, Exact::ratio(7, 10), "{}", s.price);
            assert_eq!(s.winners, 119_604);
            assert_eq!(s.hit_frequency, Exact::ratio(119_604, 450_000));
            assert_eq!(s.one_in.decimal(2), "3.76");
            assert_eq!(s.max_multiple, Exact::ratio(10_000, 1));
            let shares = s
                .lots
                .iter()
                .fold(Exact::ratio(0, 1).0, |sum, l| sum + &l.rtp_share.0);
            assert_eq!(Exact(shares), s.rtp);
        }
        let s = sheet(Game::ILE_AU_TRESOR, 100).unwrap();
        assert_eq!(s.block_prizes, "315000");
        assert_eq!(s.lots[0].one_in, Exact::ratio(450_000, 1));
        assert_eq!(s.lots[8].one_in.decimal(4), "8.6538");
    }
}
