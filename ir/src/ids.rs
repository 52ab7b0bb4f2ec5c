//! Counting and finding ids among a draft's elements.
//!
//! A draft's ids are looked up while it is lowered (how many earlier elements share an
//! id) and while its edges are resolved (where an endpoint's node first appears). A map
//! keyed by the ids themselves is 24 to 48 bytes an entry; at a million nodes it no
//! longer fits in the cache and every lookup misses, so the check grew faster than the
//! draft. This table holds each id's first position and 32 more bits of its hash, 8 bytes
//! an entry, and compares ids through the caller's list only when those bits agree.

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry as TableEntry;

#[derive(Clone, Copy)]
struct Entry {
    first: u32,
    /// More bits of the id's hash than the table's own 7-bit tag: an id is read back
    /// through `id_at` (a cache miss at a million ids) only when these agree too.
    fingerprint: u32,
}

/// Ids recorded by position; the caller keeps the ids (`id_at` reads the id at a position).
pub struct IdTable {
    table: hashbrown::HashTable<Entry>,
    /// How many times each repeated id was recorded, by its first position (ids are
    /// nearly always unique, so this stays empty).
    repeats: rustc_hash::FxHashMap<u32, u32>,
}

fn hash(id: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(id)
}

fn fingerprint(hash: u64) -> u32 {
    (hash >> 16) as u32
}

impl IdTable {
    pub fn with_capacity(capacity: usize) -> Self {
        IdTable { table: hashbrown::HashTable::with_capacity(capacity), repeats: Default::default() }
    }

    /// Records the id at `position` and returns how many earlier records had the same id.
    pub fn count<'a>(&mut self, id: &str, position: u32, id_at: impl Fn(u32) -> &'a str) -> u32 {
        let hash = hash(id);
        let fp = fingerprint(hash);
        let same = |e: &Entry| e.fingerprint == fp && id_at(e.first) == id;
        let rehash = |e: &Entry| self::hash(id_at(e.first));
        match self.table.entry(hash, same, rehash) {
            TableEntry::Occupied(occupied) => {
                let repeats = self.repeats.entry(occupied.get().first).or_insert(0);
                *repeats += 1;
                *repeats
            }
            TableEntry::Vacant(vacant) => {
                vacant.insert(Entry { first: position, fingerprint: fp });
                0
            }
        }
    }

    /// The position of the first record of `id`.
    pub fn first<'a>(&self, id: &str, id_at: impl Fn(u32) -> &'a str) -> Option<u32> {
        let hash = hash(id);
        let fp = fingerprint(hash);
        self.table.find(hash, |e| e.fingerprint == fp && id_at(e.first) == id).map(|e| e.first)
    }
}

#[cfg(test)]
mod tests {
    use super::IdTable;

    #[test]
    fn counts_earlier_records_and_finds_the_first() {
        let ids = ["a", "b", "a", "c", "a", "b"];
        let mut table = IdTable::with_capacity(2);
        let counts: Vec<u32> =
            (0..ids.len() as u32).map(|i| table.count(ids[i as usize], i, |p| ids[p as usize])).collect();
        assert_eq!(counts, [0, 0, 1, 0, 2, 1]);
        assert_eq!(table.first("a", |p| ids[p as usize]), Some(0));
        assert_eq!(table.first("b", |p| ids[p as usize]), Some(1));
        assert_eq!(table.first("c", |p| ids[p as usize]), Some(3));
        assert_eq!(table.first("d", |p| ids[p as usize]), None);
    }

    /// Past its capacity the table grows, rehashing through `id_at`.
    #[test]
    fn grows_past_its_capacity() {
        let ids: Vec<String> = (0..10_000).map(|i| format!("node_{}", i % 7_000)).collect();
        let mut table = IdTable::with_capacity(1);
        for (i, id) in ids.iter().enumerate() {
            let expected = u32::from(i >= 7_000);
            assert_eq!(table.count(id, i as u32, |p| &ids[p as usize]), expected, "{id}");
        }
        assert_eq!(table.first("node_6999", |p| &ids[p as usize]), Some(6_999));
    }
}
