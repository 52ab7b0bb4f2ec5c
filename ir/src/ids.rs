//! Counting and finding ids among a draft's elements.
//!
//! A draft's ids are counted while it is lowered (how many earlier elements share an id)
//! and looked up while its edges are resolved (where an endpoint's node first appears).
//! One hash table over a million ids is tens of megabytes: every access misses the cache
//! and the TLB, and the check grew faster than the draft. So both work in batches, the
//! way a database joins: the ids are split by some bits of their hashes into partitions of
//! a few thousand, and each partition gets a small table that stays in the cache. Ids are
//! compared only when their 64-bit hashes agree, so the answers are exact.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

fn hash(id: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(id)
}

/// For each of `len` ids, how many earlier ids equal it (0 for a first occurrence).
pub fn occurrences<'a>(len: usize, id_at: impl Fn(u32) -> &'a str) -> Vec<u32> {
    occurrences_hashed(len, &id_at, hash)
}

fn occurrences_hashed<'a>(len: usize, id_at: &impl Fn(u32) -> &'a str, hash: impl Fn(&str) -> u64) -> Vec<u32> {
    struct Seen {
        hash: u64,
        first: u32,
        count: u32,
    }
    let mut counts = vec![0; len];
    let partitions = Partitions::new((0..len as u32).map(|p| (hash(id_at(p)), p)).collect(), len);
    let mut table: HashTable<Seen> = HashTable::new();
    for part in partitions.iter() {
        table.clear();
        // Positions ascend within a partition, so earlier ids are counted first.
        for &(h, position) in part {
            let key = h;
            let same = |seen: &Seen| seen.hash == h && id_at(seen.first) == id_at(position);
            match table.entry(key, same, |seen| seen.hash) {
                Entry::Occupied(mut seen) => {
                    seen.get_mut().count += 1;
                    counts[position as usize] = seen.get().count;
                }
                Entry::Vacant(slot) => {
                    slot.insert(Seen { hash: h, first: position, count: 0 });
                }
            }
        }
    }
    counts
}

/// For each of `probes` ids, the position among `keys` that holds the same id. The keys'
/// ids must be distinct (first occurrences).
pub fn find_each<'a>(
    keys: impl Iterator<Item = u32>,
    key_at: impl Fn(u32) -> &'a str,
    probes: usize,
    probe_at: impl Fn(u32) -> &'a str,
) -> Vec<Option<u32>> {
    find_each_hashed(keys, &key_at, probes, &probe_at, hash)
}

fn find_each_hashed<'a>(
    keys: impl Iterator<Item = u32>,
    key_at: &impl Fn(u32) -> &'a str,
    probes: usize,
    probe_at: &impl Fn(u32) -> &'a str,
    hash: impl Fn(&str) -> u64,
) -> Vec<Option<u32>> {
    const NONE: u32 = u32::MAX;
    let keys: Vec<(u64, u32)> = keys.map(|p| (hash(key_at(p)), p)).collect();
    let key_count = keys.len();
    let keys = Partitions::new(keys, key_count);
    let probe_hashes = (0..probes as u32).map(|p| (hash(probe_at(p)), p)).collect();
    let probe_parts = keys.split_alike(probe_hashes);
    let mut found = vec![NONE; probes];
    let mut table: HashTable<(u64, u32)> = HashTable::new();
    for (part, probes) in keys.iter().zip(probe_parts.iter()) {
        table.clear();
        for &(h, position) in part {
            table.insert_unique(h, (h, position), |&(h, _)| h);
        }
        for &(h, probe) in probes {
            if let Some(&(_, position)) = table.find(h, |&(key, _)| key == h) {
                found[probe as usize] = position;
            }
        }
    }
    // Equal hashes are checked in probe order: edges mostly name nearby nodes, so this
    // reads the keys' ids nearly in order. Two ids with one 64-bit hash are found exactly.
    let mut found: Vec<Option<u32>> = found.into_iter().map(|p| (p != NONE).then_some(p)).collect();
    for (probe, slot) in found.iter_mut().enumerate() {
        if let Some(position) = *slot {
            let id = probe_at(probe as u32);
            if key_at(position) != id {
                let h = hash(id);
                let part = keys.part_of(h);
                *slot = part.iter().find(|&&(key, p)| key == h && key_at(p) == id).map(|&(_, p)| p);
            }
        }
    }
    found
}

/// Hashed positions split by some of their hashes' bits, each partition in ascending position
/// order; sized so that a partition's table fits in the cache.
struct Partitions {
    bits: u32,
    entries: Vec<(u64, u32)>,
    /// `entries[starts[i]..starts[i + 1]]` is partition `i`.
    starts: Vec<usize>,
}

impl Partitions {
    /// About this many ids to a partition.
    const TARGET: usize = 2048;

    fn new(entries: Vec<(u64, u32)>, len: usize) -> Partitions {
        let bits = (len / Self::TARGET).next_power_of_two().trailing_zeros().min(16);
        Partitions::with_bits(bits, entries)
    }

    fn with_bits(bits: u32, entries: Vec<(u64, u32)>) -> Partitions {
        let index = |h: u64| partition(bits, h);
        let mut starts = vec![0usize; (1 << bits) + 1];
        for &(h, _) in &entries {
            starts[index(h) + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        if bits == 0 {
            return Partitions { bits, entries, starts };
        }
        let mut next = starts.clone();
        let mut sorted = vec![(0, 0); entries.len()];
        for entry in entries {
            let slot = &mut next[index(entry.0)];
            sorted[*slot] = entry;
            *slot += 1;
        }
        Partitions { bits, entries: sorted, starts }
    }

    /// Other entries split by the same bits.
    fn split_alike(&self, entries: Vec<(u64, u32)>) -> Partitions {
        Partitions::with_bits(self.bits, entries)
    }

    fn iter(&self) -> impl Iterator<Item = &[(u64, u32)]> {
        self.starts.windows(2).map(|w| &self.entries[w[0]..w[1]])
    }

    fn part_of(&self, h: u64) -> &[(u64, u32)] {
        let i = partition(self.bits, h);
        &self.entries[self.starts[i]..self.starts[i + 1]]
    }
}

/// The partition of a hash: its bits from 32 up, which neither a partition's table's
/// bucket index (the low bits) nor its tag (the top seven) uses.
fn partition(bits: u32, h: u64) -> usize {
    ((h >> 32) & ((1 << bits) - 1)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_earlier_occurrences() {
        let ids = ["a", "b", "a", "c", "a", "b"];
        assert_eq!(occurrences(ids.len(), |p| ids[p as usize]), [0, 0, 1, 0, 2, 1]);
        assert_eq!(occurrences(0, |p| ids[p as usize]), Vec::<u32>::new());
    }

    #[test]
    fn finds_each_probe_among_the_keys() {
        let nodes = ["a", "b", "a", "c"];
        let probes = ["c", "a", "d", "b", "c"];
        let found = find_each([0, 1, 3].into_iter(), |p| nodes[p as usize], probes.len(), |p| probes[p as usize]);
        assert_eq!(found, [Some(3), Some(0), None, Some(1), Some(3)]);
    }

    /// Many partitions: the answers agree with a plain map.
    #[test]
    fn agrees_with_a_map_across_partitions() {
        let ids: Vec<String> = (0..50_000).map(|i| format!("node_{}", (i * 7919) % 40_000)).collect();
        let counts = occurrences(ids.len(), |p| &ids[p as usize]);
        let mut seen = std::collections::HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            let count = seen.entry(id.as_str()).or_insert(0u32);
            assert_eq!(counts[i], *count, "{id}");
            *count += 1;
        }
        let keys: Vec<u32> = (0..ids.len() as u32).filter(|&p| counts[p as usize] == 0).collect();
        let probes: Vec<String> = (0..1_000).map(|i| format!("node_{}", i * 45)).collect();
        let found = find_each(keys.iter().copied(), |p| &ids[p as usize], probes.len(), |p| &probes[p as usize]);
        for (probe, found) in probes.iter().zip(found) {
            let first = ids.iter().position(|id| id == probe).map(|p| p as u32);
            assert_eq!(found, first, "{probe}");
        }
    }

    /// Ids whose hashes collide are still told apart: a constant hash makes every id
    /// collide with every other.
    #[test]
    fn colliding_hashes_compare_the_ids() {
        let ids = ["x", "y", "x", "z", "y"];
        let counts = occurrences_hashed(ids.len(), &|p| ids[p as usize], |_| 7);
        assert_eq!(counts, [0, 0, 1, 0, 1]);
        let probes = ["z", "y", "w", "x"];
        let found =
            find_each_hashed([0, 1, 3].into_iter(), &|p| ids[p as usize], probes.len(), &|p| probes[p as usize], |_| 7);
        assert_eq!(found, [Some(3), Some(1), None, Some(0)]);
    }
}
