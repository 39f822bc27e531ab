import Foundation

/// A generated corpus of broken policies: every shipped policy cut at the end of each of its
/// lines and in the middle of each line, and with seeded random byte flips (one to three bytes
/// replaced by any value).
public enum GeneratedCorpus {
    /// Every case: a name and its bytes.
    public static func corpus() -> [(name: String, bytes: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var random = SplitMix(seed: 13)
        for path in Fixtures.files(in: "policies") {
            let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let bytes = Array(Fixtures.text(path).utf8)
            // Cuts: after each line, and in the middle of each line.
            var start = 0
            for (i, byte) in bytes.enumerated() where byte == 0x0A {
                out.append(("\(base)-line\(out.count)", Array(bytes[..<(i + 1)])))
                out.append(("\(base)-mid\(out.count)", Array(bytes[..<(start + (i - start) / 2)])))
                start = i + 1
            }
            // Flips: one to three bytes replaced by any byte value.
            for n in 0..<40 {
                var flipped = bytes
                for _ in 0...random.below(3) { flipped[random.below(flipped.count)] = UInt8(random.below(256)) }
                out.append(("\(base)-flip\(n)", flipped))
            }
        }
        return out
    }
}
