package dev.sessionpolicy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a machine document ({@code sessionpolicy-machine/1}): a port of the Swift engine's
 * {@code MachineDocument.read}, with the same checks in the same order, each refusal its first
 * problem as a located diagnostic.
 */
final class MachineReader {
    static final String FORMAT = "sessionpolicy-machine/1";
    /**
     * Every code a machine document can be refused with (docs/machine-format.md, "What the reader
     * refuses"): the JSON reader's, then this reader's. {@code VocabularyTest} holds it against
     * spec/vocabulary.json and against the codes {@code JsonSyntax} and this class write.
     */
    static final List<String> REFUSAL_CODES = Collections.unmodifiableList(Arrays.asList("invalid-json", "invalid-utf8",
        "unsupported-encoding", "input-too-large", "nesting-too-deep", "too-many-nodes", "duplicate-key", "empty-document",
        "wrong-type", "missing-key", "unknown-key", "invalid-value", "unsupported-format", "digest-mismatch",
        "inconsistent-machine"));
    static final List<String> DOCUMENT_KEYS = Arrays.asList("format", "digest", "name", "description", "source", "states", "events",
            "transitions", "rules", "attributes", "trusted_apps", "reveal_refusal", "scopes", "levers");

    private MachineReader() {}

    private static SessionPolicyException fail(JsonNode n, String code, String message) {
        return fail(n, code, message, null);
    }

    private static SessionPolicyException fail(JsonNode n, String code, String message, String help) {
        return JsonSyntax.error(code, message, help, n.line, n.column);
    }

    /** The members of an object with exactly {@code keys}: every key required, no other. */
    private static Map<String, JsonNode> object(JsonNode n, String what, List<String> keys) throws SessionPolicyException {
        if (n.kind != JsonNode.MAPPING) throw fail(n, "wrong-type", what + " must be an object, found " + n.shapeName());
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (int i = 0; i < n.keys.size(); i++) {
            JsonNode k = n.keys.get(i);
            if (!keys.contains(k.text)) throw fail(k, "unknown-key", "unknown key `" + k.text + "` in " + what, "known keys: " + String.join(", ", keys));
            out.put(k.text, n.items.get(i));
        }
        for (String k : keys) {
            if (!out.containsKey(k)) {
                throw fail(n, "missing-key", what + " has no `" + k + "`", "every key of " + what + " is written, `null` where it has no value");
            }
        }
        return out;
    }

    private static Map<String, JsonNode> object(JsonNode n, String what, String... keys) throws SessionPolicyException {
        return object(n, what, Arrays.asList(keys));
    }

    private static String string(JsonNode n, String what) throws SessionPolicyException {
        if (n.kind != JsonNode.SCALAR || n.plain) throw fail(n, "wrong-type", what + " must be a string, found " + n.shapeName());
        return n.text;
    }

    private static String optionalString(JsonNode n, String what) throws SessionPolicyException {
        return n.isNull() ? null : string(n, what);
    }

    private static long integer(JsonNode n, String what) throws SessionPolicyException {
        if (n.kind != JsonNode.SCALAR || !n.plain || !Text.isInteger(n.text)) {
            throw fail(n, "wrong-type", what + " must be an integer, found " + (n.kind == JsonNode.SCALAR && !n.isNull() ? "`" + n.text + "`" : n.shapeName()));
        }
        return Text.integerValue(n.text);
    }

    private static boolean bool(JsonNode n, String what) throws SessionPolicyException {
        if (n.kind != JsonNode.SCALAR || !n.plain || !(n.text.equals("true") || n.text.equals("false"))) {
            throw fail(n, "wrong-type", what + " must be `true` or `false`");
        }
        return n.text.equals("true");
    }

    private static List<JsonNode> array(JsonNode n, String what) throws SessionPolicyException {
        if (n.kind != JsonNode.SEQUENCE) throw fail(n, "wrong-type", what + " must be a list, found " + n.shapeName());
        return n.items;
    }

    private static SessionPolicyException unknownWord(JsonNode n, String what, String s) {
        return fail(n, "invalid-value", "unknown " + what + " `" + s + "`");
    }

    private static MachineState machineState(JsonNode n, String what) throws SessionPolicyException {
        String s = string(n, what);
        MachineState v = MachineState.fromWireName(s);
        if (v == null) throw unknownWord(n, what, s);
        return v;
    }

    private static EventKind eventKind(JsonNode n, String what) throws SessionPolicyException {
        String s = string(n, what);
        EventKind v = EventKind.fromWireName(s);
        if (v == null) throw unknownWord(n, what, s);
        return v;
    }

    private static AuthMode authMode(JsonNode n) throws SessionPolicyException {
        String s = string(n, "auth mode");
        AuthMode v = AuthMode.fromWireName(s);
        if (v == null) throw unknownWord(n, "auth mode", s);
        return v;
    }

    private static Scope scope(JsonNode n) throws SessionPolicyException {
        String s = string(n, "scope");
        Scope v = Scope.fromWireName(s);
        if (v == null) throw unknownWord(n, "scope", s);
        return v;
    }

    private static long nonNegative(JsonNode n, String what) throws SessionPolicyException {
        long v = integer(n, what);
        if (v < 0) throw fail(n, "invalid-value", what + " cannot be negative");
        return v;
    }

    /** The longest duration a policy may set, in seconds (36,600 days): Swift's {@code TimeSpan.maximum}. */
    private static final long MAX_SPAN_SECONDS = 100L * 366 * 86_400;

    /** A duration in seconds: not negative and at most 36,600 days, as a policy's are. */
    private static long seconds(JsonNode n, String what) throws SessionPolicyException {
        long v = nonNegative(n, what);
        if (v > MAX_SPAN_SECONDS) {
            throw fail(n, "invalid-value", what + " is " + v + " seconds, more than the longest duration a policy may set (36600 days)");
        }
        return v;
    }

    static PolicyMachine read(byte[] bytes) throws SessionPolicyException {
        JsonNode root = JsonSyntax.parse(bytes);
        if (root == null) {
            throw JsonSyntax.error("empty-document", "the machine document is empty",
                    "write one with `policyctl compile POLICY --format machine`", 1, 1);
        }
        if (root.kind != JsonNode.MAPPING) throw fail(root, "wrong-type", "a machine document must be an object, found " + root.shapeName());
        // The format first: a document of another version is refused whatever else it holds.
        JsonNode formatNode = root.get("format");
        if (formatNode == null) {
            throw fail(root, "missing-key", "the document has no `format`", "a machine document starts `{\"format\":\"" + FORMAT + "\"`");
        }
        String given = string(formatNode, "`format`");
        if (!given.equals(FORMAT)) {
            throw fail(formatNode, "unsupported-format", "this engine reads `" + FORMAT + "`, not `" + given + "`",
                    "compile the policy again with this version's `policyctl compile --format machine`");
        }
        Map<String, JsonNode> m = object(root, "the machine document", DOCUMENT_KEYS);
        String digestGiven = string(m.get("digest"), "`digest`");
        @SuppressWarnings("unchecked")
        Map<String, Object> received = (Map<String, Object>) Canonical.fromNode(root);
        received.remove("digest");
        // The canonical text of the document without its digest: what the digest is taken of.
        String body = Canonical.write(received);
        String digestFound = "sha256:" + Canonical.sha256Hex(body.getBytes(StandardCharsets.UTF_8));
        if (!digestGiven.equals(digestFound)) {
            throw fail(m.get("digest"), "digest-mismatch", "the document's digest is `" + digestGiven + "`, its content's `" + digestFound + "`",
                    "the document was changed after it was written, or arrived incomplete: fetch or compile it again");
        }
        String source = optionalString(m.get("source"), "`source`");
        // The vocabulary is this engine's: a machine that names another is not one it can run.
        List<JsonNode> states = array(m.get("states"), "`states`");
        List<String> stateNames = new ArrayList<>();
        for (JsonNode s : states) stateNames.add(string(s, "a state"));
        List<String> ownStates = new ArrayList<>();
        for (MachineState s : MachineState.values()) ownStates.add(s.wireName());
        if (!stateNames.equals(ownStates)) {
            throw fail(m.get("states"), "inconsistent-machine", "the machine's states are not this engine's",
                    "this engine has " + String.join(", ", ownStates));
        }
        List<JsonNode> events = array(m.get("events"), "`events`");
        List<String> eventNames = new ArrayList<>();
        for (JsonNode e : events) eventNames.add(string(e, "an event"));
        List<String> ownEvents = new ArrayList<>();
        for (EventKind e : EventKind.values()) ownEvents.add(e.wireName());
        if (!eventNames.equals(ownEvents)) {
            throw fail(m.get("events"), "inconsistent-machine", "the machine's events are not this engine's",
                    "this engine has " + String.join(", ", ownEvents));
        }
        List<Attribute> attributes = new ArrayList<>();
        for (JsonNode a : array(m.get("attributes"), "`attributes`")) attributes.add(attribute(a));
        List<Rule> rules = new ArrayList<>();
        for (JsonNode r : array(m.get("rules"), "`rules`")) rules.add(rule(r, attributes));
        List<JsonNode> transitionNodes = array(m.get("transitions"), "`transitions`");
        int count = transitionNodes.size();
        Guard[] guards = new Guard[count];
        Action[] actions = new Action[count];
        MachineState[] from = new MachineState[count];
        EventKind[] on = new EventKind[count];
        String[][] levers = new String[count][];
        long[][] locations = new long[count][];
        for (int i = 0; i < count; i++) {
            Map<String, JsonNode> t = object(transitionNodes.get(i), "a transition", "id", "from", "event", "guard", "action", "levers", "location");
            long id = integer(t.get("id"), "`id`");
            if (id != i) {
                throw fail(t.get("id"), "inconsistent-machine", "transition " + i + " has id " + id, "ids are the positions in `transitions`, from 0");
            }
            guards[i] = guard(t.get("guard"), rules.size());
            from[i] = machineState(t.get("from"), "state");
            on[i] = eventKind(t.get("event"), "event");
            actions[i] = action(t.get("action"));
            List<JsonNode> ls = array(t.get("levers"), "`levers`");
            levers[i] = new String[ls.size()];
            for (int k = 0; k < ls.size(); k++) levers[i][k] = string(ls.get(k), "a lever");
            locations[i] = location(t.get("location"));
        }
        Map<String, JsonNode> scopes = object(m.get("scopes"), "`scopes`", "none", "none_hardware", "biometric", "biometric_hardware");
        JsonNode leverNode = m.get("levers");
        if (leverNode.kind != JsonNode.MAPPING) throw fail(leverNode, "wrong-type", "`levers` must be an object");
        Map<String, long[]> leverLocations = new LinkedHashMap<>();
        for (int i = 0; i < leverNode.keys.size(); i++) {
            long[] l = location(leverNode.items.get(i));
            // A lever without a location is not kept, as in the Swift engine (so the write-back differs).
            if (l == null) leverLocations.remove(leverNode.keys.get(i).text);
            else leverLocations.put(leverNode.keys.get(i).text, l);
        }
        String name = string(m.get("name"), "`name`");
        String description = optionalString(m.get("description"), "`description`");
        List<JsonNode> apps = array(m.get("trusted_apps"), "`trusted_apps`");
        String[] trusted = new String[apps.size()];
        for (int i = 0; i < trusted.length; i++) trusted[i] = string(apps.get(i), "an app id");
        boolean reveal = bool(m.get("reveal_refusal"), "`reveal_refusal`");
        Scope[] scopeTable = {scope(scopes.get("none")), scope(scopes.get("none_hardware")), scope(scopes.get("biometric")),
            scope(scopes.get("biometric_hardware"))};

        // Grouped by (state, event) in the engine's order, each group ending in `always`: else
        // some event would fall through, or be decided by another transition than written.
        int groups = MachineState.values().length * EventKind.values().length;
        int[] start = new int[groups + 1];
        int previous = -1;
        for (int i = 0; i < count; i++) {
            int key = from[i].ordinal() * EventKind.values().length + on[i].ordinal();
            if (key < previous) {
                throw fail(transitionNodes.get(i), "inconsistent-machine", "transition " + i + " is out of order",
                        "transitions are grouped by state, then event, in the order of `states` and `events`");
            }
            previous = key;
        }
        int t = 0;
        for (int key = 0; key < groups; key++) {
            start[key] = t;
            while (t < count && from[t].ordinal() * EventKind.values().length + on[t].ordinal() == key) t++;
        }
        start[groups] = count;
        for (MachineState s : MachineState.values()) {
            for (EventKind e : EventKind.values()) {
                int key = s.ordinal() * EventKind.values().length + e.ordinal();
                if (start[key + 1] == start[key] || guards[start[key + 1] - 1].kind != Guard.ALWAYS) {
                    throw fail(m.get("transitions"), "inconsistent-machine",
                            "no transition decides `" + e.wireName() + "` in `" + s.wireName() + "` whatever the facts",
                            "every (state, event) group ends with a transition whose guard is `always`");
                }
            }
        }
        PolicyMachine machine = new PolicyMachine(name, description, source, guards, actions, from, on, levers, locations,
                rules.toArray(new Rule[0]), attributes.toArray(new Attribute[0]), trusted, reveal, scopeTable, leverLocations, start,
                digestFound);
        // Written back, the machine must be the document: else this engine read something other
        // than what was written (a member it does not keep, a list in another order). Comparing
        // the texts without the digest is enough: equal texts have equal digests.
        if (!Canonical.write(machine.canonicalBody()).equals(body)) {
            throw fail(root, "inconsistent-machine", "the document is not the machine this engine reads from it",
                    "write the document with `policyctl compile --format machine`; do not edit it by hand");
        }
        return machine;
    }

    private static long[] location(JsonNode n) throws SessionPolicyException {
        if (n.isNull()) return null;
        Map<String, JsonNode> l = object(n, "a location", "line", "column");
        return new long[] {integer(l.get("line"), "`line`"), integer(l.get("column"), "`column`")};
    }

    private static Action action(JsonNode n) throws SessionPolicyException {
        Map<String, JsonNode> a = object(n, "an action", "decision", "reason", "message", "target", "effects", "notices", "names_scope",
                "uses_previous_auth_mode", "notice_delay_seconds");
        String targetName = string(a.get("target"), "`target`");
        int target;
        if (targetName.equals("resting")) target = Action.RESTING;
        else if (targetName.equals("unchanged")) target = Action.UNCHANGED;
        else target = machineState(a.get("target"), "target state").ordinal();
        int effects = 0;
        for (JsonNode e : array(a.get("effects"), "`effects`")) {
            String name = string(e, "an effect");
            int bit = Arrays.asList(Action.EFFECTS).indexOf(name);
            if (bit < 0) throw fail(e, "invalid-value", "unknown effect `" + name + "`");
            effects |= 1 << bit;
        }
        int notices = 0;
        for (JsonNode x : array(a.get("notices"), "`notices`")) {
            String name = string(x, "a notice");
            Notice notice = Notice.fromWireName(name);
            if (notice == null) throw fail(x, "invalid-value", "unknown notice `" + name + "`");
            notices |= notice.bit();
        }
        JsonNode delay = a.get("notice_delay_seconds");
        Decision decision = null;
        if (!a.get("decision").isNull()) {
            String s = string(a.get("decision"), "decision");
            decision = Decision.fromWireName(s);
            if (decision == null) throw unknownWord(a.get("decision"), "decision", s);
        }
        String reason = string(a.get("reason"), "`reason`");
        boolean namesScope = bool(a.get("names_scope"), "`names_scope`");
        boolean usesPrevious = bool(a.get("uses_previous_auth_mode"), "`uses_previous_auth_mode`");
        long delaySeconds = delay.isNull() ? -1 : seconds(delay, "`notice_delay_seconds`");
        String message = string(a.get("message"), "`message`");
        return new Action(decision, reason, message, target, effects, notices, namesScope, usesPrevious, delaySeconds);
    }

    private static Guard guard(JsonNode n, int rules) throws SessionPolicyException {
        JsonNode kindNode = n.get("kind");
        if (n.kind != JsonNode.MAPPING || kindNode == null) throw fail(n, "wrong-type", "a guard must be an object with a `kind`");
        String kind = string(kindNode, "a guard's `kind`");
        int k = Arrays.asList(Guard.NAMES).indexOf(kind);
        if (k < 0) {
            throw fail(kindNode, "invalid-value", "unknown guard `" + kind + "`", "this engine reads the guards of `" + FORMAT + "` (docs/machine-format.md)");
        }
        String what = "guard `" + kind + "`";
        switch (k) {
            case Guard.CLOCK_ROLLED_BACK:
                return Guard.span(k, seconds(object(n, what, "kind", "tolerance_seconds").get("tolerance_seconds"), "`tolerance_seconds`"));
            case Guard.SESSION_MAX_EXCEEDED:
            case Guard.IDLE_EXCEEDED:
            case Guard.OFFLINE_WINDOW_EXCEEDED:
                return Guard.span(k, seconds(object(n, what, "kind", "limit_seconds").get("limit_seconds"), "`limit_seconds`"));
            case Guard.AUTH_MODE_NOT_OFFLINE: {
                int modes = 0;
                for (JsonNode x : array(object(n, what, "kind", "modes").get("modes"), "`modes`")) modes |= 1 << authMode(x).ordinal();
                return Guard.notOffline(modes);
            }
            case Guard.AUTH_MODE_IS:
                return Guard.authModeIs(authMode(object(n, what, "kind", "mode").get("mode")));
            case Guard.FAILURE_LIMIT_REACHED: {
                Map<String, JsonNode> g = object(n, what, "kind", "path", "limit");
                String pathName = string(g.get("path"), "`path`");
                int path = Arrays.asList(Guard.PATHS).indexOf(pathName);
                if (path < 0) throw fail(g.get("path"), "invalid-value", "unknown failure path `" + pathName + "`");
                long limit = integer(g.get("limit"), "`limit`");
                if (limit < 1 || limit > Integer.MAX_VALUE) throw fail(g.get("limit"), "invalid-value", "`limit` must be at least 1");
                return Guard.failureLimit(path, limit);
            }
            case Guard.REFRESH_CAUSE: {
                JsonNode c = object(n, what, "kind", "cause").get("cause");
                String s = string(c, "refresh failure cause");
                RefreshFailureCause cause = RefreshFailureCause.fromWireName(s);
                if (cause == null) throw unknownWord(c, "refresh failure cause", s);
                return Guard.refreshCause(cause);
            }
            case Guard.RULE_FACT_MISSING:
            case Guard.RULE: {
                JsonNode node = object(n, what, "kind", "rule").get("rule");
                long i = integer(node, "`rule`");
                if (i < 0 || i >= rules) throw fail(node, "inconsistent-machine", what + " names rule " + i + ", which does not exist");
                return Guard.rule(k, (int) i);
            }
            case Guard.SWITCHED: {
                Map<String, JsonNode> g = object(n, what, "kind", "switch", "inner");
                String name = string(g.get("switch"), "`switch`");
                int s = Arrays.asList(Guard.SWITCHES).indexOf(name);
                if (s < 0) throw fail(g.get("switch"), "invalid-value", "unknown switch `" + name + "`");
                Guard inner = guard(g.get("inner"), rules);
                if (inner.kind == Guard.SWITCHED) throw fail(g.get("inner"), "inconsistent-machine", "a switched guard cannot hold another");
                return Guard.switched(s, inner);
            }
            default:
                object(n, what, "kind");
                return Guard.simple(k);
        }
    }

    private static Attribute attribute(JsonNode n) throws SessionPolicyException {
        Map<String, JsonNode> a = object(n, "an attribute", "name", "type");
        JsonNode type = a.get("type");
        JsonNode k = type.get("kind");
        if (type.kind != JsonNode.MAPPING || k == null) throw fail(type, "wrong-type", "an attribute's `type` must be an object with a `kind`");
        String kind = string(k, "`kind`");
        int t = Arrays.asList(Attribute.KINDS).indexOf(kind);
        String[] words = null;
        if (t == Attribute.WORDS) {
            List<JsonNode> ws = array(object(type, "type `words`", "kind", "words").get("words"), "`words`");
            words = new String[ws.size()];
            for (int i = 0; i < words.length; i++) words[i] = string(ws.get(i), "a word");
        } else if (t > 0) {
            object(type, "type `" + kind + "`", "kind");
        } else {
            throw fail(k, "invalid-value", "unknown attribute type `" + kind + "`");
        }
        return new Attribute(string(a.get("name"), "`name`"), t, words);
    }

    private static Rule rule(JsonNode n, List<Attribute> attributes) throws SessionPolicyException {
        Map<String, JsonNode> r = object(n, "a rule", "name", "on", "condition", "text");
        String name = string(r.get("name"), "`name`");
        List<JsonNode> on = array(r.get("on"), "`on`");
        EventKind[] events = new EventKind[on.size()];
        for (int i = 0; i < events.length; i++) events[i] = eventKind(on.get(i), "event");
        Condition condition = condition(r.get("condition"), attributes);
        return new Rule(name, events, condition, string(r.get("text"), "`text`"));
    }

    private static Condition condition(JsonNode n, List<Attribute> attributes) throws SessionPolicyException {
        JsonNode opNode = n.get("op");
        if (n.kind != JsonNode.MAPPING || opNode == null) throw fail(n, "wrong-type", "a condition must be an object with an `op`");
        String op = string(opNode, "`op`");
        String factKey = n.get("attribute") != null ? "attribute" : "fact";
        switch (op) {
            case "one_of": {
                Map<String, JsonNode> c = object(n, "condition `one_of`", "op", factKey, "values", "negated");
                int fact = fact(c, attributes);
                List<JsonNode> vs = array(c.get("values"), "`values`");
                String[] values = new String[vs.size()];
                for (int i = 0; i < values.length; i++) values[i] = string(vs.get(i), "a value");
                boolean negated = bool(c.get("negated"), "`negated`");
                return new Condition(Condition.ONE_OF, fact, attributeName(c), values, negated, 0, 0, null, null, null);
            }
            case "compare": {
                Map<String, JsonNode> c = object(n, "condition `compare`", "op", factKey, "comparison", "value");
                int fact = fact(c, attributes);
                int comparison = comparison(c.get("comparison"));
                long value = integer(c.get("value"), "`value`");
                return new Condition(Condition.COMPARE, fact, attributeName(c), null, false, comparison, value, null, null, null);
            }
            case "compare_version": {
                Map<String, JsonNode> c = object(n, "condition `compare_version`", "op", factKey, "comparison", "value");
                String text = string(c.get("value"), "`value`");
                long[] version = Versions.parse(text);
                if (version == null) throw fail(c.get("value"), "invalid-value", "`" + text + "` is not a version");
                int fact = fact(c, attributes);
                int comparison = comparison(c.get("comparison"));
                return new Condition(Condition.COMPARE_VERSION, fact, attributeName(c), null, false, comparison, 0, version, null, null);
            }
            case "and":
            case "or": {
                Map<String, JsonNode> c = object(n, "condition `" + op + "`", "op", "left", "right");
                Condition l = condition(c.get("left"), attributes);
                Condition r = condition(c.get("right"), attributes);
                return new Condition(op.equals("and") ? Condition.AND : Condition.OR, 0, null, null, false, 0, 0, null, l, r);
            }
            case "not": {
                Condition operand = condition(object(n, "condition `not`", "op", "operand").get("operand"), attributes);
                return new Condition(Condition.NOT, 0, null, null, false, 0, 0, null, operand, null);
            }
            default:
                throw fail(opNode, "invalid-value", "unknown condition `" + op + "`", "one of one_of, compare, compare_version, and, or, not");
        }
    }

    private static String attributeName(Map<String, JsonNode> c) {
        JsonNode a = c.get("attribute");
        return a == null ? null : a.text;
    }

    /** A built-in fact's index, or -1 for a declared attribute. */
    private static int fact(Map<String, JsonNode> c, List<Attribute> attributes) throws SessionPolicyException {
        JsonNode a = c.get("attribute");
        if (a != null) {
            String name = string(a, "`attribute`");
            for (Attribute x : attributes) {
                if (Text.same(x.name, name)) return -1;
            }
            throw fail(a, "inconsistent-machine", "the condition reads attribute `" + name + "`, which the machine does not declare");
        }
        String name = string(c.get("fact"), "`fact`");
        int i = Arrays.asList(Condition.FACTS).indexOf(name);
        if (i < 0) throw fail(c.get("fact"), "invalid-value", "unknown fact `" + name + "`");
        return i;
    }

    private static int comparison(JsonNode node) throws SessionPolicyException {
        String s = string(node, "`comparison`");
        int i = Arrays.asList(Condition.COMPARISONS).indexOf(s);
        if (i < 0) throw fail(node, "invalid-value", "unknown comparison `" + s + "`");
        return i;
    }
}
