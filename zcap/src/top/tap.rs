//! The consumer `--top` puts in front of the writer: it hands every packet on unchanged and
//! reads the DNS responses (UDP from port 53: their A and AAAA answers) into [`Passive`],
//! which names the addresses. (The flows' server names come from the names book, which
//! `--top` turns on.) Per packet it costs the header extraction again and a port test.

use zcrx_capture::{Consumer, Delivered};
use zcrx_flowcache::names::{DnsMessage, DNS_PORT};
use zcrx_flowcache::{extract, ipproto, LinkType};

use super::names::{Passive, MAX_ANSWERS};

/// A consumer that reads names on the way to `inner`.
pub(crate) struct Tap<'a, C> {
    pub(crate) inner: C,
    pub(crate) names: &'a Passive,
    pub(crate) link: LinkType,
}

impl<C: Consumer> Consumer for Tap<'_, C> {
    type Output = C::Output;
    #[inline]
    fn packet(&mut self, d: &Delivered<'_>) {
        look(self.names, self.link, d);
        self.inner.packet(d);
    }
    fn packets<'a>(&mut self, packets: impl Iterator<Item = Delivered<'a>>) {
        let (names, link) = (self.names, self.link);
        self.inner
            .packets(packets.inspect(move |d| look(names, link, d)));
    }
    fn wants_steered_blocks(&self) -> bool {
        self.inner.wants_steered_blocks()
    }
    fn finish(self) -> C::Output {
        self.inner.finish()
    }
}

/// Reads `d`'s names, if it carries any.
#[inline]
fn look(names: &Passive, link: LinkType, d: &Delivered<'_>) {
    if d.flow().id().is_none() {
        return;
    }
    let data = d.data();
    let Ok(x) = extract(link, data, d.meta().vlan_tci) else {
        return;
    };
    let Some(payload) = data.get(x.payload_offset as usize..) else {
        return;
    };
    match x.key.proto() {
        ipproto::UDP if x.key.sport() == DNS_PORT && payload.len() > 12 => {
            let Ok(m) = DnsMessage::parse(payload) else {
                return;
            };
            let Some(q) = m.question.filter(|_| m.response && m.answers > 0) else {
                return;
            };
            if let Ok(answers) = DnsMessage::answer_addresses(payload, MAX_ANSWERS) {
                names.learn_hosts(&q.name, answers.iter().map(|a| a.addr));
            }
        }
        _ => {}
    }
}
