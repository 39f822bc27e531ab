/// Bounds on one input document, enforced by every reader (the YAML front end, the JSON reader
/// `JSONSyntax` and the fast JSON reader) as it reads: its size, how many keys and values it
/// holds, and how deep they nest. Past a bound the input is refused with a located diagnostic.
package struct InputLimits: Sendable, Hashable {
    /// Largest input accepted, in bytes.
    package var bytes: Int
    /// Most keys, values and containers accepted.
    package var nodes: Int
    /// Deepest nesting accepted.
    package var depth: Int
    /// The hint of an `input-too-large` or `too-many-nodes` diagnostic: how to get under the bound.
    package var hint: String

    package init(bytes: Int, nodes: Int, depth: Int, hint: String) {
        self.bytes = bytes
        self.nodes = nodes
        self.depth = depth
        self.hint = hint
    }

    /// Policy and scenario files, state and event documents, single request bodies: 1 MiB,
    /// 100,000 values, 64 levels.
    package static let files = InputLimits(
        bytes: 1 << 20, nodes: 100_000, depth: 64,
        hint: "policy and scenario files are small; split the file or check that it is the right one")

    /// Values one batch item may hold: a state and an event with every key set come to about
    /// 60; the rest is room for attributes.
    package static let nodesPerBatchItem = 128

    /// A batch request body of at most `bytes` bytes and `items` items: the node budget follows
    /// the item limit (`nodesPerBatchItem` per item), so a batch the item limit allows is never
    /// refused for its values.
    package static func batch(bytes: Int, items: Int) -> InputLimits {
        let (perItems, overflow) = items.multipliedReportingOverflow(by: nodesPerBatchItem)
        return InputLimits(
            bytes: bytes, nodes: overflow ? Int.max : max(files.nodes, perItems + 16), depth: files.depth,
            hint: "split the batch, or raise the server's `--max-batch-body` or `--max-batch-items`")
    }
}
