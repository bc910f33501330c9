//! Rows from flows: one a flow, or grouped by host pair, remote host or port (rates and
//! totals summed, the oldest age kept), then filtered by the text asked for and sorted.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::input::View;
use super::model::{endpoint_text, has_ports, proto_text, By, FlowNow, Row, SortKey};

/// The rows `view` asks for.
pub(crate) fn rows(flows: &[FlowNow], view: &View) -> Vec<Row> {
    let mut groups: HashMap<(String, String, String), Row> = HashMap::new();
    let mut order: Vec<(String, String, String)> = Vec::new();
    for f in flows {
        let ports = has_ports(f.proto);
        let names = view.names;
        // The server by the name the client asked for, first; then the DNS answers' names.
        let server = f.server.as_deref();
        let (left_server, right_server) = if f.server_left {
            (server, None)
        } else {
            (None, server)
        };
        let left_name = left_server.or(f.left_name.as_deref()).filter(|_| names);
        let right_name = right_server.or(f.right_name.as_deref()).filter(|_| names);
        let service = if f.server_left {
            f.left.port
        } else {
            f.right.port
        };
        let proto = proto_text(f.proto);
        let (left, right) = match view.by {
            By::Flow => (
                endpoint_text(&f.left, left_name, ports),
                endpoint_text(&f.right, right_name, ports),
            ),
            By::Pair => (
                endpoint_text(&f.left, left_name, false),
                endpoint_text(&f.right, right_name, false),
            ),
            By::Host => ("*".into(), endpoint_text(&f.right, right_name, false)),
            By::Port if ports => ("*".into(), format!("*:{service}")),
            By::Port => ("*".into(), "*".into()),
        };
        let group_proto = match view.by {
            By::Flow | By::Port => proto.clone(),
            By::Pair | By::Host => String::new(),
        };
        let k = (group_proto, left.clone(), right.clone());
        let row = groups.entry(k.clone()).or_insert_with(|| {
            order.push(k);
            Row {
                proto: proto.clone(),
                left,
                right,
                state: f.state.unwrap_or("").to_string(),
                process: f.process.clone().unwrap_or_default(),
                ..Row::default()
            }
        });
        if row.flows > 0 {
            if row.proto != proto {
                row.proto = "*".into();
            }
            if row.process != f.process.as_deref().unwrap_or("") {
                row.process.clear();
            }
            row.state.clear();
        }
        row.flows += 1;
        for d in 0..2 {
            for w in 0..3 {
                row.rates[d][w] += f.rates[d][w];
            }
            row.bytes[d] += f.bytes[d];
            row.packets[d] += f.packets[d];
        }
        row.age_s = row.age_s.max(f.age_s);
    }
    let mut rows: Vec<Row> = order
        .into_iter()
        .filter_map(|k| groups.remove(&k))
        .filter(|r| r.matches(&view.filter))
        .collect();
    sort(&mut rows, view.sort, view.reverse);
    rows
}

/// Largest first (`Name`: alphabetical), ties by the endpoints; `reverse` flips it.
pub(crate) fn sort(rows: &mut [Row], key: SortKey, reverse: bool) {
    let by_name =
        |a: &Row, b: &Row| (&a.left, &a.right, &a.proto).cmp(&(&b.left, &b.right, &b.proto));
    rows.sort_by(|a, b| {
        let o = match key {
            SortKey::Name => by_name(a, b),
            _ => b
                .sort_value(key)
                .partial_cmp(&a.sort_value(key))
                .unwrap_or(Ordering::Equal)
                .then_with(|| by_name(a, b)),
        };
        if reverse {
            o.reverse()
        } else {
            o
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::model::Endpoint;
    use std::net::{IpAddr, Ipv4Addr};

    fn flow(remote: u8, port: u16, rate: f64) -> FlowNow {
        let ip = |x| IpAddr::V4(Ipv4Addr::new(198, 18, 0, x));
        FlowNow {
            proto: 17,
            left: Endpoint {
                addr: ip(2),
                port: 53,
            },
            right: Endpoint {
                addr: ip(remote),
                port,
            },
            rates: [[0.0; 3], [rate; 3]],
            server_left: false,
            bytes: [0, rate as u64],
            packets: [0, 1],
            age_s: 1.0,
            state: None,
            server: None,
            left_name: None,
            right_name: (remote == 9).then(|| "ns.example.net".to_string()),
            process: Some("named/7".into()),
        }
    }

    #[test]
    fn grouping_filtering_and_sorting() {
        let flows = [
            flow(1, 1000, 10.0),
            flow(1, 1001, 20.0),
            flow(9, 1000, 40.0),
        ];
        let mut v = View::new(SortKey::Both(0), By::Flow);
        let r = rows(&flows, &v);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].right, "ns.example.net:1000");
        assert_eq!(r[2].right, "198.18.0.1:1000");
        v.by = By::Host;
        let r = rows(&flows, &v);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[1].right.as_str(), r[1].rates[1][0]),
            ("198.18.0.1", 30.0)
        );
        assert_eq!(r[1].process, "named/7");
        v.by = By::Port;
        let r = rows(&flows, &v);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].right.as_str(), r[0].flows), ("*:1000", 2));
        v.by = By::Flow;
        v.filter = "example".into();
        assert_eq!(rows(&flows, &v).len(), 1);
        v.filter.clear();
        v.names = false;
        v.sort = SortKey::Name;
        let r = rows(&flows, &v);
        assert_eq!(r[2].right, "198.18.0.9:1000");
        v.reverse = true;
        assert_eq!(rows(&flows, &v)[0].right, "198.18.0.9:1000");
    }
}
