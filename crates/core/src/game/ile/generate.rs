//! A unit's generation from its own stream, in the order docs/GAMES.md
//! §Generation fixes: start and path (from a table of every move), the
//! lot's group and the fill of the uncovered chests, then the other chests.

use super::regulation::{
    fill_index, verdict_table, Content, ARTICLE_4_5, CHESTS, MAX_STEPS, SQUARES, THROWS,
};
use super::unit::{Chest, Direction, Square, Throw, Unit};
use crate::rng::Stream;

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
