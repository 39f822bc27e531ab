import CLibYAML
import SessionPolicy

/// One pass over the events of the system's libyaml (`yaml_parser_parse`), building the located
/// tree as they arrive. Each node is counted against the bounds at its own event (the node
/// budget, the nesting limit), and what the files this tool reads never hold is refused there
/// too: an anchor or an alias, a key that is a list or a mapping, a key written twice in one
/// mapping, a second document. The first problem in reading order stops the reading, so memory
/// never holds more than the part of the tree read so far (at most `limits.nodes` nodes, at most
/// `limits.depth` open collections) and libyaml's own buffers, bounded by the input's size.
///
/// libyaml's marks give the positions: 1-based here, lines counted at each line break, columns
/// in Unicode scalars (libyaml counts one per character, whatever its UTF-8 width).
struct YAMLEventReader {
    let file: String
    let limits: InputLimits
    /// Nodes met so far: each scalar, alias, list and mapping.
    private var nodes = 0
    /// Documents started so far.
    private var documents = 0
    /// The collections open around the next node, innermost last.
    private var open: [Collection] = []
    /// The finished root.
    private var root: SyntaxNode?
    /// The root is an empty plain scalar (a document of only markers, `---` or `...`): no value.
    private var rootIsEmpty = false

    /// A list or a mapping being read.
    struct Collection {
        let location: SourceLocation
        let isMapping: Bool
        var items: [SyntaxNode] = []
        var pairs: [(key: SyntaxNode, value: SyntaxNode)] = []
        /// A mapping's key whose value is being read.
        var key: SyntaxNode?
        /// Where each key of a large mapping was written (built at its `indexedFrom`th key).
        var index: [String: SourceLocation] = [:]

        /// True when the next node is a mapping's key.
        var expectsKey: Bool { isMapping && key == nil }
    }

    /// What reading one event leads to.
    enum Step {
        case next
        case done(SyntaxNode?)
        case refused(Diagnostic)
    }

    /// Reads the UTF-8 text `input` (no byte-order mark, no control characters: `YAMLSyntax`
    /// checks both first) as one YAML document.
    static func read(_ input: UnsafeBufferPointer<UInt8>, file: String, limits: InputLimits) -> Result<SyntaxNode?, DiagnosticError> {
        guard let start = input.baseAddress, input.count > 0 else { return .success(nil) }
        // On the heap: libyaml keeps a pointer to its parser (the string reader's data).
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) == 1 else {
            return .failure(DiagnosticError([YAMLSyntaxError.unreadable(file: file)]))
        }
        defer { yaml_parser_delete(parser) }
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(parser, start, input.count)
        var reader = YAMLEventReader(file: file, limits: limits)
        var event = yaml_event_t()
        while true {
            guard yaml_parser_parse(parser, &event) == 1 else {
                // libyaml allocates nothing in an event it fails to produce.
                return .failure(DiagnosticError([YAMLSyntaxError.diagnostic(parser.pointee, input: input, file: file)]))
            }
            let step = reader.consume(event)
            yaml_event_delete(&event)
            switch step {
            case .next: continue
            case let .done(node): return .success(node)
            case let .refused(problem): return .failure(DiagnosticError([problem]))
            }
        }
    }

    init(file: String, limits: InputLimits) {
        self.file = file
        self.limits = limits
    }

    /// True when the next node is a mapping's key.
    var nextIsKey: Bool {
        guard let top = open.indices.last else { return false }
        return open[top].expectsKey
    }

    func location(_ mark: yaml_mark_t) -> SourceLocation {
        SourceLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    /// Takes one event; what it holds is copied out, so the caller may delete it next.
    mutating func consume(_ event: yaml_event_t) -> Step {
        switch event.type {
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            guard documents == 1 else {
                return .refused(
                    .error(
                        .multipleDocuments, "a second YAML document starts here; a policy or scenario file holds one",
                        at: location(event.start_mark),
                        help: "remove this `---` line and what follows it, or put each document in a file of its own"))
            }
            return .next
        case YAML_STREAM_END_EVENT:
            return .done(rootIsEmpty ? nil : root)
        case YAML_ALIAS_EVENT:
            let at = location(event.start_mark)
            return .refused(admit(at, anchored: false) ?? Self.anchorRefused(at))
        case YAML_SCALAR_EVENT:
            return scalar(event)
        case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
            let isMapping = event.type == YAML_MAPPING_START_EVENT
            let at = location(event.start_mark)
            let anchor = isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor
            if let problem = admit(at, anchored: anchor != nil) { return .refused(problem) }
            if nextIsKey {
                return .refused(
                    .error(
                        .wrongType, "keys must be plain words, found \(isMapping ? "a mapping" : "a list")", at: at,
                        help: "YAML allows a list or a mapping as a key (`? [a, b]`); policies and scenario files use words"))
            }
            open.append(Collection(location: at, isMapping: isMapping))
            return .next
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            guard let done = open.popLast() else { return .next }
            return attach(SyntaxNode(done.isMapping ? .mapping(done.pairs) : .sequence(done.items), at: done.location))
        default:
            // The stream's start, a document's end.
            return .next
        }
    }

    /// Counts a node that starts at `at` against the budget and the nesting limit, and refuses
    /// an anchored one: the problem, or nil.
    mutating func admit(_ at: SourceLocation, anchored: Bool) -> Diagnostic? {
        nodes += 1
        if nodes > limits.nodes {
            return .error(.tooManyNodes, "the document has more than \(limits.nodes) values", at: at, help: limits.hint)
        }
        // The root is at depth 1; each open collection adds one.
        if open.count + 1 > limits.depth {
            return .error(
                .nestingTooDeep, "values are nested more than \(limits.depth) levels deep", at: at,
                help: "policies and scenarios need only a few levels")
        }
        return anchored ? Self.anchorRefused(at) : nil
    }

    static func anchorRefused(_ at: SourceLocation) -> Diagnostic {
        .error(
            .yamlAnchor, "anchors and aliases (`&name`, `*name`) are not supported", at: at,
            help: "write the value out in full; expanding aliases could make a small file enormous")
    }

    mutating func scalar(_ event: yaml_event_t) -> Step {
        let s = event.data.scalar
        let at = location(event.start_mark)
        if let problem = admit(at, anchored: s.anchor != nil) { return .refused(problem) }
        var bytes = UnsafeBufferPointer(start: s.value, count: s.length)
        // A byte-order mark that starts a scalar (libyaml skips one only at the start of a line)
        // is dropped, as the earlier reader's UTF-8 decoding dropped it: it is invisible in an
        // editor, and a key that starts with one would be an unknown key no one can see.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            bytes = UnsafeBufferPointer(rebasing: bytes[3...])
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let plainStyle = s.style == YAML_PLAIN_SCALAR_STYLE
        let tag = s.tag.map { String(cString: $0) }
        let plain: Bool
        if nextIsKey {
            // Keys are names, read as text (as the JSON reader reads them); only a plain key with
            // an explicit tag other than `!` or `!!str` stays typed.
            plain = plainStyle && tag.map { $0 != "!" && !$0.hasSuffix(":str") } ?? false
        } else {
            // Unquoted and not tagged `!!str`: `null`, `true` and numbers keep their type.
            plain = plainStyle && !(tag?.hasSuffix(":str") ?? false)
        }
        if open.isEmpty { rootIsEmpty = plainStyle && text.isEmpty }
        return attach(SyntaxNode(.scalar(text, isPlain: plain), at: at))
    }

    /// Adds a finished node to the collection around it (or makes it the root); a mapping's key
    /// is checked against the keys before it.
    mutating func attach(_ node: SyntaxNode) -> Step {
        guard !open.isEmpty else {
            root = node
            return .next
        }
        let top = open.count - 1
        guard open[top].isMapping else {
            open[top].items.append(node)
            return .next
        }
        if let key = open[top].key {
            open[top].pairs.append((key, node))
            open[top].key = nil
            return .next
        }
        let name = node.scalar ?? ""
        if let first = open[top].firstWritten(name) {
            return .refused(
                .error(
                    .duplicateKey, "key `\(name)` appears twice in the same mapping", at: node.location,
                    notes: ["first written at \(first)"], help: "keep one of the two; YAML does not allow duplicate keys"))
        }
        open[top].key = node
        if !open[top].index.isEmpty { open[top].index[name] = node.location }
        return .next
    }
}

extension YAMLEventReader.Collection {
    /// Mappings with this many keys or more are searched through an index, so that checking a
    /// large mapping's keys stays linear in its size.
    static let indexedFrom = 16

    /// Where `name` was first written as a key of this mapping, or nil.
    mutating func firstWritten(_ name: String) -> SourceLocation? {
        if pairs.count < Self.indexedFrom { return pairs.first { $0.key.scalar == name }?.key.location }
        if index.isEmpty {
            for pair in pairs { index[pair.key.scalar ?? ""] = pair.key.location }
        }
        return index[name]
    }
}
