import Foundation
import SessionPolicyTestSupport

/// `docs/openapi.yaml`, read so tests can hold the server to it: its operations, what each
/// response looks like, and a validator for response bodies.
///
/// The document is read with the repository's own YAML reader (`YAMLSyntax.parse`, through
/// `JSONValue.yaml`: strict, no anchors), and its schemas are converted to the draft-07 JSON
/// Schema that `SessionPolicyTestSupport.JSONSchema` validates:
/// - `nullable: true` becomes a type union with `"null"` (and adds `null` to an `enum`);
/// - `#/components/schemas/Name` becomes `#/definitions/Name`, every component schema being a
///   definition of each converted schema, so `$ref`s resolve as the validator walks;
/// - the annotations `format` and `example` are dropped.
///
/// Any other keyword is kept; `unsupportedKeywords()` lists those the validator would ignore.
struct OpenAPIDocument: Sendable {
    /// One operation: an HTTP method and a path template.
    struct Operation: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The method, upper case (`GET`).
        var method: String
        /// The path template with `{name}` parameters (`/v1/policies/{policy}/evaluate`).
        var path: String

        /// Creates an operation. The method is upper-cased, and router-style `:name`
        /// parameters become `{name}`, so `("get", "/v1/policies/:policy")` and
        /// `("GET", "/v1/policies/{policy}")` are the same operation.
        init(_ method: String, _ path: String) {
            self.method = method.uppercased()
            self.path = path.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                .joined(separator: "/")
        }

        var description: String { "\(method) \(path)" }

        static func < (a: Operation, b: Operation) -> Bool { (a.path, a.method) < (b.path, b.method) }
    }

    /// What the document says about one response of an operation.
    struct Response: Sendable {
        /// The response's description.
        var description: String
        /// The headers it declares (`Retry-After`), as written, sorted.
        var headers: [String]
        /// The body's schema by media type (`application/json`, `text/plain`); empty when the
        /// response has no body.
        var content: [String: JSONSchema]
    }

    /// A document that cannot be used.
    struct Problem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The document as read (`$ref`s not followed).
    let document: JSONValue
    /// `components.schemas`, converted to JSON Schema, by name.
    let definitions: [String: JSONValue]

    /// The repository's `docs/openapi.yaml`.
    static let defaultPath: String = Fixtures.path("docs/openapi.yaml")

    /// Reads a document, the repository's by default.
    static func load(path: String = defaultPath) throws -> OpenAPIDocument {
        try OpenAPIDocument(text: String(contentsOfFile: path, encoding: .utf8), file: path)
    }

    /// Reads a document's text. Throws the YAML reader's `DiagnosticError` for text that does
    /// not read, or a `Problem` for a document that is not OpenAPI 3.0.
    init(text: String, file: String = "openapi.yaml") throws {
        guard let document = try JSONValue.yaml(text, file: file), case .object = document else {
            throw Problem("\(file): the document is not a mapping")
        }
        guard let version = document["openapi"]?.string, version.hasPrefix("3.0.") else {
            throw Problem("\(file): `openapi` is not a 3.0.x version")
        }
        self.document = document
        var definitions: [String: JSONValue] = [:]
        if case let .object(schemas)? = document["components"]?["schemas"] {
            for (name, schema) in schemas { definitions[name] = Self.jsonSchema(schema) }
        }
        self.definitions = definitions
    }

    // MARK: Operations

    /// The methods a path item may hold.
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// Every operation in `paths`.
    var operations: Set<Operation> {
        guard case let .object(paths)? = document["paths"] else { return [] }
        var out: Set<Operation> = []
        for (path, item) in paths {
            let item = resolve(item)
            for method in Self.methods where item[method] != nil { out.insert(Operation(method, path)) }
        }
        return out
    }

    /// The operation object of `operation`, or nil if the document does not have it.
    func operationObject(_ operation: Operation) -> JSONValue? {
        guard let item = document["paths"]?[operation.path] else { return nil }
        return resolve(item)[operation.method.lowercased()]
    }

    /// The status codes the document lists for `operation`, sorted.
    func statuses(of operation: Operation) -> [Int] {
        guard let responses = operationObject(operation)?["responses"] else { return [] }
        return responses.keys.compactMap { Int($0) }.sorted()
    }

    /// The security schemes `operation` accepts (`bearerAuth`, `poolSecret`); empty when it
    /// needs no authentication.
    func security(of operation: Operation) -> Set<String> {
        let requirements = operationObject(operation)?["security"] ?? document["security"]
        return Set((requirements?.items ?? []).flatMap(\.keys))
    }

    /// What the document says about the response of `operation` with `status`, or nil if it
    /// does not list that status.
    func response(_ operation: Operation, status: Int) -> Response? {
        guard let listed = operationObject(operation)?["responses"]?[String(status)] else { return nil }
        let response = resolve(listed)
        var content: [String: JSONSchema] = [:]
        if case let .object(media)? = response["content"] {
            for (type, object) in media {
                if let s = object["schema"] { content[type] = schema(s) }
            }
        }
        return Response(
            description: response["description"]?.string ?? "",
            headers: (response["headers"]?.keys ?? []).sorted(),
            content: content)
    }

    /// The schema of the response of `operation` with `status` and `contentType`; nil when
    /// the document lists no such response or it has no body.
    func responseSchema(_ operation: Operation, status: Int, contentType: String = "application/json") -> JSONSchema? {
        response(operation, status: status)?.content[contentType]
    }

    /// The schema of `operation`'s request body, if it has one.
    func requestSchema(_ operation: Operation, contentType: String = "application/json") -> JSONSchema? {
        guard let body = operationObject(operation)?["requestBody"] else { return nil }
        guard let s = resolve(body)["content"]?[contentType]?["schema"] else { return nil }
        return schema(s)
    }

    /// The component schema `name` (`#/components/schemas/name`), or nil if there is none.
    func schema(named name: String) -> JSONSchema? {
        definitions[name] == nil ? nil : schema(.object(["$ref": .string("#/components/schemas/\(name)")]))
    }

    // MARK: Validation

    /// Every problem with `json` (what `JSONSerialization` returns) by `schema`, one line
    /// each, with the JSON path where it is (`outcome.state.user: ...`; `(document)` for the
    /// top); empty when it is valid. Supports what the document uses: `type`, `properties`,
    /// `required`, `additionalProperties`, `items`, `enum`, `nullable`, `pattern`, `minimum`,
    /// `minItems`, `oneOf`, `anyOf`, `allOf`, `$ref`.
    static func validate(json: Any, against schema: JSONSchema) -> [String] {
        schema.validate(JSONValue(json: json))
    }

    /// Everything wrong with one reply of `operation` by the document, one line each: a
    /// status the document does not list, a declared header missing from `headers` (names,
    /// any case; not checked when nil), a body where the document has none, a content type
    /// it does not list, or a body that does not match its schema. Empty when the reply is as
    /// documented. `application/json` bodies are parsed as JSON; other bodies are strings.
    func problems(
        _ operation: Operation, status: Int, contentType: String?, body: String, headers: Set<String>? = nil
    ) -> [String] {
        let here = "\(operation) \(status)"
        guard operationObject(operation) != nil else { return ["\(operation): not in the document"] }
        guard let documented = response(operation, status: status) else {
            return ["\(here): the document does not list this status (it lists \(statuses(of: operation)))"]
        }
        var found: [String] = []
        if let headers {
            let present = Set(headers.map { $0.lowercased() })
            for name in documented.headers where !present.contains(name.lowercased()) {
                found.append("\(here): no `\(name)` header")
            }
        }
        if documented.content.isEmpty {
            if !body.isEmpty { found.append("\(here): a body where the document has none") }
            return found
        }
        // `text/plain; version=0.0.4; charset=utf-8` is `text/plain`.
        let type = (contentType ?? "").prefix(while: { $0 != ";" }).trimmingCharacters(in: .whitespaces).lowercased()
        guard let bodySchema = documented.content[type] else {
            return found + ["\(here): content type `\(contentType ?? "")` is not one of \(documented.content.keys.sorted())"]
        }
        let value: JSONValue
        if type == "application/json" {
            guard let json = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]) else {
                return found + ["\(here): the body is not JSON: \(body.prefix(200))"]
            }
            value = JSONValue(json: json)
        } else {
            value = .string(body)
        }
        return found + bodySchema.validate(value).map { "\(here): \($0)" }
    }

    /// Keywords used by the document's schemas (components, request and response bodies) that
    /// the validator does not implement, with where: they would be silently ignored, so a test
    /// should require this to be empty.
    func unsupportedKeywords() -> [String] {
        // Each converted schema carries the definitions: check them once, and each body's own schema.
        func own(_ s: JSONSchema) -> JSONValue {
            guard case var .object(o) = s.root else { return s.root }
            o["definitions"] = nil
            return .object(o)
        }
        var all = definitions
        for operation in operations.sorted() {
            if let s = requestSchema(operation) { all["\(operation) request"] = own(s) }
            for status in statuses(of: operation) {
                for (type, s) in response(operation, status: status)?.content ?? [:] {
                    all["\(operation) \(status) \(type)"] = own(s)
                }
            }
        }
        return JSONSchema(root: .object(["definitions": .object(all)])).unsupportedKeywords()
    }

    // MARK: Conversion

    /// `value` with its `$ref` (a JSON pointer into this document) followed, repeatedly.
    func resolve(_ value: JSONValue) -> JSONValue {
        JSONSchema(root: document).resolved(value)
    }

    /// A JSON Schema of `openAPISchema` (a schema object of this document), with the
    /// document's component schemas as its definitions.
    func schema(_ openAPISchema: JSONValue) -> JSONSchema {
        var root: [String: JSONValue]
        switch Self.jsonSchema(openAPISchema) {
        case let .object(o): root = o
        case let other: root = ["allOf": .array([other])]
        }
        root["definitions"] = .object(definitions)
        return JSONSchema(root: .object(root))
    }

    /// Annotations dropped in conversion (the validator would flag them as unsupported).
    static let annotations: Set<String> = ["format", "example"]

    /// One OpenAPI 3.0 schema object as a draft-07 JSON Schema (see the type's documentation).
    static func jsonSchema(_ schema: JSONValue) -> JSONValue {
        guard case var .object(o) = schema else { return schema }
        for key in annotations { o[key] = nil }
        if let ref = o["$ref"]?.string {
            o["$ref"] = .string(ref.replacingOccurrences(of: "#/components/schemas/", with: "#/definitions/"))
        }
        if case let .object(properties)? = o["properties"] {
            o["properties"] = .object(properties.mapValues(jsonSchema))
        }
        for key in ["items", "additionalProperties", "not"] {
            if let sub = o[key] { o[key] = jsonSchema(sub) }
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if case let .array(subs)? = o[key] { o[key] = .array(subs.map(jsonSchema)) }
        }
        var nullable = false
        if case .bool(true)? = o["nullable"] { nullable = true }
        o["nullable"] = nil
        guard nullable else { return .object(o) }
        guard let type = o["type"]?.string else {
            // No `type` to extend (a `$ref`, an `allOf`): null or the schema.
            return .object(["anyOf": .array([.object(o), .object(["type": .string("null")])])])
        }
        o["type"] = .array([.string(type), .string("null")])
        if case let .array(options)? = o["enum"], !options.contains(.null) { o["enum"] = .array(options + [.null]) }
        return .object(o)
    }
}
