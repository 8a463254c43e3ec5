//! libpq's environment for a PostgreSQL ledger URL (docs/DEPLOY.md §The
//! database): what the URL leaves out is taken, as `psql` takes it, from
//! `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGAPPNAME`, then the
//! password from `PGPASSWORD` or the password file (`PGPASSFILE`, else
//! `~/.pgpass`; ignored, as libpq does, unless only its owner may read it).
//! What the URL says always wins.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use postgres::config::Host;

/// PostgreSQL's default port.
const DEFAULT_PORT: u16 = 5432;

/// Fills what `config` lacks from the process's environment.
pub(super) fn apply(config: &mut postgres::Config) {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    apply_from(config, &|name| std::env::var(name).ok(), home.as_deref());
}

/// [`apply`] with the environment `env` and home folder `home`.
pub(super) fn apply_from(
    config: &mut postgres::Config,
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    if config.get_hosts().is_empty() {
        if let Some(hosts) = set("PGHOST") {
            for host in hosts.split(',') {
                config.host(host);
            }
        }
    }
    if config.get_ports().is_empty() {
        if let Some(port) = set("PGPORT").and_then(|p| p.parse().ok()) {
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = set("PGUSER") {
            config.user(&user);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(db) = set("PGDATABASE") {
            config.dbname(&db);
        }
    }
    if config.get_application_name().is_none() {
        if let Some(name) = set("PGAPPNAME") {
            config.application_name(&name);
        }
    }
    if config.get_password().is_some() {
        return;
    }
    if let Some(password) = set("PGPASSWORD") {
        config.password(password);
        return;
    }
    let file = set("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".pgpass")));
    if let Some(password) = file.and_then(|f| from_password_file(config, &f)) {
        config.password(password);
    }
}

/// The password the file `path` gives `config`'s first host, port,
/// database and user: its first matching line
/// `host:port:database:user:password` (`*` matches anything; `\:` and `\\`
/// are a colon and a backslash). `None` when the file is missing, may be
/// read by others than its owner, or has no line for it.
fn from_password_file(config: &postgres::Config, path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        // A socket folder is "localhost" to the password file, as to libpq.
        Some(Host::Unix(_)) | None => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(DEFAULT_PORT)
        .to_string();
    let user = config.get_user()?;
    let db = config.get_dbname().unwrap_or(user);
    let wanted = [host.as_str(), port.as_str(), db, user];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split_fields(line);
            let [h, p, d, u, password] = <[String; 5]>::try_from(fields).ok()?;
            let matches = [h, p, d, u]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field == "*" || field == want);
            matches.then_some(password)
        })
}

/// The colon-separated fields of a password-file line, unescaped.
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(last)) = (chars.next(), fields.last_mut()) {
                    last.push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => {
                if let Some(last) = fields.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(url: &str, env: &[(&str, &str)], home: Option<&Path>) -> postgres::Config {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        let mut c: postgres::Config = url.parse().unwrap();
        apply_from(&mut c, &|k| env.get(k).cloned(), home);
        c
    }

    #[test]
    fn the_environment_fills_what_the_url_leaves_out_and_never_overrides_it() {
        let env = [
            ("PGHOST", "db.internal"),
            ("PGPORT", "6543"),
            ("PGUSER", "redeem"),
            ("PGDATABASE", "ledger"),
            ("PGPASSWORD", "from-env"),
        ];
        let c = config("postgres://", &env, None);
        assert_eq!(c.get_hosts(), &[Host::Tcp("db.internal".into())]);
        assert_eq!(c.get_ports(), &[6543]);
        assert_eq!(c.get_user(), Some("redeem"));
        assert_eq!(c.get_dbname(), Some("ledger"));
        assert_eq!(c.get_password(), Some(&b"from-env"[..]));
        let c = config("postgres://owner:given@db:5000/other", &env, None);
        assert_eq!(c.get_hosts(), &[Host::Tcp("db".into())]);
        assert_eq!(c.get_ports(), &[5000]);
        assert_eq!(c.get_user(), Some("owner"));
        assert_eq!(c.get_dbname(), Some("other"));
        assert_eq!(c.get_password(), Some(&b"given"[..]));
    }

    #[test]
    fn the_password_file_gives_the_first_matching_line_if_only_its_owner_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".pgpass");
        std::fs::write(
            &file,
            "# comment\nother:*:*:*:no\ndb:5432:ledger:redeem:p\\:ss\\\\1\n*:*:*:redeem:fallback\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let c = config("postgres://redeem@db/ledger", &[], Some(dir.path()));
        assert_eq!(c.get_password(), Some(&b"p:ss\\1"[..]));
        let c = config("postgres://redeem@elsewhere:7/x", &[], Some(dir.path()));
        assert_eq!(c.get_password(), Some(&b"fallback"[..]));
        // PGPASSWORD comes first; a file others may read is ignored.
        let c = config(
            "postgres://redeem@db/ledger",
            &[("PGPASSWORD", "env")],
            Some(dir.path()),
        );
        assert_eq!(c.get_password(), Some(&b"env"[..]));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = config("postgres://redeem@db/ledger", &[], Some(dir.path()));
        assert_eq!(c.get_password(), None);
        // PGPASSFILE names another file.
        let other = dir.path().join("pass");
        std::fs::write(&other, "*:*:*:*:named\n").unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o600)).unwrap();
        let named = other.display().to_string();
        let c = config(
            "postgres://redeem@db/ledger",
            &[("PGPASSFILE", &named)],
            None,
        );
        assert_eq!(c.get_password(), Some(&b"named"[..]));
    }
}
