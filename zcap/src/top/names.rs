//! Names the traffic itself gives, for the view: addresses mapped to the names asked for in
//! the DNS answers zcap sees (passive: zcap sends no query), and each flow's server name.
//!
//! Both maps are bounded ([`MAX_HOSTS`], [`MAX_SERVERS`]: the oldest entry goes first) and
//! written only by the packets that carry a name (DNS responses, TLS ClientHellos), so the
//! lock is taken on those alone, never on the path of every packet.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;

use zcrx_flowcache::FlowKey;

/// Addresses remembered with a name.
pub(crate) const MAX_HOSTS: usize = 16_384;
/// Flows remembered with a server name.
pub(crate) const MAX_SERVERS: usize = 16_384;
/// Address records read from one DNS response.
pub(crate) const MAX_ANSWERS: usize = 16;

/// Where a flow's server name comes from: this module's own reading of the first TLS
/// ClientHello segment, or any other reader (the consumer-side `--names`) that implements it.
pub(crate) trait ServerNames {
    /// The server name of the flow with canonical key `key`, if the traffic gave one.
    fn server_name(&self, key: &FlowKey) -> Option<String>;
}

/// A map that keeps its newest `cap` entries.
struct Bounded<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
    cap: usize,
}

impl<K: Hash + Eq + Clone, V> Bounded<K, V> {
    fn new(cap: usize) -> Self {
        Bounded {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap,
        }
    }

    fn insert(&mut self, k: K, v: V) {
        if self.map.insert(k.clone(), v).is_none() {
            self.order.push_back(k);
            while self.order.len() > self.cap {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }

    fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }
}

struct Maps {
    hosts: Bounded<IpAddr, String>,
    servers: Bounded<FlowKey, String>,
}

/// The names learnt so far, shared by the shards (writers) and the view (reader).
pub(crate) struct Passive(Mutex<Maps>);

impl Default for Passive {
    fn default() -> Self {
        Passive(Mutex::new(Maps {
            hosts: Bounded::new(MAX_HOSTS),
            servers: Bounded::new(MAX_SERVERS),
        }))
    }
}

impl Passive {
    fn lock(&self) -> std::sync::MutexGuard<'_, Maps> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A DNS response's addresses, each named by the question that was asked.
    pub(crate) fn learn_hosts(&self, name: &str, addrs: impl Iterator<Item = IpAddr>) {
        if name.is_empty() {
            return;
        }
        let mut m = self.lock();
        for a in addrs {
            m.hosts.insert(a, name.to_string());
        }
    }

    /// The server name of flow `key` (canonical).
    pub(crate) fn learn_server(&self, key: FlowKey, name: String) {
        self.lock().servers.insert(key, name);
    }

    /// Names for several addresses under one lock.
    pub(crate) fn hosts<'a>(
        &self,
        addrs: impl Iterator<Item = &'a IpAddr>,
    ) -> HashMap<IpAddr, String> {
        let m = self.lock();
        addrs
            .filter_map(|a| m.hosts.get(a).map(|n| (*a, n.clone())))
            .collect()
    }
}

impl ServerNames for Passive {
    fn server_name(&self, key: &FlowKey) -> Option<String> {
        self.lock().servers.get(key).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn the_maps_keep_their_newest_entries() {
        let mut b = Bounded::new(3);
        for i in 0..5u8 {
            b.insert(i, i);
        }
        assert_eq!(b.map.len(), 3);
        assert!(b.get(&1).is_none() && b.get(&2).is_some() && b.get(&4).is_some());
        let p = Passive::default();
        let a = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 9));
        p.learn_hosts("www.example.net", [a].into_iter());
        assert_eq!(
            p.hosts([a].iter()).get(&a).map(String::as_str),
            Some("www.example.net")
        );
    }
}
