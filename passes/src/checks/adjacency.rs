//! The edges leaving (or entering) each node, in two flat arrays: where each node starts
//! in the list, and the list. A vector per node made a million small allocations for a
//! million-node draft, scattered over the heap, for every pass that walks the graph.

/// Each node's entries, in the order they were given.
#[derive(Clone, Debug)]
pub struct Adjacency<T> {
    /// Node `n`'s entries are `entries[starts[n]..starts[n + 1]]`.
    starts: Vec<u32>,
    entries: Vec<T>,
}

impl<T: Copy + Default> Adjacency<T> {
    /// The lists of `count` nodes from `(node, entry)` pairs.
    ///
    /// The pairs are read once, into a compact copy that the counting and the placing
    /// read: callers derive them from the graph's edges, 96 bytes each, and at a million
    /// edges every extra pass over those was a pass over memory.
    pub fn new(count: usize, pairs: impl Iterator<Item = (u32, T)>) -> Self {
        let pairs: Vec<(u32, T)> = pairs.collect();
        let mut starts = vec![0u32; count + 1];
        for &(node, _) in &pairs {
            starts[node as usize + 1] += 1;
        }
        for n in 0..count {
            starts[n + 1] += starts[n];
        }
        let mut next = starts.clone();
        let mut entries = vec![T::default(); starts[count] as usize];
        for (node, entry) in pairs {
            let slot = &mut next[node as usize];
            entries[*slot as usize] = entry;
            *slot += 1;
        }
        Adjacency { starts, entries }
    }
}

impl<T> Adjacency<T> {
    /// The entries of `node`.
    pub fn of(&self, node: u32) -> &[T] {
        &self.entries[self.starts[node as usize] as usize..self.starts[node as usize + 1] as usize]
    }

    /// The entries of `node`, to reorder.
    pub fn of_mut(&mut self, node: u32) -> &mut [T] {
        &mut self.entries[self.starts[node as usize] as usize..self.starts[node as usize + 1] as usize]
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.starts.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::Adjacency;

    #[test]
    fn each_node_keeps_its_entries_in_order() {
        let pairs = [(2, 'a'), (0, 'b'), (2, 'c'), (3, 'd'), (0, 'e')];
        let lists = Adjacency::new(5, pairs.iter().copied());
        assert_eq!(lists.nodes(), 5);
        let of = |n| lists.of(n).iter().collect::<String>();
        assert_eq!([of(0), of(1), of(2), of(3), of(4)], ["be", "", "ac", "d", ""]);
    }
}
