//! A third game proves a game is one module and one registration line:
//! « Dé d'or », a toy written here only, goes through generate → verify →
//! export → close → sell → play → stop → redeem → ledger verify → par with
//! no edit to the product. Run it alone with `cargo test third_game`.
//!
//! The rules: a unit is four dice (1 to 6), revealed one per step. Each
//! die adds its face × 10 cents to the gains; a 1 loses the unit (it pays
//! nothing). After the first step the player may stop and take the gains;
//! the fourth die ends the play and pays the gains. Played to the end a
//! unit pays when no die is a 1: probability (5/6)^4 = 625/1296, and then
//! each die is 2 to 6, mean 4, so the sum pays 160 cents on average: at
//! 1 € a unit, RTP = 625/1296 × 160/100 = 125/162.

use serde_json::json;
use ticket_issuer::analysis::{self, GameAnalysis};
use ticket_issuer::emission::{BlockChoice, Emission};
use ticket_issuer::export::export_jsonl;
use ticket_issuer::game::{
    Ending, Fields, Game, GameRules, GameUnit, InvalidUnit, Played, Prize, PrizeModel, State, Step,
    StopRefusal, Tape,
};
use ticket_issuer::ledger::log;
use ticket_issuer::ledger::ops::PlayAction;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::money::Cents;
use ticket_issuer::par::engine::{self, DrawnFigures};
use ticket_issuer::par::{Exact, ParRequest, ParSheet};
use ticket_issuer::rng::Stream;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

const DICE: usize = 4;
const CENTS_PER_PIP: u32 = 10;
const LOT_END: u8 = 1;
const LOT_STOPPED: u8 = 2;

struct DeDor;

/// A unit: its four dice, checked when decoded.
struct Dice([u8; DICE]);

/// A payload's dice, checked.
fn dice(payload: &[u8]) -> Result<[u8; DICE], String> {
    let dice: [u8; DICE] = payload
        .try_into()
        .map_err(|_| format!("payload is {} bytes, expected {DICE}", payload.len()))?;
    match dice.iter().find(|d| !(1..=6).contains(*d)) {
        Some(d) => Err(format!("a die shows {d}")),
        None => Ok(dice),
    }
}

/// Where the play stands after `n` dice: gains, and whether a 1 lost it.
fn after(dice: &[u8; DICE], n: usize) -> (u32, bool) {
    let shown = &dice[..n];
    let lost = shown.contains(&1);
    let found = shown.iter().map(|&d| u32::from(d) * CENTS_PER_PIP).sum();
    (found, lost)
}

/// The play to the end, or stopped after `stop` dice.
fn play(dice: &[u8; DICE], stop: Option<u32>) -> Result<Played, String> {
    let ends_at = dice.iter().position(|&d| d == 1).map_or(DICE, |i| i + 1);
    match stop {
        None => {
            let (found, lost) = after(dice, ends_at);
            Ok(Played {
                lot: if lost { 0 } else { LOT_END },
                prize: Prize::Amount(if lost { 0 } else { found }),
            })
        }
        Some(k) if k == 0 || k as usize >= ends_at => Err(format!(
            "no stop after {k} dice: a stop comes after the first die and before the play ends (die {ends_at})"
        )),
        Some(k) => Ok(Played {
            lot: LOT_STOPPED,
            prize: Prize::Amount(after(dice, k as usize).0),
        }),
    }
}

fn state(dice: &[u8; DICE], n: usize) -> State {
    let (found, _) = after(dice, n);
    State {
        fields: Fields::new()
            .with("dice_shown", n)
            .with("gains_cents", found),
        text: format!("{n} die/dice shown, {found} cents"),
        found_cents: found,
    }
}

impl GameUnit for Dice {
    fn outcome(&self, stop: Option<u32>) -> Result<Played, StopRefusal> {
        play(&self.0, stop).map_err(StopRefusal::Refused)
    }
    fn write_export_fields(&self, out: &mut Vec<u8>) {
        let fields = json!({ "dice": self.0 }).to_string();
        out.extend_from_slice(&fields.as_bytes()[1..fields.len() - 1]);
    }
    fn picture(&self, stop: Option<u32>) -> Result<String, StopRefusal> {
        let n = stop.map_or(DICE, |k| k as usize).min(DICE);
        Ok(format!("dice: {:?}\n", &self.0[..n]))
    }
    fn sale_view(&self) -> serde_json::Value {
        json!({ "dice": DICE })
    }
    fn tape(&self) -> Option<Tape> {
        let dice = self.0;
        let ends_at = dice.iter().position(|&d| d == 1).map_or(DICE, |i| i + 1);
        let steps = (1..=ends_at)
            .map(|n| Step {
                shown: Fields::new().with("die", dice[n - 1]),
                text: format!("die {n}: {}", dice[n - 1]),
                state: state(&dice, n),
                ends: (n == ends_at).then(|| {
                    let (found, lost) = after(&dice, n);
                    Ending {
                        name: if lost { "lost" } else { "end" },
                        prize_cents: if lost { 0 } else { found },
                    }
                }),
            })
            .collect();
        Some(Tape {
            start: state(&dice, 0),
            steps,
            first_stop: Some(1),
        })
    }
}

impl GameRules for DeDor {
    fn slug(&self) -> &'static str {
        "de-dor"
    }
    fn code(&self) -> u16 {
        99
    }
    fn id_prefix(&self) -> &'static str {
        "DD"
    }
    fn rules_version(&self) -> u16 {
        1
    }
    fn params(&self) -> [u8; 2] {
        [DICE as u8, 0]
    }
    fn payload_size(&self) -> usize {
        DICE
    }
    fn prices_cents(&self) -> &'static [u32] {
        &[100]
    }
    fn prize_model(&self) -> PrizeModel {
        PrizeModel::Drawn
    }
    fn block_units(&self) -> u32 {
        1_000
    }
    fn max_units(&self) -> u32 {
        100_000
    }
    fn generate_payload(&self, stream: &mut Stream, _lot: u8, out: &mut Vec<u8>) -> Played {
        let dice: [u8; DICE] = std::array::from_fn(|_| 1 + stream.below(6) as u8);
        out.extend_from_slice(&dice);
        play(&dice, None).expect("played to the end")
    }
    fn decode(&self, payload: &[u8]) -> Result<Box<dyn GameUnit>, InvalidUnit> {
        Ok(Box::new(Dice(dice(payload)?)))
    }
    fn lot_name(&self, code: u8) -> Option<&'static str> {
        match code {
            LOT_END => Some("fin"),
            LOT_STOPPED => Some("arret"),
            _ => None,
        }
    }
    fn step_by_step(&self) -> bool {
        true
    }
    fn early_stop_refusal(&self, steps: u32) -> String {
        format!("no stop after {steps} dice: throw the first die first")
    }
}

/// Its analysis, registered beside its rules: the PAR sheet from its
/// exact figures, with the engine's cross-checks.
impl GameAnalysis for DeDor {
    fn par_sheet(
        &self,
        game: Game,
        request: &ParRequest<'_>,
    ) -> Result<ParSheet, ticket_issuer::Error> {
        engine::par_sheet(game, request, |price_cents| DrawnFigures {
            price: "1".into(),
            rtp: Exact::ratio(625u32 * 160, 1296u32 * price_cents),
            hit_frequency: Exact::ratio(625u32, 1296u32),
        })
    }
}

/// A prize as printed ("0", "0.5", "12.3") in cents.
fn parse_price_or_zero(prize: &str) -> u32 {
    if prize == "0" {
        0
    } else {
        Cents::parse_price(prize).unwrap()
    }
}

#[test]
fn third_game_goes_through_every_step_with_no_edit_to_the_product() {
    // The registration line.
    let game = analysis::register(&DeDor, &DeDor).unwrap();
    // A second registration of it is the same game; a clash is refused.
    assert_eq!(Game::register(&DeDor).unwrap(), game);
    assert_eq!(Game::from_code(99), Some(game));

    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    store.keygen().unwrap();
    let secrets = store.secrets().unwrap();
    let keys = crate::common::StoreKeys::of(&store);

    // generate → verify (the unit rules too, with the records key).
    let emission = Emission::new(&store, game, 1).with_units(1_000).unwrap();
    emission
        .generate(&secrets, 100, BlockChoice::Number(1), &|_| {})
        .unwrap();
    let block = emission.dir().join("b000001.tkb");
    let report = keys.verify(&block, true);
    assert!(report.ok, "{:?}", report.failures);

    // export: one line a unit, the game's fields, prizes as played.
    let mut lines = Vec::new();
    let exported = export_jsonl(&keys.authentic(&block).unwrap(), &mut lines, &|_| {}).unwrap();
    assert_eq!(exported, 1_000);
    let lines: Vec<serde_json::Value> = String::from_utf8(lines)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["dice"].as_array().unwrap().len(), DICE);

    // close → sell → play → stop → redeem.
    emission.close(&secrets).unwrap();
    let redeemer = crate::common::store_redeemer(store.root(), true);
    let mut paid = 0u32;
    let mut stopped = 0;
    for _ in 0..40 {
        let sale = redeemer.sell(game, 100).unwrap();
        let id: UnitId = sale.id.parse().unwrap();
        let line = &lines[sale.index as usize];
        let dice: Vec<u8> = serde_json::from_value(line["dice"].clone()).unwrap();
        let mut view = redeemer.play(&id, PlayAction::Roll(1)).unwrap();
        assert_eq!(view.steps[0].get("die"), Some(&json!(dice[0])));
        if view.may_stop {
            // A stop after the first die pays it.
            view = redeemer.play(&id, PlayAction::Stop).unwrap();
            assert_eq!(view.end, Some("stopped"));
            stopped += 1;
        }
        let mut n = 1;
        while !view.over {
            n += 1;
            view = redeemer.play(&id, PlayAction::Roll(n)).unwrap();
        }
        let expected = match view.end {
            Some("stopped") => u32::from(dice[0]) * CENTS_PER_PIP,
            Some("lost") => 0,
            other => panic!("{other:?}"),
        };
        let redemption = redeemer.redeem(&id, None).unwrap();
        assert_eq!(parse_price_or_zero(&redemption.prize), expected, "{id}");
        paid += expected;
        // Paid once.
        assert!(redeemer.redeem(&id, None).is_err());
    }
    assert!(stopped > 0 && paid > 0);
    // A stop before the first die is the game's refusal, in its words.
    let sale = redeemer.sell(game, 100).unwrap();
    let id: UnitId = sale.id.parse().unwrap();
    let refused = redeemer.play(&id, PlayAction::Stop).unwrap_err();
    assert!(
        refused.to_string().contains("throw the first die first"),
        "{refused}"
    );

    // ledger verify: every sale, play and redemption in a sound log.
    let target = LedgerTarget::of_store(&store);
    let signer = ticket_issuer::seal::read_public(&store.ledger_public_key_path()).unwrap();
    let log = target
        .with_log(|src| log::verify(src, &[signer], None))
        .unwrap()
        .unwrap();
    assert!(log.ok, "{:?}", log.findings);

    // par: the game's sheet, its engine and block against its exact RTP.
    let authentic = keys.authentic(&block).unwrap();
    let sheet = game
        .par_sheet(&ParRequest {
            price_cents: Some(100),
            boards: 0,
            exact_boards: 0,
            samples: 20_000,
            seed: None,
            block: Some(&authentic),
        })
        .unwrap();
    let members = serde_json::to_value(&sheet.members).unwrap();
    assert_eq!(members["exact"][0]["rtp"]["fraction"], "125/162");
    for z in [
        &members["monte_carlo"][0]["rtp"]["z"],
        &members["block"]["rtp"]["z"],
    ] {
        assert!(z.as_f64().unwrap().abs() < 5.0, "{members}");
    }
    assert!(
        sheet.text.contains("PAR sheet: de-dor at 1 €"),
        "{}",
        sheet.text
    );
}
