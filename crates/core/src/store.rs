//! The issuer's store: a folder holding the keys, the emissions' blocks and
//! manifests, and the redemption ledger, at paths derived from emission and
//! block number so a unit is found from its ID alone (docs/FORMAT.md §Store layout).
//!
//! ```text
//! <store>/keys/master.key          32-byte master secret, hex (mode 0600)
//! <store>/keys/issuer.key.pem      Ed25519 private key, PKCS#8 v1 (0600)
//! <store>/keys/issuer.pub.pem      Ed25519 public key, SPKI
//! <store>/keys/shares/ile-au-tresor/e000007.json  shares of emission 7, if made from shares (0600)
//! <store>/emissions/ile-au-tresor/e000007/b000001.tkb   block 1 of emission 7
//! <store>/emissions/ile-au-tresor/e000007/manifest.json (+ .sig)
//! <store>/ledger.sqlite            redemptions
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ed25519_dalek::{SigningKey, VerifyingKey};
use rand::rngs::OsRng;
use rand::TryRngCore;

use crate::derive;
use crate::error::Error;
use crate::fsutil;
use crate::game::Game;
use crate::seal;

/// Default store folder.
pub const DEFAULT_STORE: &str = "issuer-data";

/// A store folder.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

/// The issuer's secrets: the master secret every derivation starts from,
/// the signing key, and the store whose kept shares seed the emissions
/// made from shares.
#[derive(Clone)]
pub struct Secrets {
    master: [u8; 32],
    /// The Ed25519 key that seals blocks and manifests.
    pub signing: SigningKey,
    store: Store,
    /// Whether each emission looked up is made from shares (what its
    /// manifest's version says, which never changes once written).
    from_shares: Arc<Mutex<HashMap<(Game, u32), bool>>>,
}

impl Secrets {
    /// The seed of a block as this store made it: from the emission's kept
    /// shares if it was made from shares (docs/EMISSIONS.md §A seed no one
    /// party controls), else from the master secret. `None` for an
    /// emission made from shares that this store does not keep: its seeds
    /// are unknown here, never the master secret's.
    pub fn block_seed(
        &self,
        game: Game,
        emission: u32,
        block: u32,
    ) -> Result<Option<[u8; 32]>, Error> {
        let key = match self.store.kept_shares(game, emission)? {
            Some(contributions) => contributions.seed_key(game, emission),
            None if self.made_from_shares(game, emission) => return Ok(None),
            None => self.master,
        };
        Ok(Some(derive::block_seed(&key, game, emission, block)))
    }

    /// Whether emission `emission` is made from shares, its manifest read
    /// once per emission (a `Secrets` lives as long as a service).
    fn made_from_shares(&self, game: Game, emission: u32) -> bool {
        let known = || {
            self.from_shares
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        if let Some(made) = known().get(&(game, emission)) {
            return *made;
        }
        // Read without the lock held; an emission without a manifest yet
        // is asked again next time.
        let Some(version) = self.store.manifest_version(game, emission) else {
            return false;
        };
        known().insert((game, emission), version >= 2);
        version >= 2
    }

    /// The master secret, the seed key of every emission not made from
    /// shares.
    pub(crate) fn master(&self) -> &[u8; 32] {
        &self.master
    }

    /// The records key of an emission.
    pub fn emission_records_key(&self, game: Game, emission: u32) -> [u8; 32] {
        derive::emission_records_key(&self.master, game, emission)
    }

    /// The commitment to the master secret that emission `emission`'s
    /// manifest records (docs/EMISSIONS.md §Manifest).
    pub fn master_commitment(&self, game: Game, emission: u32) -> [u8; 32] {
        derive::master_commitment(&self.master, game, emission)
    }

    /// The records key of a block.
    pub fn block_records_key(&self, game: Game, emission: u32, block: u32) -> [u8; 32] {
        derive::block_records_key(&self.emission_records_key(game, emission), block)
    }
}

impl Store {
    /// The store at `root` (not created until something is written).
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    /// The store's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The keys folder: only `keygen` writes in it.
    pub fn keys_dir(&self) -> PathBuf {
        self.root.join("keys")
    }

    /// The master secret file.
    pub fn master_path(&self) -> PathBuf {
        self.keys_dir().join("master.key")
    }

    /// The private signing key file.
    pub fn signing_key_path(&self) -> PathBuf {
        self.keys_dir().join("issuer.key.pem")
    }

    /// The public key file (hand it to auditors).
    pub fn public_key_path(&self) -> PathBuf {
        self.keys_dir().join("issuer.pub.pem")
    }

    /// The folder of the shares kept for emissions made from shares
    /// (`crate::shares`).
    pub fn shares_dir(&self) -> PathBuf {
        self.keys_dir().join("shares")
    }

    /// The folder of one game's emissions.
    fn game_dir(&self, game: Game) -> PathBuf {
        self.root.join("emissions").join(game.slug())
    }

    /// The folder of an emission.
    pub fn emission_dir(&self, game: Game, emission: u32) -> PathBuf {
        self.game_dir(game).join(format!("e{emission:06}"))
    }

    /// Where block `block` of emission `emission` of `game` lives.
    pub fn block_path(&self, game: Game, emission: u32, block: u32) -> PathBuf {
        self.emission_dir(game, emission)
            .join(format!("b{block:06}.tkb"))
    }

    /// The emission numbers of `game` the store has folders for.
    pub fn emissions(&self, game: Game) -> Vec<u32> {
        let mut numbers: Vec<u32> = std::fs::read_dir(self.game_dir(game))
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str()?.strip_prefix('e')?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        numbers.sort_unstable();
        numbers
    }

    /// Refuses a new emission `number` of `game` whose number another
    /// game's emission has already: an emission number names one
    /// emission in a store, so no later command needs `--game` to tell
    /// them apart (issue 39). The next free number is named.
    pub fn check_emission_number_free(&self, game: Game, number: u32) -> Result<(), Error> {
        let Some(taken_by) =
            Game::all().find(|g| *g != game && self.emission_dir(*g, number).is_dir())
        else {
            return Ok(());
        };
        Err(Error::EmissionNumberTaken {
            emission: number,
            taken_by: taken_by.slug(),
            next: self.next_emission_number(),
        })
    }

    /// The next emission number no game's emission has in this store.
    pub fn next_emission_number(&self) -> u32 {
        Game::all()
            .filter_map(|g| self.emissions(g).last().copied())
            .max()
            .unwrap_or(0)
            + 1
    }

    /// The game of emission `emission`: `game` if given, else the one game
    /// that has such an emission in this store.
    pub fn emission_game(&self, emission: u32, game: Option<Game>) -> Result<Game, Error> {
        if let Some(game) = game {
            return Ok(game);
        }
        let games: Vec<Game> = Game::all()
            .filter(|g| self.emission_dir(*g, emission).is_dir())
            .collect();
        match games.as_slice() {
            [one] => Ok(*one),
            [] => Err(Error::NoSuchEmission {
                emission,
                store: self.root.clone(),
            }),
            many => Err(Error::AmbiguousEmission {
                emission,
                games: many.iter().map(|g| g.slug()).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// The redemption ledger.
    pub fn ledger_path(&self) -> PathBuf {
        self.root.join("ledger.sqlite")
    }

    /// The ledger's signing key file (docs/REDEMPTION.md §Tamper-evident
    /// log): the key that signs the log's heads, apart from the issuer's.
    pub fn ledger_key_path(&self) -> PathBuf {
        self.keys_dir().join("ledger.key.pem")
    }

    /// The ledger's public key file (`ledger verify --ledger-key`).
    pub fn ledger_public_key_path(&self) -> PathBuf {
        self.keys_dir().join("ledger.pub.pem")
    }

    /// The store's ledger signing key, made (0600, with its public key
    /// beside it, 0644) on first use. Each file is written whole, then put
    /// in place without replacing one another process made meanwhile.
    pub fn ledger_signing_key(&self) -> Result<SigningKey, Error> {
        let path = self.ledger_key_path();
        if !path.exists() {
            self.create_ledger_key(&path)?;
        }
        seal::read_private(&path)
    }

    fn create_ledger_key(&self, path: &Path) -> Result<(), Error> {
        use std::io::Write as _;
        use std::os::unix::fs::PermissionsExt as _;
        let dir = self.keys_dir();
        fsutil::create_private_dir(&dir, 0o700)?;
        let signing = SigningKey::from_bytes(&os_random()?);
        let write = |target: &Path, text: String, mode: u32| -> Result<(), Error> {
            let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| Error::io(&dir, e))?;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io(target, e))?;
            tmp.write_all(text.as_bytes())
                .and_then(|()| tmp.as_file().sync_all())
                .map_err(|e| Error::io(target, e))?;
            match tmp.persist_noclobber(target) {
                Ok(_) => Ok(()),
                Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
                Err(e) => Err(Error::io(target, e.error)),
            }
        };
        write(path, seal::private_pem(&signing), 0o600)?;
        // The public key written is the one of the private key now in place.
        let kept = seal::read_private(path)?;
        write(
            &self.ledger_public_key_path(),
            seal::public_pem(&kept.verifying_key()),
            0o644,
        )
    }

    /// True when the store has its keys.
    pub fn has_keys(&self) -> bool {
        self.master_path().exists() && self.signing_key_path().exists()
    }

    /// Creates the master secret and the signing key from the OS's random
    /// source. Refuses to overwrite existing keys.
    pub fn keygen(&self) -> Result<(), Error> {
        if self.master_path().exists() || self.signing_key_path().exists() {
            return Err(Error::AlreadyExists {
                path: self.keys_dir(),
            });
        }
        // The store and its keys folder are the owner's alone, whatever
        // the umask: anyone who can write `keys/` can swap the trusted key.
        if !self.root.exists() {
            fsutil::create_private_dir(&self.root, 0o700)?;
        }
        fsutil::create_private_dir(&self.keys_dir(), 0o700)?;
        fsutil::clean_partials(&self.keys_dir())?;
        let master = os_random()?;
        let key = SigningKey::from_bytes(&os_random()?);
        fsutil::write_atomic(
            &self.signing_key_path(),
            seal::private_pem(&key).as_bytes(),
            0o600,
            false,
        )?;
        fsutil::write_atomic(
            &self.public_key_path(),
            seal::public_pem(&key.verifying_key()).as_bytes(),
            0o644,
            true,
        )?;
        // The master secret last: its presence marks a complete keygen.
        fsutil::write_atomic(
            &self.master_path(),
            format!("{}\n", hex::encode(master)).as_bytes(),
            0o600,
            false,
        )
    }

    /// Creates keys when there are none; true if it did.
    pub fn ensure_keys(&self) -> Result<bool, Error> {
        if self.has_keys() {
            return Ok(false);
        }
        self.keygen()?;
        Ok(true)
    }

    /// Loads the secrets, and checks that the signing key is the one whose
    /// public key the store hands out.
    pub fn secrets(&self) -> Result<Secrets, Error> {
        let path = self.master_path();
        if !path.exists() {
            return Err(Error::NoSecrets {
                store: self.root.clone(),
            });
        }
        self.check_keys_folder()?;
        private_only(&path)?;
        private_only(&self.signing_key_path())?;
        let text = fsutil::read_small_text(&path, fsutil::KEY_FILE_LIMIT)?;
        let bytes = hex::decode(text.trim()).ok().filter(|b| b.len() == 32);
        let master: [u8; 32] =
            bytes
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| Error::BadKey {
                    path: path.clone(),
                    reason: "expected 64 hex digits (a 32-byte secret)".into(),
                })?;
        let signing = seal::read_private(&self.signing_key_path())?;
        if signing.verifying_key() != self.public_key()? {
            return Err(Error::SigningKeyMismatch {
                private: self.signing_key_path(),
                public: self.public_key_path(),
            });
        }
        Ok(Secrets {
            master,
            signing,
            store: self.clone(),
            from_shares: Arc::default(),
        })
    }

    /// Refuses a keys folder that group or others may write.
    fn check_keys_folder(&self) -> Result<(), Error> {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.keys_dir();
        let mode = std::fs::metadata(&dir)
            .map_err(|e| Error::io(&dir, e))?
            .permissions()
            .mode();
        if mode & 0o022 != 0 {
            return Err(Error::LooseKeysFolder {
                path: dir,
                mode: mode & 0o7777,
            });
        }
        Ok(())
    }

    /// Where a command writes a file the user named: standard output for
    /// `-`, else `path`, never inside the keys folder; an existing file is
    /// replaced only with `force`.
    pub fn output(&self, path: &Path, mode: u32, force: bool) -> Result<fsutil::Output, Error> {
        if path == Path::new("-") {
            return Ok(fsutil::Output::Stdout(std::io::stdout()));
        }
        if fsutil::is_inside(path, &self.keys_dir()) {
            return Err(Error::InsideKeys {
                path: path.to_path_buf(),
                keys: self.keys_dir(),
            });
        }
        fsutil::Output::file(path, mode, force)
    }

    /// The issuer's public key from the store.
    pub fn public_key(&self) -> Result<VerifyingKey, Error> {
        let path = self.public_key_path();
        if !path.exists() {
            return Err(Error::NoPublicKey {
                store: self.root.clone(),
            });
        }
        self.check_keys_folder()?;
        seal::read_public(&path)
    }
}

/// 32 bytes from the operating system's random source: every secret the
/// store makes (master secret, signing keys, a party's share).
pub fn os_random() -> Result<[u8; 32], Error> {
    let mut bytes = [0u8; 32];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| Error::Internal {
            what: format!("the OS random source failed ({e})"),
        })?;
    Ok(bytes)
}

/// Refuses a secret key file that others can read, as ssh does: a copy
/// made with loose permissions is a leak waiting to happen.
pub fn private_only(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(Error::BadKey {
            path: path.to_path_buf(),
            reason: format!(
                "permissions {:o} let others read this secret; run `chmod 600 {}`",
                mode & 0o777,
                path.display()
            ),
        });
    }
    Ok(())
}
