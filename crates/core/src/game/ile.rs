//! « L'île au trésor »: lot tables (articles 3 and 4.5), the unit map model,
//! its generation from a unit's stream and the rules a unit must obey.
//! Every reading of the regulation made here is written in docs/GAMES.md.

use serde::Serialize;

use super::{LotTable, LotTier};
use crate::rng::Stream;

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
const SQUARES: usize = MAP_WIDTH as usize * MAP_HEIGHT as usize;
/// Bytes of a unit payload: map size, start, 9 chests, 4 throws.
pub const PAYLOAD_SIZE: usize = 4 + CHESTS * 3 + THROWS * 2;

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

    fn from_code(code: u8) -> Option<Content> {
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

/// A compass direction of the boussole (article 4.1); the discriminant is
/// its code (the order of [`Direction::ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Direction {
    /// North: y − 1.
    N,
    /// North-east: x + 1, y − 1.
    NE,
    /// East: x + 1.
    E,
    /// South-east: x + 1, y + 1.
    SE,
    /// South: y + 1.
    S,
    /// South-west: x − 1, y + 1.
    SW,
    /// West: x − 1.
    W,
    /// North-west: x − 1, y − 1.
    NW,
}

impl Direction {
    /// Every direction, in code order (the order moves are enumerated in).
    pub const ALL: [Direction; 8] = [
        Direction::N,
        Direction::NE,
        Direction::E,
        Direction::SE,
        Direction::S,
        Direction::SW,
        Direction::W,
        Direction::NW,
    ];

    /// The change of (x, y) for one step; x grows eastward, y southward.
    pub fn delta(self) -> (i32, i32) {
        match self {
            Direction::N => (0, -1),
            Direction::NE => (1, -1),
            Direction::E => (1, 0),
            Direction::SE => (1, 1),
            Direction::S => (0, 1),
            Direction::SW => (-1, 1),
            Direction::W => (-1, 0),
            Direction::NW => (-1, -1),
        }
    }

    /// "N", "NE", …
    pub fn name(self) -> &'static str {
        match self {
            Direction::N => "N",
            Direction::NE => "NE",
            Direction::E => "E",
            Direction::SE => "SE",
            Direction::S => "S",
            Direction::SW => "SW",
            Direction::W => "W",
            Direction::NW => "NW",
        }
    }

    fn code(self) -> u8 {
        self as u8
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

/// The legend printed under a unit's picture.
pub const PICTURE_LEGEND: &str =
    "@ start; 1-4 landing of each throw with what it uncovered (C chandelier, S singe, P saphir, T tete de mort, X empty chest); # chest left closed\n";

/// A square of the map: x counts columns from the west edge, y rows from the
/// north edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Square {
    /// Column, 0 = westmost.
    pub x: u8,
    /// Row, 0 = northmost.
    pub y: u8,
}

impl Square {
    fn number(self) -> usize {
        usize::from(self.y) * usize::from(MAP_WIDTH) + usize::from(self.x)
    }

    fn from_number(n: usize) -> Square {
        Square {
            x: (n % usize::from(MAP_WIDTH)) as u8,
            y: (n / usize::from(MAP_WIDTH)) as u8,
        }
    }

    /// The square `steps` squares away in `direction`, if on the map.
    fn moved(self, direction: Direction, steps: u8) -> Option<Square> {
        let (dx, dy) = direction.delta();
        let x = i32::from(self.x) + dx * i32::from(steps);
        let y = i32::from(self.y) + dy * i32::from(steps);
        let on_map =
            (0..i32::from(MAP_WIDTH)).contains(&x) && (0..i32::from(MAP_HEIGHT)).contains(&y);
        on_map.then_some(Square {
            x: x as u8,
            y: y as u8,
        })
    }
}

/// A chest on the map and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chest {
    /// Where it stands.
    pub square: Square,
    /// What is under it.
    pub content: Content,
}

/// One throw: the boussole's direction and the compteur's step count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throw {
    /// Direction of the move.
    pub direction: Direction,
    /// Squares moved, at least 1.
    pub steps: u8,
}

/// One unit's map: start square, nine chests (sorted by square, north-west
/// first) and four throws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Where the pion starts.
    pub start: Square,
    /// The nine chests, in square order (row by row from the north-west).
    pub chests: [Chest; CHESTS],
    /// The four throws, in play order.
    pub throws: [Throw; THROWS],
}

/// The content and count of lot `code` (0: a loser, no group).
fn group_of(lot: u8) -> (Content, usize) {
    match usize::from(lot)
        .checked_sub(1)
        .and_then(|i| ARTICLE_4_5.get(i))
    {
        Some(&(content, n, _)) => (content, usize::from(n)),
        None => (Content::Vide, 0),
    }
}

impl Unit {
    /// Draws a unit that wins lot `lot` (0: loses) from its stream, in the
    /// order docs/GAMES.md §Generation fixes.
    ///
    /// # Panics
    /// If `lot` is not 0..=9 (a caller bug: lots come from the lot table).
    pub fn generate(stream: &mut Stream, lot: u8) -> Unit {
        assert!(usize::from(lot) <= ARTICLE_4_5.len(), "no lot {lot}");
        let table = move_table();
        // 1-2. Start and path; a path with no legal next move is drawn again.
        let (start, landings, throws) = loop {
            let start = stream.below(SQUARES as u32) as usize;
            if let Some((landings, throws)) = draw_path(table, stream, start) {
                break (start, landings, throws);
            }
        };
        // 3. What the four landings uncover: the lot's group, the rest drawn
        // uniformly and redrawn while the four do not win exactly that lot.
        let (group, k) = group_of(lot);
        let mut uncovered = [group as u8; THROWS];
        let verdicts = verdict_table();
        loop {
            for slot in uncovered.iter_mut().skip(k) {
                *slot = stream.below(5) as u8;
            }
            if verdicts[fill_index(&uncovered)] == lot {
                break;
            }
        }
        stream.shuffle(&mut uncovered);
        // 4. Five more chests on distinct free squares, each content uniform:
        // a partial Fisher-Yates over the free squares in square order.
        let taken = landings
            .iter()
            .fold(1u64 << start, |mask, &sq| mask | 1 << sq);
        let mut free = [0u8; SQUARES];
        let mut free_len = 0;
        for n in 0..SQUARES {
            // Branch-free: written always, kept when the square is free.
            free[free_len] = n as u8;
            free_len += (!taken >> n & 1) as usize;
        }
        let others = CHESTS - THROWS;
        for i in 0..others {
            let j = i + stream.below((free_len - i) as u32) as usize;
            free.swap(i, j);
        }
        // The chests by square (contents drawn in the order above), then
        // read back in square order.
        let mut content_at = [0u8; SQUARES];
        for (&sq, &content) in landings.iter().zip(&uncovered) {
            content_at[usize::from(sq)] = content;
        }
        let mut chest_squares = taken & !(1u64 << start);
        for &sq in &free[..others] {
            content_at[usize::from(sq)] = stream.below(5) as u8;
            chest_squares |= 1 << sq;
        }
        let mut chests = [Chest {
            square: Square { x: 0, y: 0 },
            content: Content::Vide,
        }; CHESTS];
        for chest in &mut chests {
            let n = chest_squares.trailing_zeros() as usize;
            chest_squares &= chest_squares - 1;
            *chest = Chest {
                square: Square::from_number(n),
                content: Content::ALL[usize::from(content_at[n])],
            };
        }
        Unit {
            start: Square::from_number(start),
            chests,
            throws,
        }
    }

    /// Appends the payload layout of docs/FORMAT.md §Île au trésor payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut payload = [0u8; PAYLOAD_SIZE];
        payload[..4].copy_from_slice(&[MAP_WIDTH, MAP_HEIGHT, self.start.x, self.start.y]);
        for (b, c) in payload[4..].chunks_exact_mut(3).zip(&self.chests) {
            b.copy_from_slice(&[c.square.x, c.square.y, c.content as u8]);
        }
        for (b, t) in payload[4 + 3 * CHESTS..]
            .chunks_exact_mut(2)
            .zip(&self.throws)
        {
            b.copy_from_slice(&[t.direction.code(), t.steps]);
        }
        out.extend_from_slice(&payload);
    }

    /// Decodes a payload; fails on a wrong size, map size or unknown code.
    pub fn decode(payload: &[u8]) -> Result<Unit, String> {
        if payload.len() != PAYLOAD_SIZE {
            return Err(format!(
                "payload is {} bytes, expected {PAYLOAD_SIZE}",
                payload.len()
            ));
        }
        if payload[0] != MAP_WIDTH || payload[1] != MAP_HEIGHT {
            return Err(format!(
                "map is {}×{}, this model is {MAP_WIDTH}×{MAP_HEIGHT}",
                payload[0], payload[1]
            ));
        }
        // The message is built only on failure: decode runs for every unit
        // a verification or an export reads.
        let square = |x: u8, y: u8, what: &dyn Fn() -> String| {
            if x < MAP_WIDTH && y < MAP_HEIGHT {
                Ok(Square { x, y })
            } else {
                Err(format!("{} at ({x}, {y}) is off the map", what()))
            }
        };
        let start = square(payload[2], payload[3], &|| "start".into())?;
        let mut chests = [Chest {
            square: start,
            content: Content::Vide,
        }; CHESTS];
        for (i, chest) in chests.iter_mut().enumerate() {
            let b = &payload[4 + 3 * i..7 + 3 * i];
            let content = Content::from_code(b[2])
                .ok_or_else(|| format!("chest {i} has unknown content code {}", b[2]))?;
            *chest = Chest {
                square: square(b[0], b[1], &|| format!("chest {i}"))?,
                content,
            };
        }
        let mut throws = [Throw {
            direction: Direction::N,
            steps: 0,
        }; THROWS];
        for (i, throw) in throws.iter_mut().enumerate() {
            let b = &payload[4 + 3 * CHESTS + 2 * i..6 + 3 * CHESTS + 2 * i];
            let direction = Direction::ALL
                .get(usize::from(b[0]))
                .copied()
                .ok_or_else(|| format!("throw {} has unknown direction code {}", i + 1, b[0]))?;
            *throw = Throw {
                direction,
                steps: b[1],
            };
        }
        Ok(Unit {
            start,
            chests,
            throws,
        })
    }

    /// Plays the unit under the rules of docs/GAMES.md and returns the lot
    /// it reveals (0: none), or the first rule it breaks.
    pub fn play(&self) -> Result<u8, String> {
        // Chests by square: a bit mask and a content table (this runs for
        // every unit a verification or an export reads).
        let mut chest_squares = 0u64;
        let mut content_at = [0u8; SQUARES];
        for (i, c) in self.chests.iter().enumerate() {
            let n = c.square.number();
            if c.square == self.start {
                return Err(format!("chest {i} stands on the start square"));
            }
            if chest_squares & 1 << n != 0 {
                return Err(format!(
                    "two chests on square ({}, {})",
                    c.square.x, c.square.y
                ));
            }
            chest_squares |= 1 << n;
            content_at[n] = c.content as u8;
        }
        let landings = self.landings()?;
        let mut uncovered = [0u8; THROWS];
        for (i, square) in landings.iter().enumerate() {
            let n = square.number();
            if chest_squares & 1 << n == 0 {
                return Err(format!(
                    "throw {} lands on ({}, {}) where there is no chest",
                    i + 1,
                    square.x,
                    square.y
                ));
            }
            uncovered[i] = content_at[n];
        }
        match verdict_table()[fill_index(&uncovered)] {
            NO_LOT => judge(&uncovered.map(|c| Content::ALL[usize::from(c)])),
            lot => Ok(lot),
        }
    }

    /// The squares the four throws land on, checking each move stays on the
    /// map and never lands on a square already visited.
    pub fn landings(&self) -> Result<[Square; THROWS], String> {
        let mut at = self.start;
        let mut landings = [at; THROWS];
        for (i, t) in self.throws.iter().enumerate() {
            if t.steps == 0 {
                return Err(format!("throw {} has 0 steps", i + 1));
            }
            at = at.moved(t.direction, t.steps).ok_or_else(|| {
                format!(
                    "throw {} ({} {}) leaves the map from ({}, {})",
                    i + 1,
                    t.direction.name(),
                    t.steps,
                    at.x,
                    at.y
                )
            })?;
            if at == self.start || landings[..i].contains(&at) {
                return Err(format!(
                    "throw {} lands again on ({}, {})",
                    i + 1,
                    at.x,
                    at.y
                ));
            }
            landings[i] = at;
        }
        Ok(landings)
    }

    /// The serialisable view used by `export` and `redeem --json`.
    pub fn view(&self) -> UnitView {
        UnitView {
            map: MapSize {
                width: MAP_WIDTH,
                height: MAP_HEIGHT,
            },
            start: self.start,
            chests: self
                .chests
                .iter()
                .map(|c| ChestView {
                    x: c.square.x,
                    y: c.square.y,
                    content: c.content.name(),
                })
                .collect(),
            throws: self
                .throws
                .iter()
                .map(|t| ThrowView {
                    direction: t.direction.name(),
                    steps: t.steps,
                })
                .collect(),
        }
    }

    /// Appends the unit's export fields (the members of [`Unit::view`] as
    /// serde_json writes them) to `out`: copies of the text of its start,
    /// chests and throws, written once (export writes every unit).
    pub fn write_export_fields(&self, out: &mut Vec<u8>) {
        let text = export_text();
        out.extend_from_slice(&text.heads[self.start.number()]);
        for (i, c) in self.chests.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(
                &text.chests[c.square.number() * Content::ALL.len() + c.content as usize],
            );
        }
        out.extend_from_slice(br#"],"throws":["#);
        for (i, t) in self.throws.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match text
                .throws
                .get(usize::from(t.direction.code()) * THROW_TEXTS + usize::from(t.steps))
            {
                Some(bytes) if t.steps <= MAX_STEPS => out.extend_from_slice(bytes),
                _ => write_throw(t, out),
            }
        }
        out.push(b']');
    }

    /// The map as text, as the player sees it once all four throws are
    /// played: `@` the start, `1C` … `4X` each landing with what it
    /// uncovered, `#` the chests left closed, then a legend line.
    pub fn picture(&self) -> String {
        let landings = self.landings().ok();
        let mut out = String::new();
        for y in 0..MAP_HEIGHT {
            for x in 0..MAP_WIDTH {
                let sq = Square { x, y };
                let landed = landings
                    .as_ref()
                    .and_then(|l| l.iter().position(|s| *s == sq));
                let chest = self.chests.iter().find(|c| c.square == sq);
                let cell = match (chest, landed) {
                    (Some(c), Some(n)) => format!("{}{}", n + 1, c.content.letter()),
                    (Some(_), None) => " #".to_string(),
                    (None, _) if sq == self.start => " @".to_string(),
                    (None, _) => " .".to_string(),
                };
                if x > 0 {
                    out.push(' ');
                }
                out.push_str(&cell);
            }
            out.push('\n');
        }
        out.push_str(PICTURE_LEGEND);
        out
    }
}

/// The lot each of the 5⁴ uncovered sets wins (`NO_LOT` for a set that is
/// no valid unit), indexed by [`fill_index`]: the rejection loop's test,
/// one load per drawn fill.
fn verdict_table() -> &'static [u8; 625] {
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
const NO_LOT: u8 = u8::MAX;

/// The index of four content codes in [`verdict_table`]: slot t's code
/// times 5^t.
#[inline]
fn fill_index(uncovered: &[u8; THROWS]) -> usize {
    uncovered
        .iter()
        .rev()
        .fold(0, |i, &c| i * 5 + usize::from(c))
}

/// Moves from one square: at most 7 steps in each of 8 directions.
const MAX_MOVES: usize = 8 * MAX_STEPS as usize;

/// Marks a square no move from a given square reaches.
const NO_MOVE: u8 = u8::MAX;

/// Every move from every square, in the order draws enumerate them
/// (direction in code order, then steps 1..=7), and which move reaches
/// which square: built once, so a throw costs a bit mask and a short walk.
struct MoveTable {
    /// Moves from square n, in draw order: (throw, square number reached).
    moves: [[(Throw, u8); MAX_MOVES]; SQUARES],
    /// Number of moves from square n.
    count: [u8; SQUARES],
    /// `index_of[n][t]`: the position in `moves[n]` of the move from n to
    /// t (every move from a square reaches a different square), or NO_MOVE.
    index_of: [[u8; SQUARES]; SQUARES],
}

// One bit per move in a `u64` mask.
const _: () = assert!(MAX_MOVES <= 64, "more moves than a u64 mask holds");

fn move_table() -> &'static MoveTable {
    static TABLE: std::sync::OnceLock<Box<MoveTable>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let none = (
            Throw {
                direction: Direction::N,
                steps: 0,
            },
            0,
        );
        let mut table = Box::new(MoveTable {
            moves: [[none; MAX_MOVES]; SQUARES],
            count: [0; SQUARES],
            index_of: [[NO_MOVE; SQUARES]; SQUARES],
        });
        for n in 0..SQUARES {
            let at = Square::from_number(n);
            let mut len = 0;
            for direction in Direction::ALL {
                for steps in 1..=MAX_STEPS {
                    let Some(to) = at.moved(direction, steps) else {
                        // Farther steps in this direction leave the map too.
                        break;
                    };
                    table.moves[n][len] = (Throw { direction, steps }, to.number() as u8);
                    table.index_of[n][to.number()] = len as u8;
                    len += 1;
                }
            }
            table.count[n] = len as u8;
        }
        table
    })
}

/// Draws four throws from square `start`: each uniformly among the moves
/// (direction in code order, then steps 1..=7) that stay on the map and land
/// on a square not yet visited. `None` when some throw has no such move.
/// Returns the landing squares' numbers and the throws.
fn draw_path(
    table: &MoveTable,
    stream: &mut Stream,
    start: usize,
) -> Option<([u8; THROWS], [Throw; THROWS])> {
    let mut at = start;
    let mut visited = [start as u8; THROWS + 1];
    let mut landings = [0u8; THROWS];
    let mut throws = [Throw {
        direction: Direction::N,
        steps: 1,
    }; THROWS];
    for i in 0..THROWS {
        // The legal moves are the table's, less those landing on a visited
        // square (the start or an earlier landing): one bit per move.
        let mut legal = u64::MAX >> (64 - u32::from(table.count[at]));
        for &v in &visited[..=i] {
            let index = table.index_of[at][usize::from(v)];
            if index != NO_MOVE {
                legal &= !(1 << index);
            }
        }
        let len = legal.count_ones();
        if len == 0 {
            return None;
        }
        // The k-th legal move in draw order: drop the k lowest bits.
        for _ in 0..stream.below(len) {
            legal &= legal - 1;
        }
        let (throw, to) = table.moves[at][legal.trailing_zeros() as usize];
        throws[i] = throw;
        landings[i] = to;
        visited[i + 1] = to;
        at = usize::from(to);
    }
    Some((landings, throws))
}

/// Throw texts per direction: steps 0 to MAX_STEPS (others are written
/// when met).
const THROW_TEXTS: usize = MAX_STEPS as usize + 1;

/// The export text of every start square (with the members before the
/// chests), chest (square × content) and throw (direction × steps).
struct ExportText {
    heads: Vec<Vec<u8>>,
    chests: Vec<Vec<u8>>,
    throws: Vec<Vec<u8>>,
}

fn export_text() -> &'static ExportText {
    static TEXT: std::sync::OnceLock<ExportText> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let text = |write: &dyn Fn(&mut Vec<u8>)| {
            let mut out = Vec::new();
            write(&mut out);
            out
        };
        let squares = (0..SQUARES).map(Square::from_number);
        ExportText {
            heads: squares
                .clone()
                .map(|sq| text(&|o| write_head(sq, o)))
                .collect(),
            chests: squares
                .flat_map(|square| Content::ALL.map(|content| Chest { square, content }))
                .map(|c| text(&|o| write_chest(&c, o)))
                .collect(),
            throws: Direction::ALL
                .iter()
                .flat_map(|&direction| (0..=MAX_STEPS).map(move |steps| Throw { direction, steps }))
                .map(|t| text(&|o| write_throw(&t, o)))
                .collect(),
        }
    })
}

fn small(out: &mut Vec<u8>, n: u8) {
    super::push_decimal(out, u64::from(n));
}

/// `"map":{…},"start":{…},"chests":[`
fn write_head(start: Square, out: &mut Vec<u8>) {
    out.extend_from_slice(br#""map":{"width":"#);
    small(out, MAP_WIDTH);
    out.extend_from_slice(br#","height":"#);
    small(out, MAP_HEIGHT);
    out.extend_from_slice(br#"},"start":{"x":"#);
    small(out, start.x);
    out.extend_from_slice(br#","y":"#);
    small(out, start.y);
    out.extend_from_slice(br#"},"chests":["#);
}

/// `{"x":…,"y":…,"content":"…"}`
fn write_chest(c: &Chest, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"x":"#);
    small(out, c.square.x);
    out.extend_from_slice(br#","y":"#);
    small(out, c.square.y);
    out.extend_from_slice(br#","content":""#);
    out.extend_from_slice(c.content.name().as_bytes());
    out.extend_from_slice(br#""}"#);
}

/// `{"direction":"…","steps":…}`
fn write_throw(t: &Throw, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"direction":""#);
    out.extend_from_slice(t.direction.name().as_bytes());
    out.extend_from_slice(br#"","steps":"#);
    small(out, t.steps);
    out.push(b'}');
}

/// Map size, as exported.
#[derive(Serialize)]
pub struct MapSize {
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
}

/// A chest, as exported.
#[derive(Serialize)]
pub struct ChestView {
    /// Column.
    pub x: u8,
    /// Row.
    pub y: u8,
    /// `chandelier`, `singe`, `saphir`, `tete_de_mort` or `vide`.
    pub content: &'static str,
}

/// A throw, as exported.
#[derive(Serialize)]
pub struct ThrowView {
    /// `N`, `NE`, … `NW`.
    pub direction: &'static str,
    /// Squares moved.
    pub steps: u8,
}

/// A unit's map, as exported (field order is the export schema's).
#[derive(Serialize)]
pub struct UnitView {
    /// Map size.
    pub map: MapSize,
    /// Start square of the pion.
    pub start: Square,
    /// The nine chests.
    pub chests: Vec<ChestView>,
    /// The four throws.
    pub throws: Vec<ThrowView>,
}

/// L'île au trésor as the shared machinery sees it (`super::GameRules`).
pub struct Rules;

/// Its prices, in cents (article 3: 0.5, 1 and 2 €).
const PRICES_CENTS: [u32; 3] = [50, 100, 200];

impl super::GameRules for Rules {
    /// Straight from the lot table (article 3).
    fn par_sheet(
        &self,
        request: &crate::par::ParRequest<'_>,
    ) -> Result<crate::par::ParSheet, crate::error::Error> {
        crate::par::table::par_sheet(super::Game::ILE_AU_TRESOR, request)
    }

    fn slug(&self) -> &'static str {
        "ile-au-tresor"
    }

    fn code(&self) -> u16 {
        1
    }

    fn id_prefix(&self) -> &'static str {
        "IAT"
    }

    fn rules_version(&self) -> u16 {
        1
    }

    fn params(&self) -> [u8; 2] {
        [MAP_WIDTH, MAP_HEIGHT]
    }

    fn payload_size(&self) -> usize {
        PAYLOAD_SIZE
    }

    fn prices_cents(&self) -> &'static [u32] {
        &PRICES_CENTS
    }

    fn prize_model(&self) -> super::PrizeModel {
        super::PrizeModel::FixedTable
    }

    fn block_units(&self) -> u32 {
        BLOCK_UNITS
    }

    fn max_units(&self) -> u32 {
        BLOCK_UNITS
    }

    fn lot_table(&self, price_cents: u32) -> Option<LotTable> {
        lot_table(price_cents)
    }

    fn generate_payload(&self, stream: &mut Stream, lot: u8, out: &mut Vec<u8>) -> super::Played {
        Unit::generate(stream, lot).encode(out);
        // The unit was drawn to win exactly `lot` (its fill is redrawn until
        // the four uncovered chests do).
        super::Played {
            lot,
            prize_cents: None,
        }
    }

    fn play_to_end(&self, payload: &[u8]) -> Result<super::Played, String> {
        Ok(super::Played {
            lot: Unit::decode(payload)?.play()?,
            prize_cents: None,
        })
    }

    fn outcome(
        &self,
        payload: &[u8],
        stop: Option<u32>,
    ) -> Result<super::Played, super::StopRefusal> {
        if let Some(rolls) = stop {
            return Err(super::StopRefusal::Refused(format!(
                "L'île au trésor has no stop: its four throws are always played (asked to stop after {rolls})"
            )));
        }
        self.play_to_end(payload)
            .map_err(super::StopRefusal::Invalid)
    }

    fn lot_name(&self, code: u8) -> Option<&'static str> {
        lot_name(code)
    }

    fn write_export_fields(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        Unit::decode(payload)?.write_export_fields(out);
        Ok(())
    }

    fn play_and_export(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<super::Played, String> {
        let unit = Unit::decode(payload)?;
        let lot = unit.play()?;
        unit.write_export_fields(out);
        Ok(super::Played {
            lot,
            prize_cents: None,
        })
    }

    fn picture(&self, payload: &[u8], stop: Option<u32>) -> Result<String, String> {
        if stop.is_some() {
            return Err("L'île au trésor has no stop".into());
        }
        Ok(Unit::decode(payload)?.picture())
    }

    fn sale_view(&self, payload: &[u8]) -> Result<serde_json::Value, String> {
        serde_json::to_value(Unit::decode(payload)?.view()).map_err(|e| e.to_string())
    }
}
