//! Thread order: a post's comments as a tree by the comment each replies to (`parent`), listed
//! depth first, each level oldest first (Mastodon's `context`). A comment whose parent is not
//! among them (deleted, hidden from the viewer) is shown as a reply to the post.

use std::collections::HashMap;

use super::ids::CommentId;

/// One comment as the order needs it: its id, its parent, and its place in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub id: CommentId,
    pub parent: Option<CommentId>,
    /// `(created_at, id)`: siblings are listed by it.
    pub key: (i64, i64),
}

/// The indexes of `nodes` in thread order, each with its depth (0: a reply to the post).
pub fn thread_order(nodes: &[Node]) -> Vec<(usize, usize)> {
    let known: HashMap<CommentId, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut children: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let parent = n.parent.and_then(|p| known.get(&p).copied()).filter(|&p| p != i);
        children.entry(parent).or_default().push(i);
    }
    for list in children.values_mut() {
        list.sort_by_key(|&i| nodes[i].key);
    }
    let mut out = Vec::with_capacity(nodes.len());
    // Depth first without recursion; `seen` guards against a cycle (never made, but cheap).
    let mut stack: Vec<(usize, usize)> =
        children.get(&None).map_or(Vec::new(), |roots| roots.iter().rev().map(|&i| (i, 0)).collect());
    let mut seen = vec![false; nodes.len()];
    while let Some((i, depth)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        out.push((i, depth));
        if let Some(kids) = children.get(&Some(i)) {
            stack.extend(kids.iter().rev().map(|&k| (k, depth + 1)));
        }
    }
    out
}

/// The chain of `id`'s ancestors among `nodes`, root first (not `id` itself).
pub fn ancestors(nodes: &[Node], id: CommentId) -> Vec<usize> {
    let known: HashMap<CommentId, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut chain = Vec::new();
    let mut at = known.get(&id).and_then(|&i| nodes[i].parent);
    while let Some(i) = at.and_then(|p| known.get(&p).copied()) {
        if chain.contains(&i) || chain.len() > nodes.len() {
            break;
        }
        chain.push(i);
        at = nodes[i].parent;
    }
    chain.reverse();
    chain
}

/// The indexes of `id`'s replies, theirs and so on, in thread order.
pub fn descendants(nodes: &[Node], id: CommentId) -> Vec<usize> {
    let order = thread_order(nodes);
    let Some(pos) = order.iter().position(|&(i, _)| nodes[i].id == id) else { return Vec::new() };
    let depth = order[pos].1;
    order[pos + 1..].iter().take_while(|&&(_, d)| d > depth).map(|&(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: i64, parent: Option<i64>, at: i64) -> Node {
        Node { id: CommentId::from_trusted(id), parent: parent.map(CommentId::from_trusted), key: (at, id) }
    }

    #[test]
    fn replies_sit_under_their_parents_oldest_first() {
        // 1 (t1) <- 3 (t3) <- 4 (t4); 2 (t2) <- 5 (t5); 6 replies to a missing comment (t6).
        let nodes = [
            node(4, Some(3), 4),
            node(1, None, 1),
            node(5, Some(2), 5),
            node(3, Some(1), 3),
            node(2, None, 2),
            node(6, Some(99), 6),
        ];
        let ids: Vec<(i64, usize)> =
            thread_order(&nodes).iter().map(|&(i, d)| (nodes[i].id.get(), d)).collect();
        assert_eq!(ids, vec![(1, 0), (3, 1), (4, 2), (2, 0), (5, 1), (6, 0)]);
        let chain: Vec<i64> =
            ancestors(&nodes, CommentId::from_trusted(4)).iter().map(|&i| nodes[i].id.get()).collect();
        assert_eq!(chain, vec![1, 3]);
        let below: Vec<i64> =
            descendants(&nodes, CommentId::from_trusted(1)).iter().map(|&i| nodes[i].id.get()).collect();
        assert_eq!(below, vec![3, 4]);
        assert!(descendants(&nodes, CommentId::from_trusted(6)).is_empty());
        assert!(ancestors(&nodes, CommentId::from_trusted(6)).is_empty(), "a missing parent: under the post");
    }

    #[test]
    fn a_cycle_cannot_loop() {
        let nodes = [node(1, Some(2), 1), node(2, Some(1), 2)];
        assert!(thread_order(&nodes).len() <= 2);
        assert!(ancestors(&nodes, CommentId::from_trusted(1)).len() <= 2);
    }
}
