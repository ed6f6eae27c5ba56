//! Topologies: a graph of nodes and one-way links with static routes, and
//! builders for the papers' shapes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::link::{LinkSpec, QueueDiscipline};
use crate::units::Bandwidth;

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
}

/// Parameters of one direction of a duplex link.
#[derive(Clone, Debug, PartialEq)]
pub struct HalfLink {
    pub rate: Bandwidth,
    pub delay_ns: u64,
    pub queue: QueueDiscipline,
    pub loss_prob: f64,
}

impl Topology {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_node(&mut self, name: impl Into<String>) -> usize {
        self.nodes.push(name.into());
        self.nodes.len() - 1
    }

    pub fn node(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n == name)
    }

    /// Adds `a -> b` and `b -> a`; returns their link ids.
    pub fn add_duplex(
        &mut self,
        a: usize,
        b: usize,
        fwd: HalfLink,
        rev: HalfLink,
    ) -> (usize, usize) {
        let mk = |from: usize, to: usize, h: HalfLink, nodes: &[String]| LinkSpec {
            from,
            to,
            rate: h.rate,
            delay_ns: h.delay_ns,
            queue: h.queue,
            loss_prob: h.loss_prob,
            name: format!("{}->{}", nodes[from], nodes[to]),
        };
        let f = mk(a, b, fwd, &self.nodes);
        let r = mk(b, a, rev, &self.nodes);
        self.links.push(f);
        self.links.push(r);
        (self.links.len() - 2, self.links.len() - 1)
    }

    /// The static route from `src` to `dst`: the path of least propagation
    /// delay, ties broken by fewer hops, then by lower link ids (Dijkstra
    /// over (delay, hops, path) so the choice never depends on hash order).
    pub fn route(&self, src: usize, dst: usize) -> Option<Vec<u32>> {
        let n = self.nodes.len();
        let mut best: Vec<Option<(u64, u32)>> = vec![None; n];
        let mut via: Vec<Option<usize>> = vec![None; n];
        let mut heap = BinaryHeap::new();
        best[src] = Some((0, 0));
        heap.push(Reverse((0u64, 0u32, src)));
        while let Some(Reverse((d, h, u))) = heap.pop() {
            if best[u] != Some((d, h)) {
                continue;
            }
            if u == dst {
                break;
            }
            for (id, l) in self.links.iter().enumerate() {
                if l.from != u {
                    continue;
                }
                let cand = (d + l.delay_ns, h + 1);
                if best[l.to].is_none_or(|b| cand < b) {
                    best[l.to] = Some(cand);
                    via[l.to] = Some(id);
                    heap.push(Reverse((cand.0, cand.1, l.to)));
                }
            }
        }
        best[dst]?;
        let mut path = vec![];
        let mut at = dst;
        while at != src {
            let id = via[at]?;
            path.push(id as u32);
            at = self.links[id].from;
        }
        path.reverse();
        Some(path)
    }

    /// Sum of propagation delays along a route.
    pub fn route_delay_ns(&self, route: &[u32]) -> u64 {
        route.iter().map(|&l| self.links[l as usize].delay_ns).sum()
    }
}

/// A chain of routers `r0 - r1 - ... - rH` joined by bottleneck links: a
/// dumbbell is the chain with H = 1, a parking lot has H > 1. Hosts are
/// attached by [`attach_host`]. Returns the router ids and, per hop, the
/// (forward, reverse) link ids.
pub fn router_chain(
    topo: &mut Topology,
    hops: usize,
    fwd: &HalfLink,
    rev: &HalfLink,
) -> (Vec<usize>, Vec<(usize, usize)>) {
    let routers: Vec<usize> = (0..=hops).map(|i| topo.add_node(format!("r{i}"))).collect();
    let mut links = vec![];
    for w in routers.windows(2) {
        let (f, r) = topo.add_duplex(w[0], w[1], fwd.clone(), rev.clone());
        topo.links[f].name = if hops == 1 {
            "bottleneck".into()
        } else {
            format!("hop{}", links.len() + 1)
        };
        topo.links[r].name = format!("{}.reverse", topo.links[f].name);
        links.push((f, r));
    }
    (routers, links)
}

/// A host joined to its router by a duplex access link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    pub node: usize,
    pub router: usize,
    /// host -> router: the host's own queue.
    pub up: u32,
    /// router -> host.
    pub down: u32,
}

/// Adds a host joined to `router` by a duplex access link.
pub fn attach_host(topo: &mut Topology, name: String, router: usize, access: &HalfLink) -> Host {
    let node = topo.add_node(name);
    let (up, down) = topo.add_duplex(node, router, access.clone(), access.clone());
    Host {
        node,
        router,
        up: up as u32,
        down: down as u32,
    }
}

/// Routes between every pair of routers, computed once before any host is
/// attached. Hosts are leaves, so a host-to-host route is the sender's
/// access link, the routers' route and the receiver's access link: set-up
/// costs O(1) routing work per flow however many flows there are.
#[derive(Clone, Debug)]
pub struct RouterRoutes {
    routers: Vec<usize>,
    /// `routes[i][j]`: links from `routers[i]` to `routers[j]`.
    routes: Vec<Vec<Option<Vec<u32>>>>,
}

impl RouterRoutes {
    pub fn new(topo: &Topology, routers: &[usize]) -> Self {
        let routes = routers
            .iter()
            .map(|&a| routers.iter().map(|&b| topo.route(a, b)).collect())
            .collect();
        Self {
            routers: routers.to_vec(),
            routes,
        }
    }

    fn index(&self, router: usize) -> usize {
        self.routers
            .iter()
            .position(|&r| r == router)
            .expect("a router of this topology")
    }

    /// The route from host `src` to host `dst` (None if their routers are
    /// not connected).
    pub fn host_route(&self, src: &Host, dst: &Host) -> Option<Vec<u32>> {
        let middle = self.routes[self.index(src.router)][self.index(dst.router)].as_ref()?;
        let mut route = Vec::with_capacity(middle.len() + 2);
        route.push(src.up);
        route.extend_from_slice(middle);
        route.push(dst.down);
        Some(route)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::QueueLimit;

    fn half(delay_ms: u64) -> HalfLink {
        HalfLink {
            rate: Bandwidth::from_bps(1_000_000_000),
            delay_ns: delay_ms * 1_000_000,
            queue: QueueDiscipline::DropTail(QueueLimit::Packets(100)),
            loss_prob: 0.0,
        }
    }

    #[test]
    fn parking_lot_routes_long_and_cross_flows() {
        let mut t = Topology::new();
        let (r, hops) = router_chain(&mut t, 3, &half(10), &half(10));
        let rr = RouterRoutes::new(&t, &r);
        let hosts: Vec<Host> = [(0, 1), (3, 2), (1, 1), (2, 1)]
            .iter()
            .enumerate()
            .map(|(i, &(router, ms))| attach_host(&mut t, format!("h{i}"), r[router], &half(ms)))
            .collect();
        // The structural route equals a full shortest-path search.
        for x in &hosts {
            for y in &hosts {
                if x != y {
                    assert_eq!(rr.host_route(x, y), t.route(x.node, y.node));
                }
            }
        }
        let (a, b, c, d) = (hosts[0].node, hosts[1].node, hosts[2].node, hosts[3].node);
        let long = t.route(a, b).unwrap();
        assert_eq!(long.len(), 5);
        assert_eq!(
            &long[1..4],
            &[hops[0].0 as u32, hops[1].0 as u32, hops[2].0 as u32]
        );
        assert_eq!(t.route_delay_ns(&long), 33_000_000);
        let cross = t.route(c, d).unwrap();
        assert_eq!(cross.len(), 3);
        assert_eq!(cross[1], hops[1].0 as u32);
        // Reverse direction uses the reverse links.
        let back = t.route(b, a).unwrap();
        assert_eq!(back[2], hops[1].1 as u32);
    }

    #[test]
    fn prefers_lower_delay_path() {
        let mut t = Topology::new();
        let a = t.add_node("a");
        let b = t.add_node("b");
        let c = t.add_node("c");
        t.add_duplex(a, b, half(50), half(50));
        t.add_duplex(a, c, half(10), half(10));
        t.add_duplex(c, b, half(10), half(10));
        assert_eq!(t.route(a, b).unwrap().len(), 2);
        assert!(t.route(a, a).unwrap().is_empty());
    }
}
