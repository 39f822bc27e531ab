/// A zone: a convex set of clock valuations written as a difference-bound matrix (DBM), the
/// representation UPPAAL uses (Bengtsson and Yi, 2004). Clocks are **ages** in milliseconds,
/// measured back from the reference, the engine's `now`: clock `i` is `now - t_i` for a time
/// `t_i` the session records. `bound[i][j]` is an upper bound on `c_i - c_j`; index 0 is the
/// reference (age 0). Times in the engine are whole milliseconds, so every bound is an integer
/// and `<` is `<= c - 1`: one kind of bound, no strictness flag.
struct Zone: Hashable, Sendable {
    /// The clocks: the reference, then the times a session records, then the event's time.
    enum Clock: Int, CaseIterable, Sendable {
        case reference = 0, lastIdPLogin, lastOnline, lastActivity, highestTime, eventTime
    }

    static let size = Clock.allCases.count
    /// No bound.
    static let infinity = Int64.max / 4

    /// Row-major `size * size` bounds.
    private(set) var bounds: [Int64]

    /// Every clock free except the reference (age 0 to itself).
    init() {
        bounds = [Int64](repeating: Self.infinity, count: Self.size * Self.size)
        for i in 0..<Self.size { bounds[i * Self.size + i] = 0 }
    }

    subscript(_ i: Clock, _ j: Clock) -> Int64 {
        get { bounds[i.rawValue * Self.size + j.rawValue] }
        set { bounds[i.rawValue * Self.size + j.rawValue] = newValue }
    }

    /// Whether the zone holds no valuation (after `close()`).
    var isEmpty: Bool { (0..<Self.size).contains { bounds[$0 * Self.size + $0] < 0 } }

    /// Tightens every bound to the shortest path (Floyd-Warshall): the canonical form, in which
    /// equal zones have equal bounds and emptiness shows as a negative diagonal.
    mutating func close() {
        let n = Self.size
        for k in 0..<n {
            for i in 0..<n {
                let ik = bounds[i * n + k]
                if ik >= Self.infinity { continue }
                for j in 0..<n {
                    let kj = bounds[k * n + j]
                    if kj >= Self.infinity { continue }
                    if ik + kj < bounds[i * n + j] { bounds[i * n + j] = ik + kj }
                }
            }
        }
    }

    /// The zone with `c_i - c_j <= c` added, closed; nil when that leaves nothing. The zone is
    /// closed already, so only the paths through the new bound can shorten (O(n²), not O(n³)).
    func constrained(_ i: Clock, _ j: Clock, _ c: Int64) -> Zone? {
        // Implied, or contradicted: no copy.
        if c >= self[i, j] { return self }
        if c + self[j, i] < 0 { return nil }
        var z = self
        guard z.tighten(i.rawValue, j.rawValue, c) else { return z }
        return z.isEmpty ? nil : z
    }

    /// Adds `c_i - c_j <= c` to a closed zone and closes it again; false when it was implied.
    private mutating func tighten(_ i: Int, _ j: Int, _ c: Int64) -> Bool {
        let n = Self.size
        guard c < bounds[i * n + j] else { return false }
        if c + bounds[j * n + i] < 0 {
            bounds[i * n + i] = -1  // empty
            return true
        }
        bounds[i * n + j] = c
        for x in 0..<n {
            let xi = bounds[x * n + i]
            if xi >= Self.infinity { continue }
            for y in 0..<n {
                let jy = bounds[j * n + y]
                if jy >= Self.infinity { continue }
                let through = xi + c + jy
                if through < bounds[x * n + y] { bounds[x * n + y] = through }
            }
        }
        return true
    }

    /// The zone split by `age(clock) > threshold`: the part where it holds, the part where it does not.
    func split(_ clock: Clock, above threshold: Int64) -> (above: Zone?, notAbove: Zone?) {
        // age > θ  <=>  0 - age <= -(θ + 1);  age <= θ  <=>  age - 0 <= θ.
        (constrained(.reference, clock, -(threshold + 1)), constrained(clock, .reference, threshold))
    }

    /// Lets time pass: every age grows by the same amount, any amount >= 0 (UPPAAL's `up`).
    mutating func elapse() {
        for c in Clock.allCases where c != .reference { self[c, .reference] = Self.infinity }
    }

    /// Forgets `clock`: no constraint on it.
    mutating func free(_ clock: Clock) {
        for other in Clock.allCases where other != clock {
            self[clock, other] = Self.infinity
            self[other, clock] = Self.infinity
        }
    }

    /// Sets `clock` to the value of `source` (`source` may be the reference: age 0).
    mutating func assign(_ clock: Clock, from source: Clock) {
        guard clock != source else { return }
        for other in Clock.allCases where other != clock {
            self[clock, other] = self[source, other]
            self[other, clock] = self[other, source]
        }
        self[clock, source] = 0
        self[source, clock] = 0
        self[clock, clock] = 0
    }

    /// Max-bound extrapolation `Extra+_M` (Behrmann, Bouyer, Larsen and Pelánek, 2006), with a
    /// bound per clock (`m[clock]`: the largest constant a guard compares that age with): a
    /// clock past its bound forgets how far past and how it relates to the other clocks, and
    /// bounds beyond a clock's constant are dropped. The guards compare one age at a time with
    /// a constant, so the valuations it merges take the same transitions forever, and the
    /// number of zones is finite.
    mutating func extrapolate(_ m: [Int64]) {
        let n = Self.size
        let d = bounds
        func above(_ i: Int) -> Bool { i != 0 && d[i] < Self.infinity && -d[i] > m[i] }  // d[0 * n + i] = -lower(c_i)
        for i in 0..<n {
            for j in 0..<n where i != j {
                let b = d[i * n + j]
                if b >= Self.infinity { continue }
                if i != 0 && (b > m[i] || above(i) || above(j)) {
                    bounds[i * n + j] = Self.infinity
                } else if i == 0 && j != 0 && b < -m[j] {
                    bounds[i * n + j] = -(m[j] + 1)
                }
            }
        }
        close()
    }

    /// One valuation of `clocks` in the zone: each in turn at its smallest age (never below
    /// 0), the others tightened to stay consistent with it.
    func point(_ clocks: [Clock]) -> Ages {
        var z = self
        var values = Ages()
        for c in clocks {
            let value = max(-z[.reference, c], 0)
            _ = z.tighten(c.rawValue, 0, value)
            _ = z.tighten(0, c.rawValue, -value)
            values[c] = value
        }
        return values
    }

    /// One valuation of `clocks` in the zone: each in turn at its largest age, or `cap` past its
    /// smallest when it has no largest; the others tightened to stay consistent with it.
    func point(_ clocks: [Clock], largest cap: Int64) -> Ages {
        var z = self
        var values = Ages()
        for c in clocks {
            let lower = max(-z[.reference, c], 0)
            let upper = z[c, .reference]
            let value = upper >= Self.infinity ? lower + cap : max(upper, lower)
            _ = z.tighten(c.rawValue, 0, value)
            _ = z.tighten(0, c.rawValue, -value)
            values[c] = value
        }
        return values
    }

    /// Whether `ages` (a valuation of some clocks; the others free) satisfies every bound between them.
    func contains(_ ages: Ages) -> Bool {
        var all = ages
        all[.reference] = 0
        for i in Clock.allCases {
            guard let a = all[i] else { continue }
            for j in Clock.allCases {
                guard let b = all[j] else { continue }
                if self[i, j] < Self.infinity && a - b > self[i, j] { return false }
            }
        }
        return true
    }

    /// Whether every valuation of `other` is in this zone (both closed).
    func includes(_ other: Zone) -> Bool {
        for i in 0..<bounds.count where other.bounds[i] > bounds[i] { return false }
        return true
    }
}

/// A valuation of some of a zone's clocks: ages in milliseconds, by clock.
struct Ages: Sendable {
    private var values = SIMD8<Int64>(repeating: 0)
    private var present: UInt8 = 0

    subscript(_ c: Zone.Clock) -> Int64? {
        get { present & (1 << c.rawValue) != 0 ? values[c.rawValue] : nil }
        set {
            if let v = newValue {
                values[c.rawValue] = v
                present |= 1 << c.rawValue
            } else {
                present &= ~(1 << c.rawValue)
            }
        }
    }

    /// The clocks that have an age.
    var clocks: [Zone.Clock] { Zone.Clock.allCases.filter { self[$0] != nil } }
}
