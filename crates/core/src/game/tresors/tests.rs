//! Hand-built units: the play, its stops, the rule check, the codec's
//! refusals, the export view and the picture.

use super::*;
use crate::money::Cents;

/// A board from ten series of five characters: `.` blank, `1` / `2`
/// life, `a` / `b` / `c` trap −1 / −2 / −3 (spaces ignored).
fn board(series: &str) -> [Square; BOARD_SQUARES] {
    let mut board = Unit::fixed_board();
    let codes: Vec<Square> = series
        .chars()
        .filter(|c| *c != ' ')
        .map(|c| match c {
            '.' => Square::Blank,
            '1' => Square::LifePlus1,
            '2' => Square::LifePlus2,
            'a' => Square::Trap1,
            'b' => Square::Trap2,
            'c' => Square::Trap3,
            other => panic!("no square {other}"),
        })
        .collect();
    assert_eq!(codes.len(), 50);
    for s in 0..SERIES {
        board[series_start(s)..series_start(s) + 5].copy_from_slice(&codes[5 * s..5 * s + 5]);
    }
    board
}

/// Every series `.b...`: the only trap on 2, 8, 14, …, 56.
const PLAIN: &str = ".b... .b... .b... .b... .b... .b... .b... .b... .b... .b...";

/// `prefix` then 6s until the tape reaches 60.
fn tape(prefix: &[u8]) -> Vec<u8> {
    let mut dice = prefix.to_vec();
    let mut at = prefix.iter().fold(0u8, |at, d| (at + d).min(60));
    while at < 60 {
        dice.push(6);
        at = (at + 6).min(60);
    }
    dice
}

fn unit(series: &str, chests: [u8; CHESTS], dice: &[u8]) -> Unit {
    Unit::from_parts(board(series), chests, dice).expect("a valid hand-built unit")
}

/// On the plain board, 3 → 3, 3 → 6 bronze, 1 → 7, 1 → 8 trap −2
/// (life 1), 4 → 12 silver, 2 → 14 trap −2 (dead at roll 6), then 6s.
fn worked(chests: [u8; CHESTS]) -> Unit {
    unit(PLAIN, chests, &tape(&[3, 3, 1, 1, 4, 2]))
}

/// All ten chests at their largest value, all rolls 6: every chest opened.
fn maximum() -> Unit {
    unit(PLAIN, [2, 2, 2, 2, 2, 2, 2, 2, 2, 5], &[6; 10])
}

#[test]
fn death_on_a_trap_loses_the_gains_found() {
    // 6 opens bronze (0.50 €), 1 lands on the −3 trap of square 7.
    let u = unit(
        ".b... ca... .b... .b... .b... .b... .b... .b... .b... .b...",
        [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        &tape(&[6, 1]),
    );
    let out = u.play(None).unwrap();
    assert_eq!(out.end, End::Death);
    assert_eq!((out.rolls, out.position, out.life), (2, 7, 0));
    assert_eq!((out.chests_opened, out.found_cents), (1, 50));
    assert_eq!(out.prize_cents, 0);
    assert_eq!(u.prize_to_end_cents(), 0);
    assert_eq!(u.steps().count(), 2, "no roll after a death");
}

#[test]
fn life_gain_is_capped_at_three() {
    // +2 at full life stays 3, so −2 then −1 kill (uncapped: 5, 3, 2).
    let u = unit(
        "2ba.. .b... .b... .b... .b... .b... .b... .b... .b... .b...",
        [0; CHESTS],
        &tape(&[1, 1, 1]),
    );
    let lives: Vec<u8> = u.steps().map(|s| s.life).collect();
    assert_eq!(lives, [3, 1, 0]);
    assert_eq!(u.play(None).unwrap().end, End::Death);
    // Below the cap a gain counts in full: −2 then +2 is back to 3.
    let v = unit(
        ".b2.. .b... .b... .b... .b... .b... .b... .b... .b... .b...",
        [0; CHESTS],
        &tape(&[2, 1]),
    );
    let lives: Vec<u8> = v.steps().take(2).map(|s| s.life).collect();
    assert_eq!(lives, [1, 3]);
}

#[test]
fn passing_over_a_chest_opens_nothing() {
    let u = unit(PLAIN, [2; CHESTS], &tape(&[5, 2]));
    let steps: Vec<Step> = u.steps().take(2).collect();
    assert_eq!((steps[1].from, steps[1].to), (5, 7));
    assert_eq!(steps[1].chest_cents, None);
    assert_eq!(steps[1].found_cents, 0);
    assert_eq!(
        u.play(Some(2)),
        Err(StopRefused::BeforeFirstChest { rolls: 2 })
    );
}

#[test]
fn a_roll_reaching_or_passing_60_lands_on_60_only_within_six() {
    // Nine 6s reach 54, a 1 reaches 55, then a 6 lands on 60.
    let mut dice = vec![6; 9];
    dice.extend([1, 6]);
    let u = unit(PLAIN, [0; CHESTS], &dice);
    let last = u.steps().last().unwrap();
    assert_eq!((last.from, last.to, last.end), (55, 60, Some(End::Gold)));
    // From 53 (seven squares left) a 6 lands on 59, and a tape ending
    // there is refused.
    let mut dice = vec![6; 8];
    dice.extend([5, 6]);
    let err = Unit::from_parts(board(PLAIN), [0; CHESTS], &dice).unwrap_err();
    assert!(err.contains("ends on square 59"), "{err}");
    dice.push(1);
    let u = unit(PLAIN, [0; CHESTS], &dice);
    let to: Vec<u8> = u.steps().skip(8).map(|s| s.to).collect();
    assert_eq!(to, [53, 59, 60]);
    // A die after the tape reached 60 is refused too.
    let err = Unit::from_parts(board(PLAIN), [0; CHESTS], &[6; 11]).unwrap_err();
    assert!(err.contains("die 11 comes after"), "{err}");
}

#[test]
fn maximum_prize_is_10_010_50_euros() {
    let max: u32 = (0..CHESTS)
        .map(|k| *ChestKind::of_chest(k).table().cents.iter().max().unwrap())
        .sum();
    assert_eq!(max, MAX_PRIZE_CENTS);
    assert_eq!(Cents::from(MAX_PRIZE_CENTS).to_string(), "10010.5");
    let out = maximum().play(None).unwrap();
    assert_eq!(out.end, End::Gold);
    assert_eq!((out.chests_opened, out.life), (10, 3));
    assert_eq!(out.prize_cents, MAX_PRIZE_CENTS);
    assert!(
        out.describe().contains("wins 10010.5 €"),
        "{}",
        out.describe()
    );
}

#[test]
fn every_stop_of_a_worked_unit() {
    // Bronze 0.20 € at roll 2, silver 2 € at roll 5, dead at roll 6.
    let u = worked([1, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(u.dice().len(), 14);
    for k in 0..=1 {
        assert_eq!(
            u.play(Some(k)),
            Err(StopRefused::BeforeFirstChest { rolls: k })
        );
    }
    for (k, found, life) in [(2, 20, 3), (3, 20, 3), (4, 20, 1), (5, 220, 1)] {
        let out = u.play(Some(k)).unwrap();
        assert_eq!(out.end, End::Stopped);
        assert_eq!((out.rolls, out.prize_cents, out.life), (k, found, life));
    }
    for k in 6..=14 {
        assert_eq!(
            u.play(Some(k)),
            Err(StopRefused::AfterDeath {
                rolls: k,
                death_roll: 6
            })
        );
    }
    assert_eq!(
        u.play(Some(15)),
        Err(StopRefused::BeyondTape {
            rolls: 15,
            tape: 14
        })
    );
    assert_eq!(u.play(None).unwrap().end, End::Death);

    let m = maximum();
    assert_eq!(m.play(Some(10)), Err(StopRefused::AtEnd { rolls: 10 }));
    assert_eq!(
        m.play(Some(9)).unwrap().prize_cents,
        MAX_PRIZE_CENTS - 1_000_000
    );
    // The same through the state machine.
    let mut play = m.start();
    assert_eq!(
        play.may_stop(),
        Err(StopRefused::BeforeFirstChest { rolls: 0 })
    );
    let first = play.roll().unwrap();
    assert_eq!((first.to, first.chest_cents), (6, Some(50)));
    assert_eq!(play.stop().unwrap().prize_cents, 50);
    while play.roll().is_some() {}
    assert_eq!(play.stop(), Err(StopRefused::AtEnd { rolls: 10 }));
    for refused in [
        StopRefused::BeforeFirstChest { rolls: 1 },
        StopRefused::AfterDeath {
            rolls: 7,
            death_roll: 6,
        },
        StopRefused::AtEnd { rolls: 10 },
        StopRefused::BeyondTape {
            rolls: 15,
            tape: 14,
        },
    ] {
        assert!(refused.to_string().starts_with("cannot stop after"));
    }
}

#[test]
fn check_refuses_what_no_draw_gives() {
    let mut b = board(PLAIN);
    b[6] = Square::Blank;
    let err = Unit::from_parts(b, [0; CHESTS], &[6; 10]).unwrap_err();
    assert!(err.starts_with("square 6 is blank"), "{err}");
    // Two rule-2 traps in one series.
    let series = "bb... .b... .b... .b... .b... .b... .b... .b... .b... .b...";
    let err = Unit::from_parts(board(series), [0; CHESTS], &[6; 10]).unwrap_err();
    assert!(err.starts_with("squares 1-5"), "{err}");
    // No trap: rule 2 always gives one.
    let series = "1.... .b... .b... .b... .b... .b... .b... .b... .b... .b...";
    assert!(Unit::from_parts(board(series), [0; CHESTS], &[6; 10]).is_err());
    // Blank and +1 can each come from two rules: all of these are fine.
    for series in ["11a.. ", "2a1.. ", "..c.. ", "a.a.. ", "1b1.. "] {
        let all = format!("{series}{}", &PLAIN[6..]);
        assert!(
            Unit::from_parts(board(&all), [0; CHESTS], &[6; 10]).is_ok(),
            "{series}"
        );
    }
    // +2 and −1 −1 −1 are never possible.
    for series in ["22b.. ", "aaa.. ", "2b2.. "] {
        let all = format!("{series}{}", &PLAIN[6..]);
        assert!(Unit::from_parts(board(&all), [0; CHESTS], &[6; 10]).is_err());
    }
    let err = Unit::from_parts(board(PLAIN), [3, 0, 0, 0, 0, 0, 0, 0, 0, 0], &[6; 10]).unwrap_err();
    assert!(
        err.starts_with("chest 1 (square 6, bronze) has value code 3"),
        "{err}"
    );
    assert!(Unit::from_parts(board(PLAIN), [0, 0, 0, 0, 0, 0, 0, 0, 0, 5], &[6; 10]).is_ok());
    assert!(Unit::from_parts(board(PLAIN), [0, 0, 0, 0, 0, 0, 0, 0, 0, 6], &[6; 10]).is_err());
    let err = Unit::from_parts(board(PLAIN), [0; CHESTS], &tape(&[7])).unwrap_err();
    assert!(err.starts_with("die 1 is 7"), "{err}");
}

#[test]
fn decode_refuses_corrupt_payloads_naming_the_place() {
    let mut good = Vec::new();
    maximum().encode(&mut good);
    assert_eq!(good.len(), PAYLOAD_SIZE);
    assert_eq!(Unit::decode(&good), Ok(maximum()));
    let corrupt = |at: usize, byte: u8| {
        let mut p = good.clone();
        p[at] = byte;
        Unit::decode(&p).unwrap_err()
    };
    assert!(Unit::decode(&good[1..]).unwrap_err().contains("65 bytes"));
    // Square 1 (high nibble of byte 0) set to 15, then to start.
    assert_eq!(
        corrupt(0, 0xf0 | (good[0] & 0x0f)),
        "square 1 has unknown code 15"
    );
    assert!(corrupt(0, good[0] & 0x0f).starts_with("squares 1-5"));
    // Square 60 (low nibble of byte 29) made blank.
    assert!(corrupt(29, good[29] & 0xf0 | 1).starts_with("square 60 is blank"));
    // Chest 10 (low nibble of byte 34) given code 9.
    assert!(corrupt(34, good[34] & 0xf0 | 9).starts_with("chest 10 (square 60, gold)"));
    assert!(corrupt(35, 9).contains("tape length is 9"));
    assert!(corrupt(35, 61).contains("tape length is 61"));
    assert!(corrupt(35, 11).contains("die 11 is 0"));
    assert!(corrupt(41, 0x10).contains("die slot 11 is 1"));
    assert!(corrupt(36, 0x06).contains("die 1 is 0"));
}

#[test]
fn export_view_and_picture() {
    let u = worked([0, 1, 2, 0, 1, 2, 0, 1, 2, 5]);
    let view = u.view();
    assert_eq!(view.board.len(), BOARD_SQUARES);
    assert_eq!(
        view.board[..8],
        ["start", "blank", "trap-2", "blank", "blank", "blank", "bronze", "blank"]
    );
    assert_eq!((view.board[12], view.board[60]), ("silver", "gold"));
    assert_eq!(
        view.chests,
        ["0.1", "1", "0.5", "0.5", "0.2", "2", "0.1", "1", "0.5", "10000"]
    );
    assert_eq!(view.dice, u.dice());
    let json = serde_json::to_string(&view).unwrap();
    assert!(
        json.starts_with(r#"{"board":["start","blank","trap-2""#),
        "{json}"
    );

    let picture = u.picture(Some(5)).unwrap();
    assert!(
        picture.contains(
            "\n 1  .    -2  [.]   .    .   [B]  [.]  [-2]  .    .\n11  .   [S]   .    -2   ."
        ),
        "{picture}"
    );
    assert!(
        picture.contains("roll  5: die 4 -> square 12 silver  life 1\n"),
        "{picture}"
    );
    assert!(
        picture.contains("silver chest on square 12: 1 €\n"),
        "{picture}"
    );
    assert!(
        picture.ends_with(
            "stopped on square 12 after 5 rolls with 1 life point: wins 1.1 € (2 chests)\n"
        ),
        "{picture}"
    );
    let end = u.picture(None).unwrap();
    assert!(end.contains("roll  6: die 2 -> square 14 trap-2"), "{end}");
    assert!(
        end.ends_with("no gain (2 chests opened, 1.1 € found and lost)\n"),
        "{end}"
    );
    assert_eq!(
        u.picture(Some(1)),
        Err(StopRefused::BeforeFirstChest { rolls: 1 })
    );
}

#[test]
fn hand_written_export_fields_are_serde_json_byte_for_byte() {
    let seed = [0x42; 32];
    for i in 0..3_000u64 {
        let unit = Unit::generate(&mut crate::rng::Stream::new(&seed, i + 1));
        let mut ours = Vec::new();
        unit.write_export_fields(&mut ours);
        assert_eq!(ours, crate::game::serde_members(unit.view()), "unit {i}");
    }
}
