//! Which address a request comes from. Behind a reverse proxy every
//! connection's peer is the proxy, so the client is named in
//! `X-Forwarded-For`, a header anyone can send: it is believed only when
//! the peer is one of the proxies the operator named (`TRUSTED_PROXIES`),
//! and then only as far back as the chain of trusted proxies goes.

use std::net::IpAddr;

/// One trusted proxy: an address, or a block of them (`10.0.0.0/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `192.0.2.7`, `10.0.0.0/8`, `::1` or `fd00::/8`; `None` for
    /// anything else (a prefix longer than the address, a host name).
    pub fn parse(text: &str) -> Option<Self> {
        let (addr, prefix) = match text.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = addr.trim().parse().ok()?;
        let network = network.to_canonical();
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.trim().parse::<u8>().ok().filter(|p| *p <= max)?,
            None => max,
        };
        Some(Self { network, prefix })
    }

    /// Whether `ip` is in this block.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// The proxies whose `X-Forwarded-For` is believed; none by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Cidr>);

impl TrustedProxies {
    /// Parses a comma- or space-separated list of addresses and blocks;
    /// `Err` names the first entry that is neither.
    pub fn parse(list: &str) -> Result<Self, String> {
        list.split([',', ' '])
            .filter(|entry| !entry.trim().is_empty())
            .map(|entry| Cidr::parse(entry).ok_or_else(|| entry.trim().to_owned()))
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `ip` is a trusted proxy.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|cidr| cidr.contains(ip))
    }

    /// The client of a request from `peer` that carried these
    /// `X-Forwarded-For` values (oldest hop first): the peer itself unless
    /// it is trusted; else, reading the chain from the nearest hop back,
    /// the first address that is not a trusted proxy. An entry that is not
    /// an address ends the walk at the hop that added it, so a forged or
    /// garbled entry is never taken for the client.
    pub fn client<'a>(&self, peer: IpAddr, forwarded: impl IntoIterator<Item = &'a str>) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let hops: Vec<&str> = forwarded
            .into_iter()
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect();
        let mut client = peer;
        for hop in hops.iter().rev() {
            let Ok(ip) = hop.parse::<IpAddr>() else {
                return client;
            };
            client = ip.to_canonical();
            if !self.trusts(client) {
                return client;
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn addresses_and_blocks_are_parsed_and_matched() {
        let proxies = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8 fd00::/8").unwrap();
        assert!(proxies.trusts(ip("127.0.0.1")));
        assert!(proxies.trusts(ip("::ffff:127.0.0.1")), "IPv4-mapped");
        assert!(!proxies.trusts(ip("127.0.0.2")));
        assert!(proxies.trusts(ip("10.200.3.4")));
        assert!(proxies.trusts(ip("fd12::1")));
        assert!(!proxies.trusts(ip("fe80::1")));
        assert!(TrustedProxies::parse("0.0.0.0/0")
            .unwrap()
            .trusts(ip("8.8.8.8")));
        assert!(TrustedProxies::parse("").unwrap().is_empty());
    }

    #[test]
    fn anything_but_an_address_or_block_is_refused_by_name() {
        assert_eq!(
            TrustedProxies::parse("127.0.0.1,proxy.local"),
            Err("proxy.local".into())
        );
        assert_eq!(
            TrustedProxies::parse("10.0.0.0/33"),
            Err("10.0.0.0/33".into())
        );
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let proxies = TrustedProxies::parse("127.0.0.1").unwrap();
        assert_eq!(
            proxies.client(ip("192.0.2.9"), ["10.9.9.9"]),
            ip("192.0.2.9")
        );
        let none = TrustedProxies::default();
        assert_eq!(none.client(ip("127.0.0.1"), ["10.9.9.9"]), ip("127.0.0.1"));
    }

    #[test]
    fn behind_trusted_proxies_the_nearest_untrusted_hop_is_the_client() {
        let proxies = TrustedProxies::parse("127.0.0.1 10.0.0.0/8").unwrap();
        // A client-sent (forged) first entry is not believed past a real hop.
        assert_eq!(
            proxies.client(ip("127.0.0.1"), ["6.6.6.6, 203.0.113.5", "10.0.0.2"]),
            ip("203.0.113.5")
        );
        assert_eq!(
            proxies.client(ip("127.0.0.1"), ["garbage, 10.0.0.3"]),
            ip("10.0.0.3")
        );
        assert_eq!(
            proxies.client(ip("127.0.0.1"), [] as [&str; 0]),
            ip("127.0.0.1")
        );
        assert_eq!(
            proxies.client(ip("127.0.0.1"), ["10.1.1.1"]),
            ip("10.1.1.1")
        );
    }
}
