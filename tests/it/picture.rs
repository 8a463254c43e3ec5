//! Pictures of units (issue 24 a; docs/GAMES.md §What a picture shows):
//! golden plain-text renderings of fixed units of each game, SVGs that
//! parse as XML and hold the nine chests / 61 squares, a picture part-way
//! through a play that equals, byte for byte, the picture of another unit
//! with the same board and the same first rolls (nothing else leaks), and
//! `show` and `GET /v1/plays/{id}/picture.svg` through the disclosure rule.

use std::path::Path;

use ticket_issuer::game::ile;
use ticket_issuer::game::tresors;
use ticket_issuer::game::{Moment, Picture};
use ticket_issuer::rng::Stream;

use crate::common::{agent, call, get, issuer, te_store, Server, TOKEN_NAME};

/// The seed the fixed units are drawn from (their streams 1, 2, …).
const SEED: [u8; 32] = [0x24; 32];

fn ile_unit(i: u64, lot: u8) -> ile::Unit {
    ile::Unit::generate(&mut Stream::new(&SEED, i + 1), lot)
}

fn te_unit(i: u64) -> tresors::Unit {
    tresors::Unit::generate(&mut Stream::new(&SEED, i + 1))
}

/// The golden file's text: each fixed unit's plain picture under a header
/// naming it.
fn golden_text() -> String {
    let mut out = String::new();
    let mut add = |name: String, picture: Picture| {
        out.push_str(&format!("== {name}\n{}", picture.text(false)));
    };
    for (i, lot) in [(0, 3), (1, 0), (2, 9), (3, 6)] {
        let unit = ile_unit(i, lot);
        add(
            format!("ile-au-tresor stream {} lot {lot}, after 2 throws", i + 1),
            unit.drawing(Moment::After(2)).unwrap(),
        );
        add(
            format!("ile-au-tresor stream {} lot {lot}, played", i + 1),
            unit.drawing(Moment::Paid(None)).unwrap(),
        );
    }
    for i in 0..3 {
        let unit = te_unit(i);
        add(
            format!("tresors-ensables stream {}, before the first roll", i + 1),
            unit.drawing(Moment::After(0)).unwrap(),
        );
        let k = 3.min(unit.steps().count() as u32);
        add(
            format!("tresors-ensables stream {}, after {k} rolls", i + 1),
            unit.drawing(Moment::After(k)).unwrap(),
        );
        let first_stop = unit.tape().first_stop;
        add(
            format!(
                "tresors-ensables stream {}, stopped at its first chest ({first_stop:?})",
                i + 1
            ),
            unit.drawing(Moment::Paid(first_stop)).unwrap(),
        );
        add(
            format!("tresors-ensables stream {}, played to its end", i + 1),
            unit.drawing(Moment::Paid(None)).unwrap(),
        );
    }
    out
}

#[test]
fn plain_pictures_of_fixed_units_match_the_golden_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pictures/golden.txt");
    let ours = golden_text();
    // `PICTURES_GOLDEN=write` writes the file (review the diff before
    // committing it).
    if std::env::var("PICTURES_GOLDEN").as_deref() == Ok("write") {
        std::fs::write(&path, &ours).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap();
    assert_eq!(ours, golden, "pictures differ from {}", path.display());
    assert!(!ours.contains('\x1b'), "plain pictures have no colour");
}

#[test]
fn colour_is_only_what_plain_lacks() {
    let picture = te_unit(0).drawing(Moment::Paid(None)).unwrap();
    let coloured = picture.text(true);
    assert!(coloured.contains("\x1b["), "{coloured}");
    let stripped = strip_ansi(&coloured);
    assert_eq!(stripped, picture.text(false));
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The `<g>` elements of an SVG whose class list holds `class`.
fn count_class(svg: &str, class: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "g")
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split(' ').any(|c| c == class))
        })
        .count()
}

#[test]
fn every_svg_parses_and_holds_the_nine_chests_or_the_61_squares() {
    for i in 0..50u64 {
        let unit = ile_unit(i, (i % 10) as u8);
        for k in 0..=4 {
            let svg = unit.drawing(Moment::After(k)).unwrap().svg();
            assert_eq!(count_class(&svg, "chest"), 9, "unit {i} after {k}");
            assert_eq!(
                count_class(&svg, "opened"),
                k as usize,
                "unit {i} after {k}"
            );
        }
        let unit = te_unit(i);
        let tape = unit.dice().len() as u32;
        for moment in [Moment::After(0), Moment::After(1), Moment::Paid(None)] {
            let svg = unit.drawing(moment).unwrap().svg();
            assert_eq!(count_class(&svg, "square"), 61, "unit {i} {moment:?}");
            assert_eq!(count_class(&svg, "chest"), 10, "unit {i} {moment:?}");
        }
        assert!(tape >= 10);
    }
}

/// A unit with the same board and first `k` rolls as `unit` (and the same
/// chests where those rolls opened one), every later die and every other
/// chest changed where the rules allow.
fn same_prefix(unit: &tresors::Unit, k: usize) -> Option<tresors::Unit> {
    let opened: Vec<usize> = unit
        .steps()
        .take(k)
        .filter(|s| s.chest_cents.is_some())
        .map(|s| usize::from(s.to / 6) - 1)
        .collect();
    let mut chests = [0u8; tresors::CHESTS];
    for (c, chest) in chests.iter_mut().enumerate() {
        *chest = if opened.contains(&c) {
            unit.chest_index(c)
        } else {
            // Another value of the chest's table.
            (unit.chest_index(c) + 1) % if c == tresors::CHESTS - 1 { 6 } else { 3 }
        };
    }
    // Later dice: 1s then whatever reaches 60 exactly (a different tape).
    let mut dice = unit.dice()[..k].to_vec();
    let mut at: u32 = dice.iter().map(|&d| u32::from(d)).sum::<u32>().min(60);
    while at < 60 {
        let die = if dice.len().is_multiple_of(2) { 1 } else { 5 }.min(60 - at) as u8;
        dice.push(die.max(1));
        at += u32::from(die.max(1));
    }
    tresors::Unit::from_parts(*unit.board(), chests, &dice).ok()
}

#[test]
fn a_picture_after_k_rolls_shows_nothing_beyond_them() {
    let mut compared = 0;
    for i in 0..40u64 {
        let unit = te_unit(i);
        for k in 0..unit.dice().len() {
            let Ok(ours) = unit.drawing(Moment::After(k as u32)) else {
                break; // past a death
            };
            let Some(other) = same_prefix(&unit, k) else {
                continue;
            };
            if other.dice() == unit.dice() {
                continue;
            }
            let theirs = other.drawing(Moment::After(k as u32)).unwrap();
            assert_eq!(ours.text(false), theirs.text(false), "unit {i} after {k}");
            assert_eq!(ours.svg(), theirs.svg(), "unit {i} after {k}");
            compared += 1;
        }
    }
    assert!(compared > 200, "{compared}");
}

#[test]
fn a_picture_refuses_what_the_play_does_not_have() {
    let unit = te_unit(0);
    let rolls = unit.steps().count() as u32;
    assert!(unit.drawing(Moment::After(rolls)).is_ok());
    assert!(unit.drawing(Moment::After(rolls + 1)).is_err());
    assert!(
        unit.drawing(Moment::Paid(Some(0))).is_err(),
        "before the first chest"
    );
    let ile = ile_unit(0, 3);
    assert!(ile.drawing(Moment::After(5)).is_err());
    assert!(ile.drawing(Moment::Paid(Some(1))).is_err(), "no stop");
}

/// A sold Trésors Ensablés unit played `rolls` rolls whose play goes on
/// after them (a unit whose play ended sooner, by chance of the store's
/// seed, is passed over): its ID.
fn sold_and_rolled(store: &Path, rolls: u32) -> String {
    for _ in 0..40 {
        let sale = issuer(
            store,
            &[
                "sell",
                "--game",
                "tresors-ensables",
                "--json",
                "--platform",
                TOKEN_NAME,
            ],
        )
        .expect_code(0)
        .json();
        let id = sale["id"].as_str().unwrap().to_string();
        let mut over = false;
        for n in 1..=rolls {
            let view = issuer(store, &["play", &id, "--roll", &n.to_string(), "--json"])
                .expect_code(0)
                .json();
            over = view["over"] == true;
            if over {
                break;
            }
        }
        if !over {
            return id;
        }
    }
    panic!("no unit of 40 plays on after {rolls} rolls");
}

#[test]
fn show_draws_a_play_no_further_than_its_rolls_revealed() {
    let (dir, store) = te_store(50);
    let id = sold_and_rolled(&store, 1);
    let shown = issuer(&store, &["show", &id, "--plain"])
        .expect_code(0)
        .stdout;
    assert!(shown.contains("Trésors Ensablés"), "{shown}");
    assert!(shown.contains("lancer  1 :"), "{shown}");
    assert!(!shown.contains("lancer  2 :"), "{shown}");
    assert!(!shown.contains('\x1b'), "{shown}");
    // Beyond the rolls revealed: refused, unless an operator's replay.
    let beyond = issuer(&store, &["show", &id, "--after-rolls", "2", "--json"]);
    assert_eq!(beyond.code, 2, "--after-rolls is not a JSON option");
    let beyond = issuer(&store, &["show", &id, "--after-rolls", "2"]).expect_code(1);
    assert!(beyond.stderr.contains("not over"), "{}", beyond.stderr);
    let replay = issuer(&store, &["show", &id, "--after-rolls", "2", "--reveal-all"])
        .expect_code(0)
        .stdout;
    assert!(replay.contains("lancer  2 :"), "{replay}");
    // The SVG: written once, refused over an existing file without --force.
    let svg = dir.path().join("unit.svg");
    let svg_arg = svg.to_str().unwrap();
    issuer(&store, &["show", &id, "--svg", svg_arg]).expect_code(0);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(count_class(&text, "square"), 61);
    assert_eq!(count_class(&text, "landed"), 1);
    issuer(&store, &["show", &id, "--svg", svg_arg]).expect_code(1);
    issuer(&store, &["show", &id, "--svg", svg_arg, "--force"]).expect_code(0);
    // One SVG per step, the first before any roll.
    let steps = dir.path().join("steps");
    issuer(&store, &["show", &id, "--steps", steps.to_str().unwrap()]).expect_code(0);
    let mut names: Vec<String> = std::fs::read_dir(&steps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["step-000.svg", "step-001.svg"]);
    let first = std::fs::read_to_string(steps.join("step-000.svg")).unwrap();
    assert_eq!(count_class(&first, "landed"), 0);
    assert_eq!(
        std::fs::read_to_string(steps.join("step-001.svg")).unwrap(),
        text,
        "the last step is the picture as it stands"
    );
}

#[test]
fn the_picture_route_draws_a_play_as_it_stands_and_refuses_as_the_play_routes() {
    let (_dir, store) = te_store(50);
    let id = sold_and_rolled(&store, 2);
    let unsold = crate::common::valid_id_of(
        &store,
        ticket_issuer::game::Game::TRESORS_ENSABLES,
        1,
        1,
        40,
    );
    let server = Server::start(&store);
    let a = agent();
    let (status, svg) = get(&a, &server, &format!("/v1/plays/{id}/picture.svg"));
    assert_eq!(status, 200, "{svg}");
    assert_eq!(count_class(&svg, "square"), 61);
    assert_eq!(count_class(&svg, "landed"), 2);
    // The same picture as `show --svg -` draws.
    let shown = issuer(&store, &["show", &id, "--svg", "-"])
        .expect_code(0)
        .stdout;
    assert_eq!(svg, shown);
    let path = format!("/v1/plays/{id}/picture.svg");
    let (status, _) = call(&a, "GET", &server.url(&path), None, None).unwrap();
    assert_eq!(status, 401, "a token, as every route");
    // A unit the platform did not sell is unknown to it, sold or not
    // (issue 34); its own with a mistyped code is refused as such.
    let mut typo = id.clone();
    let last = typo.pop().unwrap();
    typo.push(if last == 'A' { 'B' } else { 'A' });
    for (path, status, code) in [
        (
            format!("/v1/plays/{unsold}/picture.svg"),
            404,
            "unknown_unit",
        ),
        (
            "/v1/plays/TE-1-1-45-AAAAAAAA/picture.svg".into(),
            404,
            "unknown_unit",
        ),
        (
            format!("/v1/plays/{typo}/picture.svg"),
            422,
            "wrong_check_code",
        ),
        ("/v1/plays/nonsense/picture.svg".into(), 400, "invalid_id"),
    ] {
        let (got, answer) = get(&a, &server, &path);
        let (play_status, play_answer) = get(&a, &server, path.trim_end_matches("/picture.svg"));
        assert_eq!((got, play_status), (status, status), "{path}: {answer}");
        assert!(answer.contains(code), "{path}: {answer}");
        assert!(play_answer.contains(code), "{path}: {play_answer}");
    }
}
