//! The consumer that writes a shard's packets to the sink.

use zcrx_capture::{Consumer, Delivered, StopToken};
use zcrx_flowcache::LinkType;

use super::state::{OutState, Output, Plain};
use crate::names::NamesBook;
use crate::record::{Record, ARPHRD_LOOPBACK};

/// One shard's consumer: writes each packet to the sink and stops every shard (one token)
/// when the count is reached or the sink fails. With one shard it borrows the sink for the
/// run (no lock per packet); with several, the shards share it behind the lock.
pub(crate) struct Writer<'a> {
    pub(crate) out: &'a Output,
    /// How to read the frames for text and JSON lines.
    pub(crate) link: LinkType,
    pub(crate) own: Option<&'a mut OutState>,
    pub(crate) stop: StopToken,
    /// The shard this consumer reads (for the merge of several).
    pub(crate) shard: usize,
    /// `-i any`: the ring is cooked; packets carry their link layer in the metadata.
    pub(crate) cooked: bool,
    /// `-i lo`: drop the outgoing copies (by the packet's direction).
    pub(crate) loopback: bool,
    /// `--names`: the shard's book, which reads every packet's flow names (but the
    /// loopback's outgoing copies) before the packet is written.
    pub(crate) names: Option<&'a NamesBook>,
}

impl Consumer for Writer<'_> {
    type Output = ();
    #[inline(always)]
    fn packet(&mut self, d: &Delivered<'_>) {
        if let Some(book) = self.names {
            self.read_names(book, d);
        }
        let m = d.meta();
        // One shard, no link-layer address needed: `zcap -w FILE` sends an untagged frame
        // straight to the file's buffer, `zcap --flows` only counts it.
        if let Some(st) = self
            .own
            .as_deref_mut()
            .filter(|_| !(self.cooked || self.loopback))
        {
            let go_on = match st.plain {
                Plain::Save if m.vlan_tci.is_none() => {
                    st.save_frame(self.out, m.ts_ns, m.wire_len, d.data(), None)
                }
                Plain::Count => st.count_frame(self.out, m.wire_len, d.data().len()),
                _ => return self.packet_any(d),
            };
            if !go_on {
                self.stop.stop();
            }
            return;
        }
        self.packet_any(d);
    }
    /// `zcap -w FILE` on one shard: the packets of a block (or batch) go to the file
    /// together, large frames straight from the ring with one `writev`.
    fn packets<'a>(&mut self, packets: impl Iterator<Item = Delivered<'a>>) {
        let plain = !(self.cooked || self.loopback);
        let names = self.names;
        match self.own.as_deref_mut() {
            Some(st) if plain && st.plain == Plain::Save => {
                // Without names the block's walk goes to the file as it is: the book's
                // check, even never taken, in the loop that `save_many` inlines the walk
                // into would cost every packet of `-w` its registers.
                let go_on = match names {
                    None => st.save_many(self.out, packets),
                    // (Plain: no loopback copy to leave out of the names.)
                    Some(book) => st.save_many(self.out, packets.inspect(|d| book.packet(d))),
                };
                if !go_on {
                    self.stop.stop();
                }
            }
            _ => {
                // Lines printed from one block go out in one write once the block is done:
                // a live capture writes as the packets come, not a write(2) a line.
                if let Some(st) = self.own.as_deref_mut() {
                    st.batch_lines(true);
                }
                packets.for_each(|d| self.packet(&d));
                if let Some(st) = self.own.as_deref_mut() {
                    st.batch_lines(false);
                }
            }
        }
    }
    /// `zcap --flows -w FILE` on one shard: whole steered blocks, so that large frames go
    /// to the file as they do without flows (one `writev` from the ring, no copy). (The
    /// flows' TCP states are the stage's, complete whenever a flow ends.) Not with
    /// `--names`: a flow that ends within a block would reach the flow-end hook before its
    /// last packets reached the names.
    fn wants_steered_blocks(&self) -> bool {
        let plain = !(self.cooked || self.loopback);
        plain
            && self.names.is_none()
            && self
                .own
                .as_deref()
                .is_some_and(|st| st.plain == Plain::Save)
    }
    fn finish(self) {}
}

impl Writer<'_> {
    /// `--names`: the packet to the book, unless it is the loopback's outgoing copy (its
    /// received copy comes too, as in [`Writer::packet_any`]).
    #[inline]
    fn read_names(&self, book: &NamesBook, d: &Delivered<'_>) {
        let copy = if self.cooked {
            d.link()
                .is_some_and(|l| l.outgoing() && l.hatype == ARPHRD_LOOPBACK)
        } else {
            self.loopback && d.direction().is_outgoing()
        };
        if !copy {
            book.packet(d);
        }
    }

    /// [`Writer::packet`] for every other case (tagged, cooked or loopback frames, several
    /// shards, lines, rotation), out of line so that the short path keeps few registers.
    #[inline(never)]
    fn packet_any(&mut self, d: &Delivered<'_>) {
        let m = d.meta();
        // What this host sends over loopback comes back as received: libpcap keeps only the
        // received copy, and so does zcap. On `-i lo` the packet's direction says which copy
        // this is (every consumer has it); on `-i any` only loopback's outgoing copies go,
        // which takes the link type from the sockaddr_ll.
        let link = if self.cooked { d.link() } else { None };
        let loopback_copy = if self.cooked {
            link.is_some_and(|l| l.outgoing() && l.hatype == ARPHRD_LOOPBACK)
        } else {
            self.loopback && d.direction().is_outgoing()
        };
        if loopback_copy {
            return;
        }
        let rec = Record {
            ts_ns: m.ts_ns,
            wire_len: m.wire_len,
            data: d.data(),
            vlan: m.vlan_tci.map(|t| (t, m.vlan_tpid)),
            ll: link.filter(|_| self.cooked),
        };
        let go_on = match self.own.as_deref_mut() {
            Some(st) => st.write(self.out, self.link, &rec),
            None => {
                self.out.count_from(self.shard);
                self.out.write_from(self.shard, self.link, &rec)
            }
        };
        if !go_on {
            self.stop.stop();
        }
    }
}
