/// "Did you mean" suggestions by edit distance (the help of `unknown-key` and of the server's
/// unknown policy names).
public enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be a plausible typo.
    public static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        let w = Array(word.lowercased().unicodeScalars)
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(w, Array(candidate.lowercased().unicodeScalars))
            if best == nil || d < best!.1 || (d == best!.1 && candidate < best!.0) { best = (candidate, d) }
        }
        guard let (name, d) = best else { return nil }
        let limit = max(1, min(3, (w.count + 1) / 3))
        return d <= limit ? name : nil
    }

    /// A help line: "did you mean `x`?" or the list of what is allowed.
    static func help(for word: String, in candidates: [String]) -> String {
        if let c = closest(to: word, in: candidates) { return "did you mean `\(c)`?" }
        return "expected one of: " + candidates.map { "`\($0)`" }.joined(separator: ", ")
    }

    /// Damerau-Levenshtein (optimal string alignment) distance.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prevPrev = [Int](repeating: 0, count: b.count + 1)
        var prev = Array(0...b.count)
        var cur = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    cur[j] = min(cur[j], prevPrev[j - 2] + 1)
                }
            }
            (prevPrev, prev, cur) = (prev, cur, prevPrev)
        }
        return prev[b.count]
    }
}

extension Suggestion {
    /// A "did you mean" help line, for front ends outside the core.
    package static func publicHelp(for word: String, in candidates: [String]) -> String { help(for: word, in: candidates) }
}
