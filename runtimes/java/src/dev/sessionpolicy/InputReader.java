package dev.sessionpolicy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The strict reader of session states and events: a port of the Swift engine's
 * {@code SyntaxReader.sessionState} and {@code event}, collecting a diagnostic for every
 * problem in the same order, so that the first code is the Swift engine's.
 */
final class InputReader {
    static final List<String> STATE_KEYS = Arrays.asList("state", "user", "device", "auth_mode", "last_idp_login", "last_online",
            "last_activity", "highest_time", "failures", "read_only", "biometric_locked");
    static final List<String> FAILURE_KEYS = Arrays.asList("biometric", "offline_login", "idp_login");
    static final List<String> EVENT_KEYS = Arrays.asList("type", "time", "network", "user", "device", "auth_mode", "cause",
            "unsynced_items", "attributes", "app_id");
    static final List<String> DEVICE_KEYS = Arrays.asList("id", "keystore", "integrity");

    private final List<Diagnostic> diagnostics = new ArrayList<>();

    private InputReader() {}

    static SessionState readState(byte[] bytes) throws SessionPolicyException {
        JsonNode root = root(bytes);
        InputReader r = new InputReader();
        MutableSessionState s = r.sessionState(root);
        r.finish(s, root);
        return s.toState();
    }

    static Event readEvent(byte[] bytes) throws SessionPolicyException {
        JsonNode root = root(bytes);
        InputReader r = new InputReader();
        Event e = r.event(root);
        r.finish(e, root);
        return e;
    }

    private static JsonNode root(byte[] bytes) throws SessionPolicyException {
        JsonNode root = JsonSyntax.parse(bytes);
        if (root == null) throw JsonSyntax.error("empty-document", "the input is empty", "give a JSON object", 1, 1);
        return root;
    }

    private void finish(Object value, JsonNode root) throws SessionPolicyException {
        if (value != null && diagnostics.isEmpty()) return;
        if (diagnostics.isEmpty()) diagnostics.add(new Diagnostic("invalid-value", "the input is not valid", null, root.line, root.column));
        throw new SessionPolicyException(diagnostics);
    }

    private void error(String code, String message, JsonNode at, String help) {
        diagnostics.add(new Diagnostic(code, message, help, at.line, at.column));
    }

    // ---- shapes ----

    /** A mapping whose keys must be among {@code allowed}; null (reported) if not a mapping. */
    private JsonNode fields(JsonNode node, String path, List<String> allowed) {
        if (node.kind != JsonNode.MAPPING) {
            error("wrong-type", (path.isEmpty() ? "the document" : "`" + path + "`") + " must be a mapping, found " + node.shapeName(), node, null);
            return null;
        }
        for (JsonNode key : node.keys) {
            if (!allowed.contains(key.text)) {
                error("unknown-key", "unknown key `" + key.text + "` " + (path.isEmpty() ? "at the top level" : "in `" + path + "`"), key,
                        "known keys: " + String.join(", ", allowed));
            }
        }
        return node;
    }

    private JsonNode require(JsonNode f, String path, String key) {
        JsonNode v = f.get(key);
        if (v == null) error("missing-key", "missing key `" + key + "` " + (path.isEmpty() ? "at the top level" : "in `" + path + "`"), f, null);
        return v;
    }

    private static String path(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    // ---- scalars ----

    private String scalarText(JsonNode node, String path, String expected) {
        if (node.kind != JsonNode.SCALAR || node.isNull()) {
            error("wrong-type", "`" + path + "` must be " + expected + ", found " + node.shapeName(), node, null);
            return null;
        }
        return node.text;
    }

    private String string(JsonNode node, String path) {
        return scalarText(node, path, "a string");
    }

    private String name(JsonNode node, String path) {
        // An unquoted literal (true, false, a number) is not a name (SyntaxReader.name).
        if (node.plain && !node.isNull()) {
            error("wrong-type", "`" + path + "` must be a string, found `" + node.text + "`", node, null);
            return null;
        }
        String s = string(node, path);
        if (s == null) return null;
        if (!Text.isName(s)) {
            error("invalid-value", "`" + path + "` must be a non-empty name without surrounding spaces", node, null);
            return null;
        }
        return s;
    }

    /** An integer; {@code ok[0]} tells whether there was one. */
    private long integer(JsonNode node, String path, boolean[] ok) {
        ok[0] = false;
        String text = scalarText(node, path, "an integer");
        if (text == null) return 0;
        if (!node.plain || !Text.isInteger(text)) {
            error("wrong-type", "`" + path + "` must be an integer, found " + (node.plain ? "`" + text + "`" : "a string, `\"" + text + "\"`"), node, null);
            return 0;
        }
        ok[0] = true;
        return Text.integerValue(text);
    }

    private Boolean bool(JsonNode node, String path) {
        String text = scalarText(node, path, "`true` or `false`");
        if (text == null) return null;
        if (node.plain && text.equals("true")) return Boolean.TRUE;
        if (node.plain && text.equals("false")) return Boolean.FALSE;
        error("wrong-type", "`" + path + "` must be `true` or `false`", node, "write `true` or `false`, without quotes");
        return null;
    }

    private long time(JsonNode node, String path) {
        String text = scalarText(node, path, "a time such as `2026-03-01T09:00:00Z`");
        if (text == null) return MutableSessionState.NONE;
        if (!text.isEmpty() && (text.charAt(0) == '+' || text.charAt(0) == '-')) {
            error("invalid-time", "`" + path + "` must be an absolute time, found `" + text + "`", node,
                    "write an RFC 3339 time such as `2026-03-01T09:00:00Z`");
            return MutableSessionState.NONE;
        }
        long t = Timestamp.parseMillis(text);
        if (t == Long.MIN_VALUE) {
            error("invalid-time", "`" + text + "` is not a valid time", node, "write an RFC 3339 time such as `2026-03-01T09:00:00Z`");
            return MutableSessionState.NONE;
        }
        return t;
    }

    private String keywordText(JsonNode node, String path) {
        return scalarText(node, path, "a word");
    }

    private void badWord(JsonNode node, String path, String text) {
        error("invalid-value", "`" + path + "` cannot be `" + text + "`", node, null);
    }

    private MachineState machineState(JsonNode node, String path) {
        String t = keywordText(node, path);
        if (t == null) return null;
        MachineState v = MachineState.fromWireName(t);
        if (v == null) badWord(node, path, t);
        return v;
    }

    private AuthMode authMode(JsonNode node, String path) {
        String t = keywordText(node, path);
        if (t == null) return null;
        AuthMode v = AuthMode.fromWireName(t);
        if (v == null) badWord(node, path, t);
        return v;
    }

    private EventKind eventKind(JsonNode node, String path) {
        String t = keywordText(node, path);
        if (t == null) return null;
        EventKind v = EventKind.fromWireName(t);
        if (v == null) badWord(node, path, t);
        return v;
    }

    private Network network(JsonNode node, String path) {
        String t = keywordText(node, path);
        if (t == null) return null;
        Network v = Network.fromWireName(t);
        if (v == null) badWord(node, path, t);
        return v;
    }

    private RefreshFailureCause cause(JsonNode node, String path) {
        String t = keywordText(node, path);
        if (t == null) return null;
        RefreshFailureCause v = RefreshFailureCause.fromWireName(t);
        if (v == null) badWord(node, path, t);
        return v;
    }

    private Keystore keystore(JsonNode node, String path) {
        String t = keywordText(node, path);
        if (t == null) return null;
        Keystore v = Keystore.fromWireName(t);
        if (v == null) badWord(node, path, t);
        return v;
    }

    private Integrity integrity(JsonNode node, String path) {
        String t = keywordText(node, path);
        if (t == null) return null;
        Integrity v = Integrity.fromWireName(t);
        if (v == null) badWord(node, path, t);
        return v;
    }

    // ---- a session state ----

    private MutableSessionState sessionState(JsonNode node) {
        JsonNode f = fields(node, "", STATE_KEYS);
        if (f == null) return null;
        int before = diagnostics.size();
        MutableSessionState s = new MutableSessionState();
        JsonNode v = require(f, "", "state");
        if (v != null) {
            MachineState st = machineState(v, "state");
            s.state = st == null ? MachineState.SIGNED_OUT : st;
        }
        if ((v = f.get("user")) != null) s.user = name(v, "user");
        if ((v = f.get("device")) != null) s.device = name(v, "device");
        if ((v = f.get("auth_mode")) != null) s.authMode = authMode(v, "auth_mode");
        if ((v = f.get("last_idp_login")) != null) s.lastIdpLogin = time(v, "last_idp_login");
        if ((v = f.get("last_online")) != null) s.lastOnline = time(v, "last_online");
        if ((v = f.get("last_activity")) != null) s.lastActivity = time(v, "last_activity");
        if ((v = f.get("highest_time")) != null) s.highestTime = time(v, "highest_time");
        if ((v = f.get("read_only")) != null) {
            Boolean b = bool(v, "read_only");
            s.readOnly = b != null && b;
        }
        if ((v = f.get("biometric_locked")) != null) {
            Boolean b = bool(v, "biometric_locked");
            s.biometricLocked = b != null && b;
        }
        if ((v = f.get("failures")) != null) {
            JsonNode ff = fields(v, "failures", FAILURE_KEYS);
            if (ff != null) {
                s.biometricFailures = count(ff, "biometric");
                s.offlineLoginFailures = count(ff, "offline_login");
                s.idpLoginFailures = count(ff, "idp_login");
            }
        }
        return diagnostics.size() == before ? s : null;
    }

    private long count(JsonNode ff, String key) {
        JsonNode n = ff.get(key);
        if (n == null) return 0;
        boolean[] ok = new boolean[1];
        long c = integer(n, "failures." + key, ok);
        if (!ok[0]) return 0;
        if (c < 0) {
            error("invalid-value", "`failures." + key + "` cannot be negative", n, null);
            return 0;
        }
        return c;
    }

    // ---- an event ----

    private Event event(JsonNode node) {
        JsonNode f = fields(node, "", EVENT_KEYS);
        if (f == null) return null;
        int before = diagnostics.size();
        JsonNode k = require(f, "", "type");
        EventKind kind = k == null ? null : eventKind(k, "type");
        JsonNode t = require(f, "", "time");
        long time = t == null ? MutableSessionState.NONE : time(t, "time");
        if (kind == null || time == MutableSessionState.NONE) return null;
        Event.Builder e = new Event.Builder(kind, time);
        JsonNode v;
        if ((v = f.get("network")) != null) e.network = network(v, "network");
        if ((v = f.get("user")) != null) e.user = name(v, "user");
        if ((v = f.get("auth_mode")) != null) e.authMode = authMode(v, "auth_mode");
        if ((v = f.get("cause")) != null) e.cause = cause(v, "cause");
        if ((v = f.get("unsynced_items")) != null) {
            boolean[] ok = new boolean[1];
            long n = integer(v, "unsynced_items", ok);
            if (ok[0]) {
                if (n < 0) {
                    error("invalid-value", "`unsynced_items` cannot be negative", v, null);
                } else {
                    e.hasUnsyncedItems = true;
                    e.unsyncedItems = n;
                }
            }
        }
        if ((v = f.get("app_id")) != null) e.appId = name(v, "app_id");
        if ((v = f.get("attributes")) != null) {
            if (v.kind == JsonNode.MAPPING) {
                for (int i = 0; i < v.keys.size(); i++) {
                    String key = v.keys.get(i).text;
                    String text = string(v.items.get(i), "attributes." + key);
                    if (text != null) e.attribute(key, text);
                }
            } else {
                error("wrong-type", "`attributes` must be a mapping, found " + v.shapeName(), v, "write `attributes: { license: revoked }`");
            }
        }
        if ((v = f.get("device")) != null) {
            JsonNode d = fields(v, "device", DEVICE_KEYS);
            if (d != null) {
                JsonNode x;
                if ((x = d.get("id")) != null) e.deviceId = name(x, "device.id");
                if ((x = d.get("keystore")) != null) e.keystore = keystore(x, "device.keystore");
                if ((x = d.get("integrity")) != null) e.integrity = integrity(x, "device.integrity");
            }
        }
        Event event = e.build();
        // The facts the event's kind needs, in reporting order; a key given but wrong is reported already.
        int needs = PolicyMachine.requiredFacts(kind);
        for (int bit = 0; bit < PolicyMachine.FACT_KEYS.length; bit++) {
            if ((needs & (1 << bit)) != 0 && !PolicyMachine.reports(event, bit) && f.get(PolicyMachine.FACT_KEYS[bit]) == null) {
                error("missing-key", "event `" + kind.wireName() + "` needs `" + PolicyMachine.FACT_KEYS[bit] + "`", f, null);
            }
        }
        return diagnostics.size() == before ? event : null;
    }
}
