//! Money: an amount in euro cents, the one type prices, prizes and sums are
//! parsed into and printed from. Never a float: an integer of cents, shown
//! as an exact decimal amount of euros ("0.5", "12.5", "10000", "0").

use std::fmt;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Serialize, Serializer};

/// An amount of money in euro cents (a price, a prize or a sum).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cents(pub u64);

impl Cents {
    /// No money.
    pub const ZERO: Cents = Cents(0);

    /// The amount as an exact decimal number of euros, normalized ("12.5",
    /// "10000", "0"): the form every JSON answer and report carries.
    pub fn euros(self) -> Decimal {
        let mut euros = Decimal::from(self.0);
        euros
            .set_scale(2)
            .expect("a scale of 2 is within rust_decimal's 28");
        euros.normalize()
    }

    /// Appends the amount as [`Cents::euros`] prints it, without allocating
    /// (export writes one per unit).
    pub fn write(self, out: &mut Vec<u8>) {
        let (euros, rest) = (self.0 / 100, self.0 % 100);
        push_decimal(out, euros);
        if rest != 0 {
            out.push(b'.');
            out.push(b'0' + (rest / 10) as u8);
            if rest % 10 != 0 {
                out.push(b'0' + (rest % 10) as u8);
            }
        }
    }

    /// The amount as a French player reads it, without the unit: a comma
    /// and two decimals when there are cents, groups of three digits
    /// apart (a no-break space): "0,10", "2", "2,50", "10 000".
    #[must_use]
    pub fn french(self) -> String {
        let (euros, rest) = (self.0 / 100, self.0 % 100);
        let digits = euros.to_string();
        let mut grouped = String::new();
        for (i, d) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push('\u{a0}');
            }
            grouped.push(d);
        }
        match rest {
            0 => grouped,
            _ => format!("{grouped},{rest:02}"),
        }
    }

    /// Parses a price in euros ("0.5", "1", "2", "0,5") exactly: a positive
    /// whole number of cents that fits a block header's 32 bits, else None.
    pub fn parse_price(text: &str) -> Option<u32> {
        let value: Decimal = text.replace(',', ".").parse().ok()?;
        // Checked: a huge decimal overflows when scaled to cents.
        let cents = value.checked_mul(Decimal::ONE_HUNDRED)?;
        if cents.fract() != Decimal::ZERO || cents <= Decimal::ZERO {
            return None;
        }
        cents.to_u32()
    }
}

impl From<u32> for Cents {
    fn from(cents: u32) -> Cents {
        Cents(u64::from(cents))
    }
}

impl From<u64> for Cents {
    fn from(cents: u64) -> Cents {
        Cents(cents)
    }
}

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.euros(), f)
    }
}

/// A JSON string of euros ("12.5"), as the answers have always carried.
impl Serialize for Cents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Serialize::serialize(&self.euros(), s)
    }
}

/// Appends `n` in decimal, as `Display` writes it, without the formatting
/// machinery (export writes several numbers per unit).
pub fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn french_amounts_take_a_comma_two_decimals_and_spaced_thousands() {
        for (cents, french) in [
            (0u64, "0"),
            (10, "0,10"),
            (50, "0,50"),
            (105, "1,05"),
            (200, "2"),
            (100_000, "1\u{a0}000"),
            (1_000_000, "10\u{a0}000"),
            (200_000_050, "2\u{a0}000\u{a0}000,50"),
        ] {
            assert_eq!(Cents(cents).french(), french);
        }
    }

    #[test]
    fn euros_are_written_as_display_writes_them() {
        for cents in [
            0u64,
            1,
            5,
            10,
            50,
            99,
            100,
            105,
            150,
            1_250,
            1_001_050,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            Cents(cents).write(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), Cents(cents).to_string());
        }
        assert_eq!(Cents(50).to_string(), "0.5");
        assert_eq!(Cents(1_250).to_string(), "12.5");
        assert_eq!(Cents(1_000_000).to_string(), "10000");
        assert_eq!(serde_json::to_string(&Cents(1_205)).unwrap(), "\"12.05\"");
    }

    #[test]
    fn prices_parse_exactly_or_not_at_all() {
        assert_eq!(Cents::parse_price("0.5"), Some(50));
        assert_eq!(Cents::parse_price("0,5"), Some(50));
        assert_eq!(Cents::parse_price("2"), Some(200));
        for bad in ["0", "-1", "0.005", "x", "", "99999999999999999999999"] {
            assert_eq!(Cents::parse_price(bad), None, "{bad}");
        }
    }
}
