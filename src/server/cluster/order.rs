//! Where a session event relayed between instances goes, decided from the
//! number alone: the database numbers each session's events 1 by 1 in
//! commit order (`store::cluster::append_event`), so a receiver that knows
//! the last number it delivered knows whether the next is the one it
//! waits for, one it already has, or one that leaves a gap to read from
//! the table first. Pure, so the rule is tested on its own.

/// What to do with event `id` of a session whose channel here last
/// delivered event `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The next one: deliver it.
    Next,
    /// Delivered already (a notification read again after a reconnect, or
    /// an event the gap reading brought first): drop it.
    Duplicate,
    /// Events `after + 1 .. id` were missed: read them (and `id`) from the
    /// table, in order, before anything else.
    Gap {
        /// The last event delivered.
        after: u64,
    },
}

/// Decides about event `id` for a channel that delivered up to `last`
/// (`None`: the channel does not know where the session's numbering
/// stands yet, so whatever comes first is where it starts).
pub fn admit(last: Option<u64>, id: u64) -> Admit {
    match last {
        None => Admit::Next,
        Some(last) if id <= last => Admit::Duplicate,
        Some(last) if id == last + 1 => Admit::Next,
        Some(last) => Admit::Gap { after: last },
    }
}

/// Whether `seqs`, read from the table for the events after `after` up to
/// `upto`, are all of them: consecutive from `after + 1`, ending at `upto`.
/// (A shorter read means rows were pruned; the watcher then needs a
/// snapshot instead.)
pub fn complete(after: u64, upto: u64, seqs: impl IntoIterator<Item = u64>) -> bool {
    let mut expected = after + 1;
    for seq in seqs {
        if seq != expected {
            return false;
        }
        expected += 1;
    }
    expected == upto + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_next_number_is_delivered_and_older_ones_dropped() {
        assert_eq!(admit(Some(10), 11), Admit::Next);
        assert_eq!(admit(Some(10), 10), Admit::Duplicate);
        assert_eq!(admit(Some(10), 3), Admit::Duplicate);
    }

    #[test]
    fn a_number_past_the_next_asks_for_the_ones_between() {
        assert_eq!(admit(Some(10), 13), Admit::Gap { after: 10 });
    }

    #[test]
    fn a_channel_that_knows_no_number_starts_at_the_first_it_gets() {
        assert_eq!(admit(None, 1_000_001), Admit::Next);
    }

    #[test]
    fn a_read_is_complete_only_without_holes_up_to_its_end() {
        assert!(complete(4, 7, [5, 6, 7]));
        assert!(complete(4, 4, []));
        assert!(!complete(4, 7, [5, 7]), "a hole");
        assert!(!complete(4, 7, [5, 6]), "short of the end");
        assert!(!complete(4, 7, [6, 7]), "the first was pruned");
    }

    /// What a receiver does with one notification: deliver it if it is
    /// next; on a gap, read everything up to it from `table` (every event
    /// up to a notified one is committed, so the table has them) — as
    /// `cluster::listener` does.
    fn receive(table: &[u64], delivered: &mut Vec<u64>, id: u64) {
        match admit(delivered.last().copied(), id) {
            Admit::Next => delivered.push(id),
            Admit::Duplicate => {}
            Admit::Gap { after } => {
                for &seq in table.iter().filter(|&&s| s > after && s <= id) {
                    if admit(delivered.last().copied(), seq) == Admit::Next {
                        delivered.push(seq);
                    }
                }
            }
        }
    }

    proptest! {
        /// Notifications arrive in commit order, but any may be lost (a
        /// reconnect) or come twice (a reconnect's catch-up read and the
        /// notification itself); the last one is always seen (or read by
        /// the catch-up). Whatever happens, the watcher gets every event
        /// from its starting point once, in order.
        #[test]
        fn every_event_is_delivered_once_in_order_whatever_is_lost_or_repeated(
            base in 0u64..1_000_000,
            fates in prop::collection::vec(0u8..4, 1..60),
            start in 0usize..5,
        ) {
            let table: Vec<u64> = (1..=fates.len() as u64).map(|n| base + n).collect();
            let start = start.min(table.len() - 1);
            // The channel was positioned at an event already committed.
            let mut delivered = vec![table[start]];
            for (i, fate) in fates.iter().enumerate() {
                let id = table[i];
                let last = i + 1 == table.len();
                match fate {
                    0 if !last => {} // lost
                    1 => {
                        receive(&table, &mut delivered, id);
                        receive(&table, &mut delivered, id);
                    }
                    2 if i > 0 => {
                        // An older one again, then this one.
                        receive(&table, &mut delivered, table[i - 1]);
                        receive(&table, &mut delivered, id);
                    }
                    _ => receive(&table, &mut delivered, id),
                }
            }
            prop_assert_eq!(&delivered[..], &table[start..]);
        }
    }
}
