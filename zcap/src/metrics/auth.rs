//! HTTP basic authentication against `basic_auth_users` (user: bcrypt hash), as the
//! exporter toolkit does it: a user that does not exist costs the same bcrypt as one that
//! does (its hash is a decoy of the same cost), one bcrypt runs at a time (it is made to
//! be slow: a client sending passwords keeps at most one CPU busy), and recent outcomes
//! are remembered (by a SHA-256 of user, hash and password), so a scraper that sends the
//! same credentials every time costs a bcrypt once.

use std::collections::{BTreeMap, VecDeque};
use std::str::FromStr;
use std::sync::Mutex;

use anyhow::{anyhow, bail, Result};
use base64::Engine;
use zeroize::Zeroize;

/// Outcomes remembered.
const REMEMBERED: usize = 64;

/// How the users are read from a web configuration's text.
pub(crate) type UsersOf = fn(&[u8]) -> Result<BTreeMap<String, String>>;

/// `basic_auth_users`, checked.
pub(crate) struct BasicAuth {
    /// The users and their hashes (emptied and zeroed in the worker, which asks the
    /// monitor: `crate::secrets`).
    users: Mutex<BTreeMap<String, String>>,
    /// The hash an unknown user's password is checked against.
    decoy: Mutex<String>,
    /// Where the real users are, when those above stand in for them (`--web-config`,
    /// read apart: `WebConfig::load`): the file, and how to read them from its text.
    source: Mutex<Option<(std::fs::File, UsersOf)>>,
    /// Recent outcomes, newest last: (digest of user, hash and password; admitted).
    recent: Mutex<VecDeque<([u8; 32], bool)>>,
    /// Held while bcrypt runs.
    bcrypt: Mutex<()>,
}

impl BasicAuth {
    /// The users and their bcrypt hashes (`$2a$`, `$2b$`, `$2x$`, `$2y$`, as htpasswd -B
    /// and the toolkit's documentation make them). A name holding ':' is refused: basic
    /// authentication could never carry it.
    pub(crate) fn new(users: BTreeMap<String, String>) -> Result<Self> {
        let decoy = Self::decoy_for(&users)?;
        Ok(BasicAuth {
            users: Mutex::new(users),
            decoy: Mutex::new(decoy),
            source: Mutex::new(None),
            recent: Mutex::new(VecDeque::with_capacity(REMEMBERED)),
            bcrypt: Mutex::new(()),
        })
    }

    /// These users stand in for the real ones, which are read from `file` (by `users_of`)
    /// only where they are checked: by the monitor once split ([`BasicAuth::load`]), or
    /// at the first check without the split.
    pub(crate) fn stand_in_for(self, file: std::fs::File, users_of: UsersOf) -> Self {
        *self.source.lock().unwrap_or_else(|p| p.into_inner()) = Some((file, users_of));
        self
    }

    /// The descriptor of the file the real users are in, while these stand in for them.
    pub(crate) fn source_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        let source = self.source.lock().unwrap_or_else(|p| p.into_inner());
        source.as_ref().map(|(file, _)| file.as_raw_fd())
    }

    /// The real users read from their file (if these stand in for them) and the file
    /// closed.
    pub(crate) fn load(&self) -> Result<()> {
        let Some((file, users_of)) = self.source.lock().unwrap_or_else(|p| p.into_inner()).take()
        else {
            return Ok(());
        };
        let mut text = crate::secrets::read_from_start(&file, usize::MAX)?;
        let users = users_of(&text);
        text.zeroize();
        let users = users?;
        let decoy = Self::decoy_for(&users)?;
        *self.decoy.lock().unwrap_or_else(|p| p.into_inner()) = decoy;
        let mut held = self.users.lock().unwrap_or_else(|p| p.into_inner());
        for (_, mut hash) in std::mem::replace(&mut *held, users) {
            hash.zeroize();
        }
        self.lock_recent().clear();
        Ok(())
    }

    /// The decoy for `users`, checking their names and hashes.
    fn decoy_for(users: &BTreeMap<String, String>) -> Result<String> {
        // The highest cost of the users' hashes: a name that does not exist must cost what
        // the dearest one does, or its answer's time tells it apart from that user.
        let mut cost = 0;
        for (user, hash) in users {
            if user.contains(':') {
                bail!("basic_auth_users: {user:?}: a user name cannot hold ':' (basic authentication splits user and password there)");
            }
            let parts = bcrypt::HashParts::from_str(hash).map_err(|e| {
                anyhow!("basic_auth_users.{user}: not a bcrypt hash ({e}); make one with `htpasswd -nBC 10 {user}`")
            })?;
            cost = cost.max(parts.get_cost());
        }
        if users.is_empty() {
            cost = bcrypt::DEFAULT_COST;
        }
        // Made at start-up (it needs randomness for its salt).
        bcrypt::hash("zcap decoy", cost).map_err(|e| anyhow!("bcrypt: {e}"))
    }

    /// Whether the value of a request's `Authorization` header (`None`: no such header)
    /// names a user and that user's password.
    pub(crate) fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some((user, mut password)) = authorization.and_then(credentials) else {
            return false;
        };
        let ok = match crate::secrets::remote() {
            Some(ask) => {
                let mut payload = crate::secrets::encode_credentials(&user, &password);
                let answer = ask(crate::secrets::CHECK_PASSWORD, 0, &payload);
                payload.zeroize();
                answer.is_ok_and(|a| a == [1])
            }
            None => self.check(&user, &password),
        };
        password.zeroize();
        ok
    }

    /// The worker's start: the hashes emptied and zeroed, their file closed (the monitor
    /// checks from now on).
    pub(crate) fn forget(&self) {
        self.source.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        for (_, mut hash) in std::mem::take(&mut *users) {
            hash.zeroize();
        }
    }

    /// Whether `password` is `user`'s: what the monitor (or a process without the split)
    /// answers.
    pub(crate) fn check(&self, user: &[u8], password: &[u8]) -> bool {
        if self.load().is_err() {
            return false;
        }
        let users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        let decoy = self.decoy.lock().unwrap_or_else(|p| p.into_inner());
        let known = std::str::from_utf8(user).ok().and_then(|u| users.get(u));
        let hash = known.unwrap_or(&decoy);
        let key = digest(user, hash, password);
        let remembered = self
            .lock_recent()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, ok)| *ok);
        let ok = match remembered {
            Some(ok) => ok,
            None => {
                let matches = {
                    let _one_at_a_time = self.bcrypt.lock().unwrap_or_else(|p| p.into_inner());
                    bcrypt::verify(password, hash).unwrap_or(false)
                };
                let ok = known.is_some() && matches;
                let mut recent = self.lock_recent();
                if recent.len() == REMEMBERED {
                    recent.pop_front();
                }
                recent.push_back((key, ok));
                ok
            }
        };
        known.is_some() && ok
    }

    fn lock_recent(&self) -> std::sync::MutexGuard<'_, VecDeque<([u8; 32], bool)>> {
        self.recent.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// User and password of a `Basic` credential (RFC 7617: base64 of `user:password`).
fn credentials(value: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let value = std::str::from_utf8(value).ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(token.trim())
        .ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some((decoded[..colon].to_vec(), decoded[colon + 1..].to_vec()))
}

/// SHA-256 of user, hash and password, each preceded by its length (no two triples share
/// an encoding).
fn digest(user: &[u8], hash: &str, password: &[u8]) -> [u8; 32] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for part in [user, hash.as_bytes(), password] {
        ctx.update(&(part.len() as u64).to_le_bytes());
        ctx.update(part);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(user: &str, password: &str) -> Vec<u8> {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        format!("Basic {token}").into_bytes()
    }

    #[test]
    fn only_a_user_with_its_password_is_admitted() {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let auth = BasicAuth::new(BTreeMap::from([("alice".to_string(), hash)])).unwrap();
        assert!(auth.admits(Some(&header("alice", "s3cret"))));
        // Again, from what it remembers.
        assert!(auth.admits(Some(&header("alice", "s3cret"))));
        assert!(!auth.admits(Some(&header("alice", "wrong"))));
        assert!(!auth.admits(Some(&header("alice", "wrong"))));
        assert!(!auth.admits(Some(&header("bob", "s3cret"))));
        assert!(!auth.admits(None));
        assert!(!auth.admits(Some(b"Bearer abc")));
        assert!(!auth.admits(Some(b"Basic !!!notbase64")));
        assert!(auth.admits(Some(b"basic YWxpY2U6czNjcmV0")));
    }

    #[test]
    fn an_unknown_name_costs_the_dearest_users_bcrypt() {
        // Sorted by name, the cheaper hash last: the decoy must not take its cost.
        let users = BTreeMap::from([
            ("a".to_string(), bcrypt::hash("pw", 6).unwrap()),
            ("b".to_string(), bcrypt::hash("pw", 4).unwrap()),
        ]);
        let auth = BasicAuth::new(users).unwrap();
        let cost = bcrypt::HashParts::from_str(&auth.decoy.lock().unwrap())
            .unwrap()
            .get_cost();
        assert_eq!(cost, 6);
    }

    #[test]
    fn what_it_remembers_stays_bounded() {
        let hash = bcrypt::hash("pw", 4).unwrap();
        let auth = BasicAuth::new(BTreeMap::from([("u".to_string(), hash)])).unwrap();
        for i in 0..(REMEMBERED + 10) {
            assert!(!auth.admits(Some(&header("u", &i.to_string()))));
        }
        assert_eq!(auth.lock_recent().len(), REMEMBERED);
        assert!(auth.admits(Some(&header("u", "pw"))));
    }
}
