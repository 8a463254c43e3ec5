//! The regulation's numbers and its judge: the block and map constants,
//! what a chest holds (article 4.3), the lot tables of articles 3 and 4.5,
//! and what four uncovered contents win (the judge, and its table the
//! generator and the rule check read).

use crate::game::{LotTable, LotTier};

/// Units per block (article 2).
pub const BLOCK_UNITS: u32 = 450_000;
/// Map width in squares (our choice, recorded in every block header).
pub const MAP_WIDTH: u8 = 8;
/// Map height in squares.
pub const MAP_HEIGHT: u8 = 8;
/// Chests on every map (article 4.3).
pub const CHESTS: usize = 9;
/// Throws of the pion (article 4.4).
pub const THROWS: usize = 4;
/// Longest throw: a step count takes the pion at most across the map.
pub const MAX_STEPS: u8 = 7;
/// Squares on the map.
pub(super) const SQUARES: usize = MAP_WIDTH as usize * MAP_HEIGHT as usize;

/// What a chest holds (article 4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Content {
    /// An empty chest, shown as a cross: never part of a winning group.
    Vide = 0,
    /// Chandelier: one already wins.
    Chandelier = 1,
    /// Singe.
    Singe = 2,
    /// Saphir.
    Saphir = 3,
    /// Tête de mort.
    TeteDeMort = 4,
}

impl Content {
    /// Every content, in code order.
    pub const ALL: [Content; 5] = [
        Content::Vide,
        Content::Chandelier,
        Content::Singe,
        Content::Saphir,
        Content::TeteDeMort,
    ];

    pub(super) fn from_code(code: u8) -> Option<Content> {
        Content::ALL.get(usize::from(code)).copied()
    }

    /// The name used in exports and lot names.
    pub fn name(self) -> &'static str {
        match self {
            Content::Vide => "vide",
            Content::Chandelier => "chandelier",
            Content::Singe => "singe",
            Content::Saphir => "saphir",
            Content::TeteDeMort => "tete_de_mort",
        }
    }

    /// One letter for text pictures.
    pub fn letter(self) -> char {
        match self {
            Content::Vide => 'X',
            Content::Chandelier => 'C',
            Content::Singe => 'S',
            Content::Saphir => 'P',
            Content::TeteDeMort => 'T',
        }
    }
}

/// Article 4.5: what the player uncovers, and the lot it wins at 0.5, 1 and
/// 2 € (cents). A row's position + 1 is the lot's code in unit records.
pub const ARTICLE_4_5: [(Content, u8, [u32; 3]); 9] = [
    (Content::Chandelier, 3, [500_000, 1_000_000, 2_000_000]),
    (Content::Singe, 3, [25_000, 50_000, 100_000]),
    (Content::Saphir, 3, [7_500, 15_000, 30_000]),
    (Content::TeteDeMort, 3, [2_500, 5_000, 10_000]),
    (Content::Chandelier, 2, [1_250, 2_500, 5_000]),
    (Content::Singe, 2, [500, 1_000, 2_000]),
    (Content::Saphir, 2, [150, 300, 600]),
    (Content::TeteDeMort, 2, [100, 200, 400]),
    (Content::Chandelier, 1, [50, 100, 200]),
];

/// Article 3.1 to 3.3: (number of lots, amount in cents) per block, in the
/// article's order, for units at 0.5, 1 and 2 €.
pub const ARTICLE_3: [(u32, [(u32, u32); 9]); 3] = [
    (
        50,
        [
            (1, 500_000),
            (3, 25_000),
            (100, 7_500),
            (1_000, 2_500),
            (500, 1_250),
            (2_000, 500),
            (26_000, 150),
            (38_000, 100),
            (52_000, 50),
        ],
    ),
    (
        100,
        [
            (1, 1_000_000),
            (3, 50_000),
            (100, 15_000),
            (1_000, 5_000),
            (500, 2_500),
            (2_000, 1_000),
            (26_000, 300),
            (38_000, 200),
            (52_000, 100),
        ],
    ),
    (
        200,
        [
            (1, 2_000_000),
            (3, 100_000),
            (100, 30_000),
            (1_000, 10_000),
            (500, 5_000),
            (2_000, 2_000),
            (26_000, 600),
            (38_000, 400),
            (52_000, 200),
        ],
    ),
];

/// The article 3 table of a block at `price_cents`, lot codes from article 4.5.
pub fn lot_table(price_cents: u32) -> Option<LotTable> {
    let (_, rows) = ARTICLE_3.iter().find(|(p, _)| *p == price_cents)?;
    let tiers = rows
        .iter()
        .enumerate()
        .map(|(i, &(count, amount_cents))| LotTier {
            code: i as u8 + 1,
            count,
            amount_cents,
        })
        .collect();
    Some(LotTable { price_cents, tiers })
}

/// "chandelier-3", "singe-2", … for lot `code`.
pub fn lot_name(code: u8) -> Option<&'static str> {
    const NAMES: [&str; 9] = [
        "chandelier-3",
        "singe-3",
        "saphir-3",
        "tete_de_mort-3",
        "chandelier-2",
        "singe-2",
        "saphir-2",
        "tete_de_mort-2",
        "chandelier-1",
    ];
    NAMES.get(usize::from(code).checked_sub(1)?).copied()
}

/// The lot (0: none) that four uncovered contents win under article 4.5, or
/// why they are not a valid unit: four identical symbols, or more than one
/// winning group (the player wins one lot at most).
pub fn judge(uncovered: &[Content; THROWS]) -> Result<u8, String> {
    match Verdict::of(uncovered) {
        Verdict::Lot(lot) => Ok(lot),
        Verdict::FourOf(c) => Err(format!("uncovered four identical symbols ({})", c.name())),
        Verdict::Groups(groups) => Err(format!(
            "uncovered {} winning groups ({})",
            groups.len(),
            groups
                .iter()
                .map(|&i| format!("{}×{}", ARTICLE_4_5[i].1, ARTICLE_4_5[i].0.name()))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// What four uncovered contents give, without allocating: the generator's
/// rejection loop asks this for every fill it draws.
enum Verdict {
    /// A valid set winning this lot (0: none).
    Lot(u8),
    /// Four identical symbols (never a valid unit).
    FourOf(Content),
    /// More than one winning group: their rows of article 4.5.
    Groups(GroupRows),
}

/// Up to three rows of article 4.5 (four chests hold at most three groups).
struct GroupRows {
    rows: [usize; 3],
    len: usize,
}

impl GroupRows {
    fn len(&self) -> usize {
        self.len
    }

    fn iter(&self) -> impl Iterator<Item = &usize> {
        self.rows[..self.len].iter()
    }
}

impl Verdict {
    #[inline]
    fn of(uncovered: &[Content; THROWS]) -> Verdict {
        let mut counts = [0u8; 5];
        for c in uncovered {
            counts[*c as usize] += 1;
        }
        if let Some(c) = Content::ALL[1..].iter().find(|c| counts[**c as usize] == 4) {
            return Verdict::FourOf(*c);
        }
        let mut rows = [0usize; 3];
        let mut len = 0;
        for (i, (content, n, _)) in ARTICLE_4_5.iter().enumerate() {
            if counts[*content as usize] == *n {
                if len == rows.len() {
                    break;
                }
                rows[len] = i;
                len += 1;
            }
        }
        match len {
            0 => Verdict::Lot(0),
            1 => Verdict::Lot(rows[0] as u8 + 1),
            _ => Verdict::Groups(GroupRows { rows, len }),
        }
    }
}

/// The lot each of the 5⁴ uncovered sets wins (`NO_LOT` for a set that is
/// no valid unit), indexed by [`fill_index`]: the rejection loop's test,
/// one load per drawn fill.
pub(super) fn verdict_table() -> &'static [u8; 625] {
    static TABLE: std::sync::OnceLock<[u8; 625]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [NO_LOT; 625];
        for (i, lot) in table.iter_mut().enumerate() {
            let set = std::array::from_fn(|slot| Content::ALL[i / 5usize.pow(slot as u32) % 5]);
            if let Verdict::Lot(l) = Verdict::of(&set) {
                *lot = l;
            }
        }
        table
    })
}

/// Marks a set of uncovered contents that is no valid unit.
pub(super) const NO_LOT: u8 = u8::MAX;

/// The index of four content codes in [`verdict_table`]: slot t's code
/// times 5^t.
#[inline]
pub(super) fn fill_index(uncovered: &[u8; THROWS]) -> usize {
    uncovered
        .iter()
        .rev()
        .fold(0, |i, &c| i * 5 + usize::from(c))
}
