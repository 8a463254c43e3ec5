//! Words of the texts people read: a count and its noun in the right
//! number, for every crate's messages (one place, not one a crate).

/// "1 chest", "3 chests".
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}
