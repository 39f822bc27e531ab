/// The condition language of `rules:`: comparisons, `in`, `and`/`or`/`not` and parentheses
/// over session facts, event context and declared attributes.
///
/// ```
/// license == revoked and event in [launch, resume]
/// elapsed.since_online > 3d or not (device.keystore == hardware)
/// app_version < "2.4.0"
/// ```
package indirect enum Expression: Sendable, Equatable {
    /// A name: a fact (`elapsed.since_online`), an attribute (`license`) or a word (`revoked`).
    case name(String, offset: Int)
    /// A double-quoted string.
    case string(String, offset: Int)
    /// A whole number.
    case integer(Int, offset: Int)
    /// A duration such as `7d`.
    case duration(TimeSpan, offset: Int)
    /// `true` or `false`.
    case boolean(Bool, offset: Int)
    /// `[a, b, c]`.
    case list([Expression], offset: Int)
    case compare(Expression, Comparison, Expression, offset: Int)
    case and(Expression, Expression)
    case or(Expression, Expression)
    case not(Expression, offset: Int)

    /// The comparison operators.
    package enum Comparison: String, Sendable, Equatable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case isIn = "in"
    }

    /// Where the expression starts, in Unicode scalars from the start of the condition text.
    package var offset: Int {
        switch self {
        case let .name(_, o), let .string(_, o), let .integer(_, o), let .duration(_, o), let .boolean(_, o), let .list(_, o),
            let .compare(_, _, _, o), let .not(_, o):
            return o
        case let .and(a, _), let .or(a, _):
            return a.offset
        }
    }
}

/// A problem in a condition: a message, where (offset in the text), and a hint.
package struct ExpressionError: Error, Sendable, Equatable {
    package var code: DiagnosticCode
    package var message: String
    package var offset: Int
    package var help: String?
}

/// Parses condition text into an `Expression`.
package struct ExpressionParser {
    enum Token: Equatable {
        case word(String)
        case string(String)
        case number(String)
        case op(String)
        case open, close, openBracket, closeBracket, comma
        case end
    }

    var tokens: [(Token, Int)] = []
    var position = 0

    /// Parses `text`; the error's offset counts Unicode scalars from the start of `text`.
    package static func parse(_ text: String) -> Result<Expression, ExpressionError> {
        var p = ExpressionParser()
        if let e = p.tokenize(text) { return .failure(e) }
        do {
            let e = try p.parseOr()
            if case let (t, o) = p.peek, t != .end {
                return .failure(
                    ExpressionError(
                        code: .invalidExpression, message: "unexpected \(Self.describe(t)) in condition", offset: o,
                        help: "join conditions with `and` or `or`"))
            }
            return .success(e)
        } catch let e as ExpressionError {
            return .failure(e)
        } catch {
            return .failure(ExpressionError(code: .invalidExpression, message: "cannot read condition", offset: 0))
        }
    }

    static func describe(_ t: Token) -> String {
        switch t {
        case let .word(w): return "`\(w)`"
        case let .string(s): return "`\"\(s)\"`"
        case let .number(n): return "`\(n)`"
        case let .op(o): return "`\(o)`"
        case .open: return "`(`"
        case .close: return "`)`"
        case .openBracket: return "`[`"
        case .closeBracket: return "`]`"
        case .comma: return "`,`"
        case .end: return "the end of the condition"
        }
    }

    mutating func tokenize(_ text: String) -> ExpressionError? {
        let s = Array(text.unicodeScalars)
        var i = 0
        func isWord(_ c: Unicode.Scalar) -> Bool {
            c.properties.isAlphabetic || c == "_" || c == "." || c == "-" || ("0"..."9").contains(c)
        }
        while i < s.count {
            let c = s[i]
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                i += 1
                continue
            }
            let start = i
            switch c {
            case "(": tokens.append((.open, i)); i += 1
            case ")": tokens.append((.close, i)); i += 1
            case "[": tokens.append((.openBracket, i)); i += 1
            case "]": tokens.append((.closeBracket, i)); i += 1
            case ",": tokens.append((.comma, i)); i += 1
            case "\"":
                i += 1
                var value = ""
                while i < s.count, s[i] != "\"" {
                    value.unicodeScalars.append(s[i])
                    i += 1
                }
                if i >= s.count {
                    return ExpressionError(
                        code: .invalidExpression, message: "unterminated string in condition", offset: start,
                        help: "close the string with `\"`")
                }
                i += 1
                tokens.append((.string(value), start))
            case "=", "!", "<", ">":
                var op = String(c)
                if i + 1 < s.count, s[i + 1] == "=" { op.append("=") }
                if op == "=" || op == "!" {
                    return ExpressionError(
                        code: .invalidExpression, message: "unknown operator `\(op)` in condition", offset: start,
                        help: op == "=" ? "compare with `==`" : "write `!=`, or `not` before a condition")
                }
                tokens.append((.op(op), start))
                i += op.unicodeScalars.count
            default:
                guard isWord(c) else {
                    return ExpressionError(
                        code: .invalidExpression, message: "unexpected character `\(c)` in condition", offset: start,
                        help: "conditions use names, words, numbers, durations, \"strings\", lists and == != < <= > >= in and or not")
                }
                var w = ""
                while i < s.count, isWord(s[i]) {
                    w.unicodeScalars.append(s[i])
                    i += 1
                }
                tokens.append((("0"..."9").contains(c) ? .number(w) : .word(w), start))
            }
        }
        tokens.append((.end, s.count))
        return nil
    }

    var peek: (Token, Int) { tokens[min(position, tokens.count - 1)] }

    mutating func next() -> (Token, Int) {
        let t = peek
        position += 1
        return t
    }

    mutating func parseOr() throws -> Expression {
        var left = try parseAnd()
        while case (.word("or"), _) = peek {
            _ = next()
            left = .or(left, try parseAnd())
        }
        return left
    }

    mutating func parseAnd() throws -> Expression {
        var left = try parseNot()
        while case (.word("and"), _) = peek {
            _ = next()
            left = .and(left, try parseNot())
        }
        return left
    }

    mutating func parseNot() throws -> Expression {
        if case let (.word("not"), o) = peek {
            _ = next()
            return .not(try parseNot(), offset: o)
        }
        return try parseComparison()
    }

    mutating func parseComparison() throws -> Expression {
        let left = try parsePrimary()
        let (t, _) = peek
        var op: Expression.Comparison?
        if case let .op(o) = t { op = Expression.Comparison(rawValue: o) }
        if case .word("in") = t { op = .isIn }
        guard let op else { return left }
        _ = next()
        let right = try parsePrimary()
        return .compare(left, op, right, offset: left.offset)
    }

    mutating func parsePrimary() throws -> Expression {
        let (t, o) = next()
        switch t {
        case .open:
            let e = try parseOr()
            guard case (.close, _) = next() else {
                throw ExpressionError(code: .invalidExpression, message: "missing `)` in condition", offset: o, help: "close the `(`")
            }
            return e
        case .openBracket:
            var items: [Expression] = []
            if case (.closeBracket, _) = peek {
                _ = next()
                return .list([], offset: o)
            }
            while true {
                items.append(try parsePrimary())
                let (sep, so) = next()
                if sep == .closeBracket { break }
                guard sep == .comma else {
                    throw ExpressionError(
                        code: .invalidExpression, message: "expected `,` or `]` in list, found \(Self.describe(sep))",
                        offset: so)
                }
            }
            return .list(items, offset: o)
        case let .string(s):
            return .string(s, offset: o)
        case let .number(n):
            if let v = Int(n) { return .integer(v, offset: o) }
            if Version(n) != nil { return .string(n, offset: o) }  // 2.4.0: a version, typed by its context
            if case let .success(d) = TimeSpan.parse(n) { return .duration(d, offset: o) }
            throw ExpressionError(
                code: .invalidExpression, message: "`\(n)` is neither a number nor a duration", offset: o,
                help: "write a whole number, or a duration such as `7d`")
        case let .word(w):
            if ["and", "or", "in"].contains(w) {
                throw ExpressionError(code: .invalidExpression, message: "expected a value before `\(w)`", offset: o)
            }
            if w == "true" || w == "false" { return .boolean(w == "true", offset: o) }
            return .name(w, offset: o)
        default:
            throw ExpressionError(code: .invalidExpression, message: "expected a value, found \(Self.describe(t))", offset: o)
        }
    }
}
