import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyVerify
import SessionPolicyYAML

struct Compile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compile a policy and print its state machine.",
        discussion: """
            Formats: text (a table of states, events and guards in the order they are tried), \
            json, machine (the portable machine document, sessionpolicy-machine/1, canonical, with \
            its SHA-256 digest: what an app or another runtime loads; docs/machine-format.md), \
            dot (Graphviz) and mermaid. The output is deterministic.
            dot and mermaid draw a summary: one arrow per pair of states and decision, labelled \
            with the decision and the events (with the guards that pick it); the events that stay \
            in a state are written in it; the checks and answers alike in every state they apply \
            in (device compromised, another device or user, clock set back, an unexpected event, \
            a missing fact, server signals, logout) once, from `any state`. --full draws every \
            transition instead. --state, --event and --lever draw only part of the machine (together, \
            what all of them keep). They draw only what can happen: verify's exploration finds the \
            reachable transitions, and the dead ones (no sequence and timing of events takes them) \
            are left out, with the states only they touch, and counted in the legend; --show-dead \
            draws them grey and dotted instead. Where the exploration stops at its limit, every \
            transition is drawn and the legend says so.
            Exit codes: 0 compiled; 2 invalid policy; 64 usage error.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, machine, dot, mermaid
    }

    @Argument(help: "The policy file.")
    var policy: String

    @Option(help: "Output format: text, json, machine, dot or mermaid.")
    var format: Format = .text

    @Option(help: ArgumentHelp("Draw only the transitions from or to this state (dot, mermaid).", valueName: "state"))
    var state: String?

    @Option(help: ArgumentHelp("Draw only the transitions on this event (dot, mermaid).", valueName: "event"))
    var event: String?

    @Option(
        help: ArgumentHelp(
            "Draw only the transitions that name this lever, a policy key such as offline.window (dot, mermaid).",
            valueName: "lever"))
    var lever: String?

    @Flag(help: "Draw every transition as its own edge, not the summary (dot, mermaid).")
    var full = false

    @Flag(help: "Also draw the transitions that cannot happen, grey and dotted (dot, mermaid).")
    var showDead = false

    func validate() throws {
        if format == .text || format == .json || format == .machine {
            let given = [
                ("--state", state != nil), ("--event", event != nil), ("--lever", lever != nil), ("--full", full),
                ("--show-dead", showDead),
            ]
            if let (name, _) = given.first(where: \.1) {
                throw ValidationError("`\(name)` applies to `--format dot` and `--format mermaid`, not `--format \(format.rawValue)`")
            }
        }
        if let state, MachineState(rawValue: state) == nil {
            throw ValidationError(Self.unknown("state", state, among: MachineState.allCases.map(\.rawValue)))
        }
        if let event, EventKind(rawValue: event) == nil {
            throw ValidationError(Self.unknown("event", event, among: EventKind.allCases.map(\.rawValue)))
        }
        // The levers are the policy's: a policy that does not load is reported by `run`, exit 2.
        if let lever, case let .success(loaded) = PolicyFile.load(policy), !loaded.compiled.machine.levers.contains(lever) {
            let machine = loaded.compiled.machine
            throw ValidationError(Self.unknown("lever", lever, among: machine.levers, in: machine.name))
        }
    }

    /// "unknown state `x` (did you mean `y`?); the states are a, b", or for a lever "policy `p`
    /// has no lever `x` ...; its levers are ...": a focus that names nothing.
    static func unknown(_ what: String, _ value: String, among valid: [String], in policy: String? = nil) -> String {
        let hint = Suggestion.closest(to: value, in: valid).map { " (did you mean `\($0)`?)" } ?? ""
        let list = valid.joined(separator: ", ")
        if let policy { return "policy `\(policy)` has no \(what) `\(value)`\(hint); its \(what)s are \(list)" }
        return "unknown \(what) `\(value)`\(hint); the \(what)s are \(list)"
    }

    func run() throws {
        switch PolicyFile.load(policy) {
        case let .failure(e):
            let text = SourceFile.quotable(policy) ?? ""
            emit(e.diagnostics, sources: [policy: text], json: format == .json)
            throw Exit.invalidInput
        case let .success(loaded):
            emit(loaded.warnings, sources: [policy: loaded.text], json: false)
            let machine = loaded.compiled.machine
            var picture = PictureOptions(
                state: state.flatMap(MachineState.init(rawValue:)), event: event.flatMap(EventKind.init(rawValue:)), lever: lever,
                full: full, showDead: showDead)
            if format == .dot || format == .mermaid {
                picture.live = Verifier.reachableTransitions(loaded.compiled)
                picture.reachabilityUnknown = picture.live == nil
            }
            switch format {
            case .text: print(machine.renderText(), terminator: "")
            case .json: print(machine.renderJSON(), terminator: "")
            case .machine: print(loaded.compiled.machineDocument)
            case .dot: print(machine.renderDot(picture), terminator: "")
            case .mermaid: print(machine.renderMermaid(picture), terminator: "")
            }
        }
    }
}
