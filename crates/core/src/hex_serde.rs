//! Bytes as lowercase hex in JSON, for serde's `with` attribute: a 32-byte
//! key, any bytes, optional bytes.

/// A 32-byte key as 64 hex digits in JSON; anything else fails to parse.
pub(crate) mod key {
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    /// Writes the key as hex.
    pub fn serialize<S: Serializer>(key: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(key))
    }

    /// Reads 64 hex digits.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let text = String::deserialize(d)?;
        hex::decode(&text)
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| D::Error::custom("the key is not 64 hex digits (a 32-byte key)"))
    }
}

/// Bytes as lowercase hex in JSON.
pub(crate) mod bytes {
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    /// Writes the bytes as hex.
    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        hex::decode(&text).map_err(|_| D::Error::custom("not hex digits"))
    }
}

/// Optional bytes as lowercase hex in JSON.
pub(crate) mod opt_bytes {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(b) => crate::hex_serde::bytes::serialize(b, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        crate::hex_serde::bytes::deserialize(d).map(Some)
    }
}
