package import SessionPolicy

/// The attribute values `diff --storage` launches stored sessions with.
package enum AttributeChoices {
    /// The attribute values an event of `kind` is worth trying with, for `diff --storage`: every
    /// attribute some rule of `machines` reads on `kind`, in any state, with the values at the
    /// boundaries of the rules' comparisons (every word of a word list, both booleans), combined.
    /// Unlike the exploration's, absence is not a choice: a client that reports its attributes is
    /// what an impact on real sessions is about. `[[:]]` when no rule reads one; nil when the
    /// combinations would be more than `limit`.
    package static func sets(_ machines: [StateMachine], _ kind: EventKind, limit: Int = 1024) -> [[String: String]]? {
        var attributes: [String: [String?]] = [:]
        for machine in machines {
            for state in MachineState.allCases {
                for t in machine.transitions(from: state, on: kind) { _ = Explorer.reads(t.guard, machine, &attributes) }
            }
        }
        var sets: [[String: String]] = [[:]]
        for (name, candidates) in attributes.sorted(by: { $0.key < $1.key }) {
            let values = candidates.compactMap { $0 }
            guard !values.isEmpty else { continue }
            guard sets.count * values.count <= limit else { return nil }
            sets = sets.flatMap { base in
                values.map { v -> [String: String] in
                    var b = base
                    b[name] = v
                    return b
                }
            }
        }
        return sets
    }
}
