//! [`Error`]: one variant per distinct failure, each message saying what
//! went wrong, where, and what to do.

use std::path::{Path, PathBuf};

use super::kind::{echo, HeaderProblem};
use crate::money::Cents;

/// Everything that can go wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A block file's header can't be read: not a block, an unknown format
    /// version, or cut short.
    #[error("{}: {problem}", path.display())]
    UnreadableBlock {
        /// The file.
        path: PathBuf,
        /// What is wrong with its header.
        problem: HeaderProblem,
    },
    /// Refusing to overwrite something that exists.
    #[error("{} already exists; refusing to overwrite it", path.display())]
    AlreadyExists {
        /// What exists.
        path: PathBuf,
    },
    /// The store has no issuer secrets, and the command is the issuer's own.
    #[error("store {} has no issuer secrets (keys/master.key): generate, close, reveal and keys export-records-key run in the issuer's own store; pass --store DIR to point at it, or run `issuer keygen` only to set up a new issuer", store.display())]
    NoSecrets {
        /// The store folder.
        store: PathBuf,
    },
    /// No trusted public key: the store has none and none was given.
    #[error("no trusted issuer public key: store {} has none (keys/issuer.pub.pem); pass --public-key FILE with the issuer's public key (a key made in this store would not be the issuer's, and every genuine block would fail)", store.display())]
    NoPublicKey {
        /// The store folder.
        store: PathBuf,
    },
    /// A key file is not what it should be.
    #[error("key file {}: {reason}", path.display())]
    BadKey {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A records key that does not open this block.
    #[error("{}: {reason}", path.display())]
    WrongRecordsKey {
        /// The block file.
        path: PathBuf,
        /// Which key was given and which is needed.
        reason: String,
    },
    /// The records key is needed and was not available.
    #[error("{what} needs the records key of {block}: run it with the issuer's store, or pass --records-key FILE (from `issuer keys export-records-key`)")]
    NeedRecordsKey {
        /// The operation.
        what: String,
        /// The block.
        block: String,
    },
    /// A game name the tool does not know.
    #[error("unknown game {:?}; known games: {known}", echo(name))]
    UnknownGame {
        /// What was given.
        name: String,
        /// The known slugs.
        known: String,
    },
    /// A price the game's regulation does not sell at.
    #[error("{game} is not sold at {} €; its prices are {allowed} €", echo(price))]
    UnsupportedPrice {
        /// The game.
        game: &'static str,
        /// The price asked for, as given.
        price: String,
        /// The allowed prices.
        allowed: String,
    },
    /// A unit ID that is not well formed.
    #[error("unit ID {:?} is malformed: {reason}", echo(id))]
    MalformedId {
        /// What was given.
        id: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A unit ID whose check code is wrong: mistyped or invented.
    #[error("unit ID {id} is not valid: its check code does not match (mistyped or invented ID); nothing was recorded")]
    CheckCodeMismatch {
        /// The ID.
        id: String,
    },
    /// A unit ID whose index is beyond the block's size.
    #[error("unit ID {id}: index {index} is out of range (a block holds units 0 to {last}); nothing was recorded")]
    IndexOutOfRange {
        /// The ID.
        id: String,
        /// The index.
        index: u32,
        /// The last valid index.
        last: u32,
    },
    /// A unit ID naming an emission the store does not have.
    #[error("unit ID {id}: this store has no emission {emission} of {game} ({}); nothing was recorded", path.display())]
    UnknownEmission {
        /// The ID.
        id: String,
        /// The game's slug.
        game: &'static str,
        /// The emission's number within its game.
        emission: u32,
        /// Where the emission would be.
        path: PathBuf,
    },
    /// A unit ID naming a block the store does not have.
    #[error("unit ID {id}: no block {block} of emission {emission} in this store ({}); nothing was recorded", path.display())]
    UnknownBlock {
        /// The ID.
        id: String,
        /// The emission's number within its game.
        emission: u32,
        /// The block's number within its emission.
        block: u32,
        /// Where the block would be.
        path: PathBuf,
    },
    /// A block asked for by its place (`GET /v1/blocks/…`) whose emission
    /// the store does not have; says nothing of where the store is.
    #[error("this store has no emission {emission} of {game}; ask for the block a unit ID names (its emission and block)")]
    EmissionNotInStore {
        /// The game's slug.
        game: &'static str,
        /// The emission's number within its game.
        emission: u32,
    },
    /// A block asked for by its place whose emission the store has, but
    /// not the block.
    #[error("emission {emission} of {game} has no block {block} in this store; ask for the block a unit ID names")]
    BlockNotInStore {
        /// The game's slug.
        game: &'static str,
        /// The emission's number within its game.
        emission: u32,
        /// The block's number within its emission.
        block: u32,
    },
    /// A block that fails its checks, so nothing in it is trusted.
    #[error("{}: block refused: {reason}", path.display())]
    BlockRejected {
        /// The block file.
        path: PathBuf,
        /// The first failed check.
        reason: String,
    },
    /// A unit already redeemed.
    #[error("unit {id} was already redeemed at {at} (paid {prize} €); refusing to pay it twice")]
    AlreadyRedeemed {
        /// The ID.
        id: String,
        /// When it was redeemed.
        at: String,
        /// What it paid.
        prize: Cents,
    },
    /// Redemption or play of a unit the ledger has no sale of.
    #[error("unit {id} was never sold (no sale in the ledger); a unit is paid or played only after `issuer sell` handed it out or `issuer mark-sold` recorded it")]
    NotSold {
        /// The ID.
        id: String,
    },
    /// A unit asked by a platform that did not sell it: answered exactly
    /// as an ID that names no unit (docs/SECURITY.md §What each role may
    /// learn), whatever the unit is.
    #[error("no unit {id} was sold through this platform: check the ID as printed on the ticket (a unit is checked, played and paid only by the platform that sold it)")]
    UnknownUnit {
        /// The ID, as normalised.
        id: String,
    },
    /// `mark-sold` of a unit sold already.
    #[error("unit {id} was already sold at {at}")]
    AlreadySold {
        /// The ID.
        id: String,
        /// When it was sold.
        at: String,
    },
    /// No unsold unit is left on sale.
    #[error("no {game} unit at {price} € is left to sell: {}{}every block of the game's closed emissions whose claims are open is sold out (close a new emission to sell more)", claims_ended_clause(ended), withdrawn_clause(withdrawn))]
    SoldOut {
        /// Game slug.
        game: &'static str,
        /// The price asked.
        price: Cents,
        /// Emissions on sale at that price whose claims have ended: their
        /// units, sold or not, are sold no more.
        ended: Vec<u32>,
        /// Emissions and blocks withdrawn ("emission 2 block 1"): their
        /// unsold units are never sold.
        withdrawn: Vec<String>,
    },
    /// A unit played step by step redeemed before its play is over.
    #[error("unit {id}: its play is not over ({steps} steps revealed); play to the end or stop (where allowed) through the play API first: the unit is paid as played")]
    PlayUnfinished {
        /// The ID.
        id: String,
        /// Steps revealed so far.
        steps: u32,
    },
    /// A play step after the play ended.
    #[error("unit {id}: the play is over ({} after {steps} steps); nothing more can be played", if *stopped { "stopped" } else { "ended" })]
    PlayOver {
        /// The ID.
        id: String,
        /// Steps revealed.
        steps: u32,
        /// It ended by a stop.
        stopped: bool,
    },
    /// A step asked out of order (`roll_out_of_order`, today's code).
    #[error("unit {id}: step {asked} asked, but the next step is {next}; ask for step {next} (a step already revealed is answered again)")]
    StepOutOfOrder {
        /// The ID.
        id: String,
        /// The step asked.
        asked: u32,
        /// The next step.
        next: u32,
    },
    /// A play step on a game without one.
    #[error("unit {id}: {game} units are revealed whole, not played step by step")]
    NotPlayable {
        /// The ID.
        id: String,
        /// Game slug.
        game: &'static str,
    },
    /// The ledger database failed.
    #[error("ledger {}: {source}", path.display())]
    Ledger {
        /// The ledger file.
        path: PathBuf,
        /// The database's error (SQLite's, in the ledger crate).
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The ledger did not answer in time or its writer stopped; nothing
    /// was recorded by this request.
    #[error("ledger {}: {reason}; nothing was recorded, retry", path.display())]
    LedgerUnavailable {
        /// The ledger file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The connection to a PostgreSQL ledger was lost while committing and
    /// the outcome could not be looked up yet.
    #[error("ledger {}: the connection was lost during the commit and its outcome could not be looked up ({reason}); the operation may or may not be recorded: retry it with the same idempotency key once the database answers (it is then answered as first recorded, or done now), or look it up (docs/API.md §Retries)", path.display())]
    LedgerOutcomeUnknown {
        /// The ledger (its URL without password).
        path: PathBuf,
        /// Why the lookup failed.
        reason: String,
    },
    /// An idempotency key already used for another request.
    #[error("idempotency key {key:?} was used for another request (a {first}); nothing was done; use a new key for a new request, the same key only to retry the same request")]
    IdempotencyKeyReused {
        /// The key.
        key: String,
        /// The kind of request the key was first used for (`sale`,
        /// `roll`, …); never its unit or roll, which another client may
        /// not know.
        first: String,
    },
    /// An idempotency key that is empty, too long or has other characters.
    #[error("idempotency key {key:?}: {reason}; use 1 to 128 characters of A-Z a-z 0-9 - _ . : (a UUID is fine)")]
    BadIdempotencyKey {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No sale was recorded under an idempotency key.
    #[error("no sale was recorded under idempotency key {key:?}: the sale was refused or never reached the ledger; selling again with the same key is safe")]
    NoSaleUnderKey {
        /// The key.
        key: String,
    },
    /// A `--ledger` value that is not a PostgreSQL URL.
    #[error("--ledger {url}: {reason}; expected postgres://USER@HOST[:PORT]/DATABASE")]
    BadLedgerUrl {
        /// The value given (its password hidden).
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The PostgreSQL server refused the ledger's login or configuration
    /// (a wrong or missing password, an unknown user or database, no
    /// `pg_hba.conf` entry): not retried, the operator must fix it.
    #[error("ledger {ledger}: the database refused this login: {reason}; check the user, the password (in the URL, PGPASSWORD or ~/.pgpass), the database name and pg_hba.conf (docs/DEPLOY.md §The database)")]
    LedgerLoginRefused {
        /// The ledger (its URL, password hidden).
        ledger: String,
        /// The server's message.
        reason: String,
    },
    /// An emission is sold through another ledger than the one this
    /// command uses (docs/REDEMPTION.md §One ledger per emission).
    #[error("{game} emission {emission} is sold through the ledger {bound} ({file}); this command uses {this}: give it that ledger (--ledger or ISSUER_LEDGER); nothing was recorded")]
    EmissionOfAnotherLedger {
        /// Game slug.
        game: String,
        /// The emission.
        emission: u32,
        /// The ledger it is bound to (name, identity).
        bound: String,
        /// The binding file.
        file: PathBuf,
        /// The ledger this command uses (name, identity).
        this: String,
    },
    /// A node given several ledgers has none for an emission: its routing
    /// table names no ledger for it (docs/REDEMPTION.md §Several ledgers).
    #[error("{game} emission {emission} has no ledger on this node: {} routes it to {routed}; the operator adds it to the routing table (or sells it through a node that has its ledger); nothing was recorded", routes.display())]
    EmissionNotRouted {
        /// Game slug.
        game: String,
        /// The emission.
        emission: u32,
        /// The routing table.
        routes: PathBuf,
        /// Where the table routes it ("no ledger", or another ledger's name).
        routed: String,
    },
    /// The ledger's log does not extend the head this node signed or saw
    /// (docs/REDEMPTION.md §The log never goes backwards): it was restored
    /// from an older copy, or a standby lost transactions. Nothing is sold,
    /// played or paid until `issuer ledger recover`.
    #[error("ledger {}: rolled back: {reason}", path.display())]
    LedgerRolledBack {
        /// The ledger.
        path: PathBuf,
        /// Sizes, roots, which entries, what to do.
        reason: String,
    },
    /// The ledger's log is not what its writer left: an entry is missing,
    /// or has no leaf hash.
    #[error("ledger {}: {reason}", path.display())]
    LedgerDamaged {
        /// The ledger file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A service setting that can't work (an address, a missing file).
    #[error("serve: {reason}")]
    ServiceConfig {
        /// What is wrong and what to do.
        reason: String,
    },
    /// A unit (or log size) the ledger does not hold.
    #[error("ledger: {what}")]
    NotInLedger {
        /// What was asked for and is not there.
        what: String,
    },
    /// An emission number the store has no folder for.
    #[error("emission {emission}: no such emission in store {}", store.display())]
    NoSuchEmission {
        /// The emission.
        emission: u32,
        /// The store folder.
        store: PathBuf,
    },
    /// An emission number several games have, given without a game.
    #[error(
        "emission {emission}: several games have an emission {emission} ({games}); pass --game"
    )]
    AmbiguousEmission {
        /// The emission.
        emission: u32,
        /// The games that have it.
        games: String,
    },
    /// An emission whose manifest names another game than its folder.
    #[error("emission {emission}: it is an emission of {found}, not {asked}")]
    EmissionOfAnotherGame {
        /// The emission.
        emission: u32,
        /// The game its manifest names.
        found: String,
        /// The game asked for.
        asked: &'static str,
    },
    /// Secrets asked for with no output named, onto a terminal.
    #[error("{what} are secret until published and standard output is a terminal: {remedy}")]
    SecretToTerminal {
        /// What would have been printed.
        what: &'static str,
        /// What to do instead.
        remedy: &'static str,
    },
    /// A new emission whose number another game's emission has.
    #[error("emission {emission} is {taken_by}'s already: an emission number names one emission in a store; use --emission {next} (the next free number)")]
    EmissionNumberTaken {
        /// The number asked for.
        emission: u32,
        /// The game whose emission has it.
        taken_by: &'static str,
        /// The next number no game's emission has.
        next: u32,
    },
    /// A block asked for past the emission's next one.
    #[error("emission {emission}: block {block} would leave a gap (the next block is {next}); generate --block {next}, or --blocks N / --until-block {block} to fill it, or add --allow-gap to leave it")]
    BlockGap {
        /// The emission.
        emission: u32,
        /// The block asked for.
        block: u32,
        /// The emission's next block.
        next: u32,
    },
    /// A closed emission, asked for more blocks.
    #[error("emission {emission}: it is closed: no more blocks may be added")]
    EmissionClosed {
        /// The emission.
        emission: u32,
    },
    /// The issuer published the end of the emission's claim period in the
    /// ledger: none of its units is paid any more.
    #[error("{game} emission {emission}: the issuer ended its claim period at {at} (signed statement in the ledger); no unit of it is paid any more, whatever this node's files say")]
    ClaimsEnded {
        /// Game slug.
        game: &'static str,
        /// The emission.
        emission: u32,
        /// When the claim period ended.
        at: String,
    },
    /// A sale, play step or redemption of a suspended emission or block.
    #[error("{game} emission {emission}{}: suspended by the operator at {at}; no sale, play step or redemption until it is resumed (`issuer resume`); nothing was recorded", block_clause(*block))]
    Suspended {
        /// Game slug.
        game: &'static str,
        /// The emission.
        emission: u32,
        /// The block suspended; `None`: the whole emission.
        block: Option<u32>,
        /// When it was suspended (the reason is the operator's: not
        /// told to a platform).
        at: String,
    },
    /// A sale or `mark-sold` of a withdrawn emission or block.
    #[error("{game} emission {emission}{}: withdrawn by the operator at {at}; its unsold units are never sold (its sold units still play and redeem)", block_clause(*block))]
    Withdrawn {
        /// Game slug.
        game: &'static str,
        /// The emission.
        emission: u32,
        /// The block withdrawn; `None`: the whole emission.
        block: Option<u32>,
        /// When it was withdrawn.
        at: String,
    },
    /// A play step or a redemption of a unit whose sale was voided.
    #[error("unit {id}: its sale was voided at {at} (refunded to the platform): it is never played or paid")]
    Voided {
        /// The ID.
        id: String,
        /// When it was voided.
        at: String,
    },
    /// A void once the play began.
    #[error("unit {id}: its play has begun ({steps} steps revealed); a sale is voided only before its first step")]
    PlayStarted {
        /// The ID.
        id: String,
        /// Steps revealed.
        steps: u32,
    },
    /// A resumption of what is not suspended (at that level).
    #[error("{game} emission {emission}{}: not suspended at this level, nothing to resume{}", block_clause(*block), held_clause(held))]
    NotSuspended {
        /// Game slug.
        game: &'static str,
        /// The emission.
        emission: u32,
        /// The block; `None`: the emission.
        block: Option<u32>,
        /// The level's withdrawal or the other level's suspension, in words.
        held: Option<String>,
    },
    /// An operator action asked of a withdrawn level that cannot undo it.
    #[error("{game} emission {emission}{}: withdrawn at {at}; a withdrawal is permanent and cannot be resumed", block_clause(*block))]
    WithdrawalIsPermanent {
        /// Game slug.
        game: &'static str,
        /// The emission.
        emission: u32,
        /// The block; `None`: the emission.
        block: Option<u32>,
        /// When it was withdrawn.
        at: String,
    },
    /// A bad operator request (a reason, a level).
    #[error("{what}")]
    BadOperatorRequest {
        /// What is wrong, in words.
        what: String,
    },
    /// `end-claims` before the deadline set at close, not forced.
    #[error("emission {emission}: its claims are open until {until} (set at close); ending them now would refuse players who may still claim. Wait, or run `issuer end-claims --force --reason TEXT` (the reason is published in the ledger's log)")]
    ClaimsStillOpen {
        /// The emission.
        emission: u32,
        /// The deadline.
        until: String,
    },
    /// `end-claims` of an emission closed without a deadline, without a
    /// reason: with no deadline every end is an early end.
    #[error("emission {emission}: it was closed without a claim deadline (`close --claims-until`), so ending its claims is an early end, which needs a reason (published in the ledger's log) and the approvals the store's dual control asks for: run `issuer end-claims --force --reason TEXT`, or give \"reason\" in the body of POST /v1/operator/end-claims")]
    ClaimsWithoutDeadline {
        /// The emission.
        emission: u32,
    },
    /// An action the store's dual control covers, without two valid
    /// approvals by distinct approvers.
    #[error("{action} needs the approvals of two distinct approvers of the store's dual control ({approvers}); {have} valid approval(s) given. Each approver signs one with `issuer approve --key THEIR_KEY {action} …` (the same emission, block and reason), then pass both with --approval FILE (or \"approvals\" over HTTP)")]
    ApprovalsNeeded {
        /// The action (`withdraw`, `end-claims-force`, `reveal`).
        action: String,
        /// Valid approvals given.
        have: usize,
        /// The configured approvers' names.
        approvers: String,
    },
    /// An approval that does not verify, names another action, or is
    /// stale.
    #[error("approval {which}: {reason}")]
    BadApproval {
        /// Which one (its file, or its place in the request).
        which: String,
        /// What is wrong.
        reason: String,
    },
    /// `reveal` before the end of claims was published in the ledger.
    #[error("{game} emission {emission}: the end of its claim period is not published in the ledger {ledger}; run `issuer end-claims --emission {emission}` with the same ledger first (seeds are revealed only once no node can pay)")]
    ClaimsNotEnded {
        /// Game slug.
        game: &'static str,
        /// The emission.
        emission: u32,
        /// The ledger looked at.
        ledger: String,
    },
    /// An emission not closed yet, asked to sell, end claims or reveal.
    #[error("emission {emission}: it is not closed; run `issuer close --emission {emission}` first (units are sold, claims ended and seeds revealed only once its blocks are final)")]
    EmissionNotClosed {
        /// The emission.
        emission: u32,
    },
    /// A revealed emission: its IDs are computable by anyone.
    #[error("emission {emission}: its seeds were revealed, so its unit IDs are public: redemption is closed")]
    EmissionRevealed {
        /// The emission.
        emission: u32,
    },
    /// A command that plays in the terminal, run without one.
    #[error("{what} needs a terminal on standard input and output (it reads one key at a time); in a script use {instead}")]
    NotATerminal {
        /// The command.
        what: &'static str,
        /// What a script uses instead.
        instead: &'static str,
    },
    /// An emission whose seeds this store cannot give: not revealed yet, or
    /// revealed in a store without the master secret (or the kept shares)
    /// to make them again.
    #[error("{}", not_revealed_message(game, *emission, *revealed, store))]
    NotRevealed {
        /// Game slug.
        game: &'static str,
        /// The emission.
        emission: u32,
        /// `reveal` was run in this store (which then lacks the master secret).
        revealed: bool,
        /// The store folder.
        store: PathBuf,
    },
    /// A block number that an emission's manifest or reveal does not list.
    #[error(
        "{} emission {emission} has no block {block}; {}",
        echo(game),
        block_list(blocks)
    )]
    NoSuchBlock {
        /// Game slug.
        game: String,
        /// The emission.
        emission: u32,
        /// The block asked for.
        block: u32,
        /// The blocks listed.
        blocks: Vec<u32>,
    },
    /// An interrupted generation of other blocks is waiting to be finished.
    #[error("emission {emission}: an earlier generation was interrupted: blocks {first} to {last} at {price} €; run that command again to finish it first")]
    GenerationUnfinished {
        /// The emission.
        emission: u32,
        /// Its first block.
        first: u32,
        /// Its last block.
        last: u32,
        /// Its price.
        price: Cents,
    },
    /// A block choice that names no block (block 0, zero blocks).
    #[error("emission {emission}: {reason}")]
    InvalidBlockChoice {
        /// The emission.
        emission: u32,
        /// What is wrong with the choice.
        reason: &'static str,
    },
    /// A sealed block whose file is not the one the manifest lists.
    #[error("emission {emission}: {} differs from the manifest's block {block}; run `issuer verify --emission {emission}`", path.display())]
    BlockDiffersFromManifest {
        /// The emission.
        emission: u32,
        /// The block.
        block: u32,
        /// The file.
        path: PathBuf,
    },
    /// A file where a block is to be written that is not that block.
    #[error("emission {emission}: {} is in the way and is not the sealed block {block} at {price} €; move it aside and run again", path.display())]
    BlockInTheWay {
        /// The emission.
        emission: u32,
        /// The block.
        block: u32,
        /// The block's price.
        price: Cents,
        /// The file in the way.
        path: PathBuf,
    },
    /// A file of the tool's own (manifest, seeds, key file) that is malformed.
    #[error("{}: {reason}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A fault of the tool or its platform (a thread pool, the OS's random
    /// source) that no input explains.
    #[error("internal error: {what}; please report it")]
    Internal {
        /// What failed.
        what: String,
    },
    /// An input that is not a regular file (FIFO, directory, device):
    /// reading it could block forever or never end.
    #[error("{} is {what}, not a regular file; give the path of a file", path.display())]
    NotRegularFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// A small input (key, manifest, reveal, record) larger than its cap.
    #[error("{} is larger than {limit} bytes, the most such a file holds (docs/SECURITY.md §Hostile files); is it the right file?", path.display())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, bytes.
        limit: u64,
    },
    /// An output file that exists, written without `--force`.
    #[error("{} already exists; refusing to overwrite it (pass --force to replace it, or choose another path)", path.display())]
    OutputExists {
        /// The existing file.
        path: PathBuf,
    },
    /// An output path inside the store's `keys/` folder, which only
    /// `keygen` writes.
    #[error("refusing to write {}: it is inside the store's keys folder {}, which only `issuer keygen` writes (even with --force); choose another path", path.display(), keys.display())]
    InsideKeys {
        /// The output path.
        path: PathBuf,
        /// The keys folder.
        keys: PathBuf,
    },
    /// The store's signing key does not match its public key.
    #[error("signing key {} does not match the store's public key {}: one of them was replaced; restore the store's own key pair", private.display(), public.display())]
    SigningKeyMismatch {
        /// The private key file.
        private: PathBuf,
        /// The public key file.
        public: PathBuf,
    },
    /// An emission begun with another master secret than the store's.
    #[error("emission {emission}: its manifest {} was made with another master secret than {}; restore the master secret it was generated with (nothing was written)", manifest.display(), master.display())]
    MasterSecretMismatch {
        /// The emission.
        emission: u32,
        /// Its manifest.
        manifest: PathBuf,
        /// The store's master secret file.
        master: PathBuf,
    },
    /// Shares were given for an emission whose manifest commits to none.
    #[error("emission {emission} records no share commitments, so its seeds come from the master secret: an emission made from shares begins with `issuer emission commit --emission {emission} --share-commitments FILE`, before its first block; nothing was written")]
    NoShareCommitments {
        /// The emission.
        emission: u32,
    },
    /// An emission made from shares needs every party's share (and the
    /// value of the beacon round its manifest names).
    #[error("emission {emission} is made from shares: give {what}; nothing was written")]
    SharesNeeded {
        /// The emission.
        emission: u32,
        /// What is missing, and the option that gives it.
        what: String,
    },
    /// A share that is not the one its party committed to (or made for
    /// another emission, given twice, or of a party not committed).
    #[error("emission {emission}: the share of party {party} {reason}; nothing was written")]
    ShareMismatch {
        /// The emission.
        emission: u32,
        /// The party.
        party: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A beacon value the manifest does not provide for: no beacon named,
    /// or another value than the one recorded.
    #[error("emission {emission}: {reason}; nothing was written")]
    BeaconMismatch {
        /// The emission.
        emission: u32,
        /// What differs.
        reason: String,
    },
    /// A `keys/` folder others may write: they could swap the keys.
    #[error("keys folder {} has permissions {mode:o}: others can replace the keys in it; run `chmod 700 {}`", path.display(), path.display())]
    LooseKeysFolder {
        /// The folder.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// Another `generate`, `close` or `reveal` is working on this emission.
    #[error("emission {emission} is busy: another generate, close or reveal holds {}; wait for it to finish and run again", lock.display())]
    EmissionBusy {
        /// The emission.
        emission: u32,
        /// The lock file.
        lock: PathBuf,
    },
    /// A read-only command pointed at a store folder that does not exist.
    #[error("no store at {}: check --store (or $ISSUER_STORE); nothing was created", store.display())]
    NoStore {
        /// The store folder.
        store: PathBuf,
    },
    /// A player's stop the rules don't allow (before the first chest,
    /// after a death, at or after the end), or a stop for a game without one.
    #[error("unit {id}: {reason}; nothing was recorded")]
    BadStop {
        /// The ID.
        id: String,
        /// Why the stop is refused.
        reason: String,
    },
    /// A unit count for a game whose blocks hold exactly its lot table.
    #[error("{game}: its blocks hold exactly {required} units (the regulation's lot table); --units {units} is for games drawn from probabilities")]
    FixedBlockSize {
        /// The game's slug.
        game: &'static str,
        /// The units asked for.
        units: u32,
        /// The units its blocks hold.
        required: u32,
    },
    /// A game sold at several prices, asked for a block without one.
    #[error("{game} is sold at several prices: give the price (--price on the command line, \"price\" in a sale request)")]
    PriceNeeded {
        /// The game's slug.
        game: &'static str,
    },
    /// A block given to `par` that is not of the game or price asked for.
    #[error("{path}: {reason}; give the sheet's game and price, or leave --price out to take the block's")]
    ParBlockMismatch {
        /// The block file.
        path: PathBuf,
        /// How it differs.
        reason: String,
    },
    /// A PAR option the game does not take, or a value out of its range.
    #[error("issuer par --game {game}: {reason}")]
    ParOption {
        /// The game's slug.
        game: &'static str,
        /// What is wrong, naming the game's options.
        reason: String,
    },
    /// A block size outside the game's bounds.
    #[error("{game}: a block of {units} units is out of bounds; a block holds 1 to {max} units")]
    BlockUnits {
        /// The game's slug.
        game: &'static str,
        /// The units asked for.
        units: u32,
        /// The most a block of the game holds.
        max: u32,
    },
}

/// Why a sale found nothing, where claims ended: "the claims of emission
/// 1 have ended (…); ".
fn block_clause(block: Option<u32>) -> String {
    block.map(|b| format!(" block {b}")).unwrap_or_default()
}

fn held_clause(held: &Option<String>) -> String {
    held.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
}

fn withdrawn_clause(withdrawn: &[String]) -> String {
    match withdrawn {
        [] => String::new(),
        some => format!(
            "{} withdrawn by the operator, so never sold; ",
            some.join(", ")
        ),
    }
}

fn claims_ended_clause(ended: &[u32]) -> String {
    match ended {
        [] => String::new(),
        [one] => format!(
            "the claims of emission {one} have ended (end-claims), so its units are sold no more; "
        ),
        many => {
            format!(
            "the claims of emissions {} have ended (end-claims), so their units are sold no more; ",
            many.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )
        }
    }
}

/// Why a store cannot give an emission's seeds, and what to do.
fn not_revealed_message(game: &str, emission: u32, revealed: bool, store: &Path) -> String {
    if revealed {
        return format!(
            "{game} emission {emission} was revealed, but store {} has no master secret (keys/master.key), or for an emission made from shares none of its shares (keys/shares/), to give its seeds again; pass its reveal file with --reveal FILE",
            store.display()
        );
    }
    format!(
        "{game} emission {emission}: its block seeds are not revealed; they are revealed only after the end of its claims (`issuer end-claims --emission {emission}`, then `issuer reveal --emission {emission}`, in the issuer's store); an auditor given its reveal file passes it with --reveal FILE"
    )
}

/// The blocks listed, as runs: "its blocks are 1 to 40, 42" (the first 8 runs).
fn block_list(blocks: &[u32]) -> String {
    let mut sorted = blocks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<String> = Vec::new();
    let mut rest = sorted.as_slice();
    while let Some(&first) = rest.first() {
        let len = rest
            .iter()
            .zip(u64::from(first)..)
            .take_while(|(b, n)| u64::from(**b) == *n)
            .count();
        let last = rest[len - 1];
        runs.push(match len {
            1 => first.to_string(),
            _ => format!("{first} to {last}"),
        });
        rest = &rest[len..];
    }
    match runs.len() {
        0 => "it lists no block".into(),
        n if n > 8 => format!("its blocks are {}, …", runs[..8].join(", ")),
        _ => format!("its blocks are {}", runs.join(", ")),
    }
}
