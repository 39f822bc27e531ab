import Foundation
package import SessionPolicy
import SessionPolicyYAML

/// A JSON-like value: a JSON document, or a YAML document typed the way editors with YAML
/// language support type it (YAML 1.2 core schema: plain `true`, `12`, `null` are typed; quoted
/// scalars and everything else are strings).
public enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Converts located syntax. Plain scalars are typed; quoted ones stay strings.
    package init(_ node: SyntaxNode) {
        switch node.kind {
        case let .scalar(text, isPlain):
            self = isPlain ? Self.plain(text) : .string(text)
        case let .sequence(items):
            self = .array(items.map(JSONValue.init))
        case let .mapping(pairs):
            var object: [String: JSONValue] = [:]
            for (key, value) in pairs { object[key.scalar ?? "<\(key.shapeName) as a key>"] = JSONValue(value) }
            self = .object(object)
        }
    }

    /// Converts what `JSONSerialization` returns.
    public init(json: Any) {
        switch json {
        case is NSNull:
            self = .null
        case let n as NSNumber:
            // Booleans are NSNumbers too (on every platform); their type code is `c`.
            if String(cString: n.objCType) == "c" {
                self = .bool(n.boolValue)
            } else if let i = Int(exactly: n.doubleValue), !["d", "f"].contains(String(cString: n.objCType)) {
                self = .int(i)
            } else {
                self = .double(n.doubleValue)
            }
        case let s as String:
            self = .string(s)
        case let a as [Any]:
            self = .array(a.map(JSONValue.init(json:)))
        case let o as [String: Any]:
            self = .object(o.mapValues(JSONValue.init(json:)))
        default:
            self = .string("\(json)")
        }
    }

    /// Parses YAML (or JSON) text. Nil for an empty document.
    public static func yaml(_ text: String, file: String = "test.yaml") throws -> JSONValue? {
        try YAMLSyntax.parse(text, file: file).get().map(JSONValue.init)
    }

    /// A plain YAML scalar, typed by the YAML 1.2 core schema (the null and boolean words are
    /// the ones `SyntaxNode` and `SyntaxReader` accept).
    static func plain(_ text: String) -> JSONValue {
        if ["", "~", "null", "Null", "NULL"].contains(text) { return .null }
        if ["true", "True", "TRUE"].contains(text) { return .bool(true) }
        if ["false", "False", "FALSE"].contains(text) { return .bool(false) }
        if let i = Int(text) { return .int(i) }
        if text.range(of: #"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$"#, options: .regularExpression) != nil,
            let d = Double(text)
        {
            return .double(d)
        }
        return .string(text)
    }

    /// The value for `key` of an object.
    public subscript(_ key: String) -> JSONValue? {
        if case let .object(o) = self { return o[key] }
        return nil
    }

    /// The keys of an object (empty for anything else).
    public var keys: Set<String> {
        if case let .object(o) = self { return Set(o.keys) }
        return []
    }

    /// The items of an array (empty for anything else).
    public var items: [JSONValue] {
        if case let .array(a) = self { return a }
        return []
    }

    /// The text of a string.
    public var string: String? {
        if case let .string(s) = self { return s }
        return nil
    }

    /// The value as a number, for integers and numbers.
    var number: Double? {
        switch self {
        case let .int(i): return Double(i)
        case let .double(d): return d
        default: return nil
        }
    }

    /// Compact JSON text, keys sorted.
    public var description: String {
        switch self {
        case .null: return "null"
        case let .bool(b): return b ? "true" : "false"
        case let .int(i): return String(i)
        case let .double(d): return String(d)
        case let .string(s):
            let data = try? JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
            let text = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"\(s)\"]"
            return String(text.dropFirst().dropLast())
        case let .array(a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
        case let .object(o):
            return "{" + o.keys.sorted().map { "\(JSONValue.string($0)): \(o[$0]!)" }.joined(separator: ", ") + "}"
        }
    }

    /// Equality as JSON Schema sees it: `1` and `1.0` are the same number.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default:
            if let a = lhs.number, let b = rhs.number { return a == b }
            return false
        }
    }
}

/// A JSON Schema (draft-07), with a validator for the subset of keywords the shipped schemas
/// use. A keyword outside the subset would be silently ignored, so `unsupportedKeywords()`
/// lists any the schema uses; tests require it to be empty.
public struct JSONSchema: Sendable {
    /// The whole schema document.
    public let root: JSONValue

    /// Wraps a schema document.
    public init(root: JSONValue) { self.root = root }

    /// Reads a schema file with `JSONSerialization`.
    public init(contentsOfFile path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        root = JSONValue(json: try JSONSerialization.jsonObject(with: data))
    }

    /// The keywords `validate` implements, and the annotations it may ignore.
    public static let supportedKeywords: Set<String> = [
        "$schema", "$id", "$comment", "title", "description", "default", "examples", "definitions", "$defs",
        "$ref", "type", "enum", "const", "pattern", "minimum", "maximum", "items", "minItems", "properties", "additionalProperties",
        "required", "oneOf", "anyOf", "allOf", "not", "if", "then", "else",
    ]

    /// Keywords used anywhere in the schema that the validator does not implement, with where.
    public func unsupportedKeywords() -> [String] {
        var found: [String] = []
        func walk(_ schema: JSONValue, _ at: String) {
            guard case let .object(o) = schema else { return }
            for key in o.keys.sorted() where !Self.supportedKeywords.contains(key) { found.append("\(at)/\(key)") }
            for key in ["properties", "definitions", "$defs"] {
                guard case let .object(subschemas)? = o[key] else { continue }
                for name in subschemas.keys.sorted() { walk(subschemas[name]!, "\(at)/\(key)/\(name)") }
            }
            for key in ["items", "additionalProperties", "not", "if", "then", "else"] { if let sub = o[key] { walk(sub, "\(at)/\(key)") } }
            for key in ["oneOf", "anyOf", "allOf"] {
                for (i, sub) in (o[key]?.items ?? []).enumerated() { walk(sub, "\(at)/\(key)/\(i)") }
            }
        }
        walk(root, "#")
        return found
    }

    /// The schema a `$ref` (`#/definitions/name`, `#/$defs/name` or any JSON pointer into this
    /// document) points at.
    public func target(of ref: String) -> JSONValue? {
        guard ref.hasPrefix("#") else { return nil }
        var node = root
        for token in ref.dropFirst().split(separator: "/") {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if case let .array(a) = node, let i = Int(key), a.indices.contains(i) {
                node = a[i]
            } else if let next = node[key] {
                node = next
            } else {
                return nil
            }
        }
        return node
    }

    /// `schema` with its `$ref`s followed (siblings of a `$ref` are dropped).
    public func resolved(_ schema: JSONValue) -> JSONValue {
        var s = schema
        var hops = 0
        while let ref = s["$ref"]?.string, let next = target(of: ref), hops < 32 {
            s = next
            hops += 1
        }
        return s
    }

    /// The subschema at `path`, a list of keys (`["properties", "session"]`); a `$ref` on the
    /// way is followed when the key is not next to it.
    public func subschema(_ path: String...) -> JSONValue? {
        var node = root
        for key in path {
            if let next = node[key] {
                node = next
            } else if let next = resolved(node)[key] {
                node = next
            } else {
                return nil
            }
        }
        return node
    }

    /// Every problem with `value`, one line each (`scenarios[0].steps[1].event: ...`); empty
    /// when the value is valid.
    public func validate(_ value: JSONValue) -> [String] {
        validate(value, against: root, at: "")
    }

    func validate(_ value: JSONValue, against schema: JSONValue, at path: String) -> [String] {
        let here = path.isEmpty ? "(document)" : path
        switch schema {
        case .bool(true): return []
        case .bool(false): return ["\(here): no value is allowed here"]
        case .object: break
        default: return ["\(here): the schema is not a schema: \(schema)"]
        }
        var errors: [String] = []
        if let ref = schema["$ref"]?.string {
            if let target = target(of: ref) {
                errors += validate(value, against: target, at: path)
            } else {
                errors.append("\(here): the schema's `$ref` \(ref) points nowhere")
            }
        }
        if let type = schema["type"] {
            let names = type.string.map { [$0] } ?? type.items.compactMap(\.string)
            if !names.contains(where: { Self.has(value, type: $0) }) {
                errors.append("\(here): expected \(names.joined(separator: " or ")), found \(value)")
                return errors  // the other keywords would only repeat the problem
            }
        }
        if let options = schema["enum"], !options.items.contains(value) {
            errors.append("\(here): \(value) is not one of \(options)")
        }
        if let constant = schema["const"], constant != value {
            errors.append("\(here): expected \(constant), found \(value)")
        }
        if case let .string(text) = value, let pattern = schema["pattern"]?.string {
            if (try? NSRegularExpression(pattern: pattern))?.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil {
                errors.append("\(here): \(value) does not match \(pattern)")
            }
        }
        if let n = value.number, let minimum = schema["minimum"]?.number, n < minimum {
            errors.append("\(here): \(value) is less than the minimum \(schema["minimum"]!)")
        }
        if let n = value.number, let maximum = schema["maximum"]?.number, n > maximum {
            errors.append("\(here): \(value) is more than the maximum \(schema["maximum"]!)")
        }
        if case let .array(items) = value {
            if let min = schema["minItems"]?.number, Double(items.count) < min {
                errors.append("\(here): needs at least \(schema["minItems"]!) items, found \(items.count)")
            }
            if let itemSchema = schema["items"] {
                for (i, item) in items.enumerated() { errors += validate(item, against: itemSchema, at: "\(path)[\(i)]") }
            }
        }
        if case let .object(object) = value {
            let properties = schema["properties"]
            for key in object.keys.sorted() {
                let sub = path.isEmpty ? key : "\(path).\(key)"
                if let p = properties?[key] {
                    errors += validate(object[key]!, against: p, at: sub)
                } else if let extra = schema["additionalProperties"] {
                    if extra == .bool(false) {
                        errors.append("\(here): unknown key `\(key)`")
                    } else {
                        errors += validate(object[key]!, against: extra, at: sub)
                    }
                }
            }
            for key in schema["required"]?.items.compactMap(\.string) ?? [] where object[key] == nil {
                errors.append("\(here): missing key `\(key)`")
            }
        }
        if let all = schema["allOf"] {
            for sub in all.items { errors += validate(value, against: sub, at: path) }
        }
        if let any = schema["anyOf"] {
            let results = any.items.map { validate(value, against: $0, at: path) }
            if !results.contains(where: \.isEmpty) {
                errors.append("\(here): matches none of the alternatives (\(results.map { $0.first ?? "" }.joined(separator: "; ")))")
            }
        }
        if let one = schema["oneOf"] {
            let results = one.items.map { validate(value, against: $0, at: path) }
            let matches = results.filter(\.isEmpty).count
            if matches == 0 {
                errors.append("\(here): matches none of the alternatives (\(results.map { $0.first ?? "" }.joined(separator: "; ")))")
            } else if matches > 1 {
                errors.append("\(here): matches \(matches) alternatives of a `oneOf`, not exactly one")
            }
        }
        if let not = schema["not"], validate(value, against: not, at: path).isEmpty {
            errors.append("\(here): matches a schema it must not match")
        }
        if let condition = schema["if"] {
            let branch = validate(value, against: condition, at: path).isEmpty ? schema["then"] : schema["else"]
            if let branch { errors += validate(value, against: branch, at: path) }
        }
        return errors
    }

    static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("integer", .int), ("number", .int), ("number", .double): return true
        case let ("integer", .double(d)): return d == d.rounded(.towardZero)
        default: return false
        }
    }
}
