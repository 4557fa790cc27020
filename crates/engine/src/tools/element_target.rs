//! How a call names the element it acts on: the words every layer that places, judges
//! or finds an element shares (the tool's `Target`, the worker's facts, `Exec`).

/// How a call names its element.
#[derive(Debug, Clone, PartialEq)]
pub enum ElementTarget {
    /// A node of a snapshot (only the latest one's may be acted on).
    Node {
        /// The snapshot the node is of.
        snapshot_id: String,
        /// The node's id in that snapshot.
        node_id: u32,
    },
    /// A stable element reference, valid while the element lives.
    Ref(String),
    /// Whatever single element of the live tree matches.
    Select(crate::selector::Selector),
}
