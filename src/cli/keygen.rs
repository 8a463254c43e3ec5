//! `issuer keygen`.

use super::args::JsonArg;
use super::json::print_json;
use ticket_issuer::error::Error;
use ticket_issuer::store::Store;

/// Runs `keygen`: the store's master secret and signing key.
pub fn run(store: &Store, args: &JsonArg) -> Result<i32, Error> {
    store.keygen()?;
    if args.json {
        #[derive(serde::Serialize)]
        struct Made {
            keys: String,
            public_key: String,
        }
        print_json(
            "keygen",
            &Made {
                keys: store.keys_dir().display().to_string(),
                public_key: store.public_key_path().display().to_string(),
            },
        );
    } else {
        outln!(
            "created issuer keys in {} (public key: {})",
            store.keys_dir().display(),
            store.public_key_path().display()
        );
    }
    Ok(0)
}
