//! Words of the texts people read: a count and its noun in the right
//! number, for every crate's messages (one place, not one a crate).

/// "1 chest", "3 chests".
pub fn plural(n: impl TryInto<u64>, noun: &str) -> String {
    counted(n, noun, &format!("{noun}s"))
}

/// "1 entry", "3 entries": a noun whose plural is not its singular and s.
pub fn counted(n: impl TryInto<u64>, one: &str, many: &str) -> String {
    match n.try_into().unwrap_or(u64::MAX) {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}
