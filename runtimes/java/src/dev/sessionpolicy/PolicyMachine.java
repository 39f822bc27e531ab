package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A compiled session policy, read from its machine document ({@code sessionpolicy-machine/1},
 * docs/machine-format.md), that decides exactly as the Swift engine: the same machine and the
 * same input give the same outcome, byte for byte, which the conformance suite checks.
 *
 * <p>Immutable and thread-safe: load once, evaluate many times from any thread. Evaluation is
 * pure (no clock, no I/O): every event carries its time.
 */
public final class PolicyMachine {
    /** The event facts some kinds need, by bit, in reporting order. */
    static final String[] FACT_KEYS = {"network", "auth_mode", "app_id", "user", "cause"};

    private static final int EVENTS = EventKind.values().length;
    /** The states by ordinal ({@code values()} would copy the array on every call). */
    private static final MachineState[] STATES = MachineState.values();
    private static final long NONE = MutableSessionState.NONE;
    private static final int YES = 1;
    private static final int NO = 0;
    private static final int UNKNOWN = 2;
    private static final String UNEXPECTED_MESSAGE = "this event is not expected in the session's current state: sign in again";

    private final String name;
    private final String description;
    private final String source;
    private final String digest;
    private final boolean revealRefusal;
    private final Guard[] guards;
    private final Action[] actions;
    private final MachineState[] from;
    private final EventKind[] on;
    private final String[][] levers;
    private final long[][] locations;
    private final Rule[] rules;
    private final Attribute[] attributes;
    private final String[] trustedApps;
    /** Scopes for auth mode none, none with hardware, biometric, biometric with hardware. */
    private final Scope[] scopes;
    private final Map<String, long[]> leverLocations;
    /** The transitions of (state, event) are {@code start[key]} to {@code start[key + 1]}, key = state * events + event. */
    private final int[] start;

    PolicyMachine(String name, String description, String source, Guard[] guards, Action[] actions, MachineState[] from,
            EventKind[] on, String[][] levers, long[][] locations, Rule[] rules, Attribute[] attributes, String[] trustedApps,
            boolean revealRefusal, Scope[] scopes, Map<String, long[]> leverLocations, int[] start, String digest) {
        this.name = name;
        this.description = description;
        this.source = source;
        this.guards = guards;
        this.actions = actions;
        this.from = from;
        this.on = on;
        this.levers = levers;
        this.locations = locations;
        this.rules = rules;
        this.attributes = attributes;
        this.trustedApps = trustedApps;
        this.revealRefusal = revealRefusal;
        this.scopes = scopes;
        this.leverLocations = leverLocations;
        this.start = start;
        this.digest = digest;
    }

    /**
     * Reads a machine document. Refuses (with the Swift engine's codes) text that is not JSON, a
     * document of another format ({@code unsupported-format}, checked first), a digest that does
     * not match its content ({@code digest-mismatch}), unknown or missing members
     * ({@code unknown-key}, {@code missing-key}), values of the wrong type or unknown names
     * ({@code wrong-type}, {@code invalid-value}), and a machine this runtime cannot run as
     * written ({@code inconsistent-machine}).
     *
     * @throws SessionPolicyException when the document is refused; nothing is decided from it
     */
    public static @NonNull PolicyMachine fromDocument(@NonNull byte[] document) throws SessionPolicyException {
        return MachineReader.read(document);
    }

    /** Reads a machine document from text; see {@link #fromDocument(byte[])}. */
    public static @NonNull PolicyMachine fromDocument(@NonNull String document) throws SessionPolicyException {
        return fromDocument(document.getBytes(StandardCharsets.UTF_8));
    }

    /** The policy's name. */
    public @NonNull String name() {
        return name;
    }

    /** What the policy is for. */
    public @Nullable String description() {
        return description;
    }

    /** {@code sha256:} and the hex SHA-256 of the canonical document without its digest: names the machine. */
    public @NonNull String digest() {
        return digest;
    }

    /** Whether a server may tell a refused cross-app detection apart from "no session". */
    public boolean revealsDetectionRefusal() {
        return revealRefusal;
    }

    /** The machine document, canonical, digest included (without the CLI's final line feed). */
    public @NonNull String document() {
        return Canonical.write(canonical());
    }

    /**
     * Evaluates {@code event} against {@code state}: the decision and the new state. Fails closed:
     * an event missing a fact its kind needs, or reporting an attribute the policy does not
     * declare (or a value of the wrong type), gets {@code idp_login} with reason
     * {@code invalid_event}, never {@code allow}.
     */
    public @NonNull Outcome evaluate(@NonNull SessionState state, @NonNull Event event) {
        MutableSessionState s = new MutableSessionState(state);
        Verdict v = evaluate(s, event);
        return new Outcome(v, s.toState());
    }

    /**
     * Evaluates {@code event} against the session {@code state} holds and updates it in place to
     * the new state: the same decision as {@link #evaluate(SessionState, Event)}, without
     * allocating on the common path (verdicts are shared). {@code state} must not be used by
     * another thread meanwhile.
     */
    public @NonNull Verdict evaluate(@NonNull MutableSessionState state, @NonNull Event event) {
        String problem = missingFact(event);
        if (problem == null && event.attributeNames.length > 0) problem = attributeProblem(event);
        if (problem != null) {
            AuthMode mode = state.authMode;
            if (state.state.hasSession()) state.state = MachineState.AWAITING_IDP;
            // The notices every idp_login gets: the network it needs, and read-only mode.
            int notices = 0;
            if (event.network == Network.OFFLINE) notices |= Notice.NETWORK_REQUIRED.bit();
            if (state.readOnly) notices |= Notice.READ_ONLY.bit();
            return new Verdict(Decision.IDP_LOGIN, "invalid_event", "the event is incomplete: " + problem, notices, null, mode, null, -1, -1);
        }
        long highest = highestSeen(state);
        long now = highest == NONE || event.time > highest ? event.time : highest;
        int key = state.state.ordinal() * EVENTS + event.kind.ordinal();
        for (int i = start[key], end = start[key + 1]; i < end; i++) {
            if (holds(guards[i], state, false, event, now, highest)) return apply(i, state, event, now, highest);
        }
        // Unreachable for a machine that loaded (every group ends in `always`); fail closed anyway.
        return new Verdict(Decision.IDP_LOGIN, "unexpected_event", UNEXPECTED_MESSAGE, 0, null, state.authMode, null, -1, -1);
    }

    // ---- the facts an event needs ----

    static int requiredFacts(EventKind kind) {
        switch (kind) {
            case LAUNCH:
            case RESUME:
            case REGISTER:
                return 1;
            case IDP_LOGIN_SUCCEEDED:
                return 2 | 8;
            case DEVICE_SESSION_DETECTED:
                return 4 | 8;
            case REFRESH_FAILED:
                return 16;
            default:
                return 0;
        }
    }

    static boolean reports(Event e, int bit) {
        switch (bit) {
            case 0: return e.network != null;
            case 1: return e.authMode != null;
            case 2: return e.appId != null;
            case 3: return e.user != null;
            default: return e.cause != null;
        }
    }

    private static String missingFact(Event e) {
        int needs = requiredFacts(e.kind);
        if (needs == 0) return null;
        for (int bit = 0; bit < FACT_KEYS.length; bit++) {
            if ((needs & (1 << bit)) != 0 && !reports(e, bit)) return "`" + e.kind.wireName() + "` needs `" + FACT_KEYS[bit] + "`";
        }
        return null;
    }

    /** The first problem in the order of the attributes' names by their UTF-8 bytes, as Swift. */
    private String attributeProblem(Event e) {
        String first = null;
        String problem = null;
        for (int i = 0; i < e.attributeNames.length; i++) {
            String n = e.attributeNames[i];
            String v = e.attributeValues[i];
            if (first != null && Text.compareUtf8(n, first) >= 0) continue;
            Attribute declared = null;
            for (Attribute a : attributes) {
                if (Text.same(a.name, n)) {
                    declared = a;
                    break;
                }
            }
            if (declared == null) {
                first = n;
                problem = "attribute `" + n + "` is not declared by the policy";
            } else if (!declared.accepts(v)) {
                first = n;
                problem = "attribute `" + n + "` cannot be `" + v + "`: it is " + declared.typeName();
            }
        }
        return problem;
    }

    // ---- the session as guards read it: as held, or cleared (after a switch) ----

    /** The highest time the session has seen, never earlier than any time it records; NONE if none. */
    private static long highestSeen(MutableSessionState s) {
        long h = s.highestTime;
        if (s.lastIdpLogin != NONE && s.lastIdpLogin > h) h = s.lastIdpLogin;
        if (s.lastOnline != NONE && s.lastOnline > h) h = s.lastOnline;
        if (s.lastActivity != NONE && s.lastActivity > h) h = s.lastActivity;
        return h; // NONE (Long.MIN_VALUE) stays NONE when nothing is known
    }

    private static boolean exceeded(long limitMillis, long reference, long now) {
        if (reference == NONE) return true;
        return now - reference > limitMillis;
    }

    private boolean holds(Guard g, MutableSessionState s, boolean cleared, Event e, long now, long highest) {
        AuthMode mode = cleared ? null : s.authMode;
        switch (g.kind) {
            case Guard.ALWAYS:
                return true;
            case Guard.DEVICE_COMPROMISED:
                return e.integrity == Integrity.COMPROMISED;
            case Guard.CLOCK_ROLLED_BACK:
                return highest != NONE && e.time < highest - g.millis;
            case Guard.DIFFERENT_USER:
                return differentUser(s, cleared, e);
            case Guard.DIFFERENT_DEVICE:
                return differentDevice(s, cleared, e);
            case Guard.SESSION_MAX_EXCEEDED:
                return exceeded(g.millis, cleared ? NONE : s.lastIdpLogin, now);
            case Guard.IDLE_EXCEEDED:
                return exceeded(g.millis, cleared ? NONE : s.lastActivity != NONE ? s.lastActivity : s.lastIdpLogin, now);
            case Guard.OFFLINE_WINDOW_EXCEEDED:
                return exceeded(g.millis, cleared ? NONE : s.lastOnline != NONE ? s.lastOnline : s.lastIdpLogin, now);
            case Guard.AUTH_MODE_MISSING:
                return mode == null;
            case Guard.AUTH_MODE_NEEDS_IDP:
                return mode == null || mode.needsIdp();
            case Guard.AUTH_MODE_NOT_OFFLINE:
                return mode == null || (g.modes & (1 << mode.ordinal())) == 0;
            case Guard.KEYSTORE_NOT_HARDWARE:
                return e.keystore != Keystore.HARDWARE;
            case Guard.BIOMETRIC_LOCKED:
                // The cleared session keeps the device's lock. A biometric session's attempt, a
                // prompt, or an adoption (which would ask for a prompt).
                return s.biometricLocked && (mode == AuthMode.BIOMETRIC || e.kind == EventKind.BIOMETRIC_SUCCEEDED
                        || e.kind == EventKind.DEVICE_SESSION_DETECTED);
            case Guard.AUTH_MODE_IS:
                return mode == g.mode;
            case Guard.FAILURE_LIMIT_REACHED: {
                long count = cleared ? 0 : g.path == 0 ? s.biometricFailures : g.path == 1 ? s.offlineLoginFailures : s.idpLoginFailures;
                return count >= g.limit - 1;
            }
            case Guard.NETWORK_OFFLINE:
                return e.network == Network.OFFLINE;
            case Guard.REFRESH_CAUSE:
                return e.cause == g.cause;
            case Guard.UNSYNCED_ITEMS:
                return e.hasUnsyncedItems && e.unsyncedItems > 0;
            case Guard.APP_NOT_TRUSTED:
                return e.appId == null || !Text.contains(trustedApps, e.appId);
            case Guard.RULE_FACT_MISSING:
                return truth(rules[g.rule].condition, s, cleared, e, now) == UNKNOWN;
            case Guard.RULE:
                return truth(rules[g.rule].condition, s, cleared, e, now) == YES;
            case Guard.SWITCHED: {
                // The switch holds on the session, and `inner` on the session cleared as a wipe
                // leaves it (signed out, only the highest time and the biometric lock kept), as
                // for a fresh login.
                boolean trigger = g.switchKind == 0 ? differentUser(s, cleared, e) : differentDevice(s, cleared, e);
                return trigger && holds(g.inner, s, true, e, now, highest);
            }
            default:
                return false;
        }
    }

    private static boolean differentUser(MutableSessionState s, boolean cleared, Event e) {
        String b = cleared ? null : s.user;
        return e.user != null && b != null && !Text.same(e.user, b);
    }

    private static boolean differentDevice(MutableSessionState s, boolean cleared, Event e) {
        String b = cleared ? null : s.device;
        return e.deviceId != null && b != null && !Text.same(e.deviceId, b);
    }

    // ---- rule conditions ----

    private int truth(Condition c, MutableSessionState s, boolean cleared, Event e, long now) {
        switch (c.op) {
            case Condition.AND: {
                int x = truth(c.left, s, cleared, e, now);
                if (x == NO) return NO;
                int y = truth(c.right, s, cleared, e, now);
                if (y == NO) return NO;
                return x == UNKNOWN ? UNKNOWN : y;
            }
            case Condition.OR: {
                int x = truth(c.left, s, cleared, e, now);
                if (x == YES) return YES;
                int y = truth(c.right, s, cleared, e, now);
                if (y == YES) return YES;
                return x == UNKNOWN ? UNKNOWN : y;
            }
            case Condition.NOT: {
                int x = truth(c.left, s, cleared, e, now);
                return x == YES ? NO : x == NO ? YES : UNKNOWN;
            }
            case Condition.ONE_OF: {
                String v = text(c, s, cleared, e);
                if (v == null) return UNKNOWN;
                return Text.contains(c.values, v) != c.negated ? YES : NO;
            }
            case Condition.COMPARE:
                return compare(c, s, cleared, e, now);
            default: {
                String raw = text(c, s, cleared, e);
                if (raw == null) return UNKNOWN;
                int cmp = Versions.compare(raw, c.version);
                if (cmp == Integer.MIN_VALUE) return UNKNOWN;
                return Condition.holds(c.comparison, cmp) ? YES : NO;
            }
        }
    }

    private static String text(Condition c, MutableSessionState s, boolean cleared, Event e) {
        switch (c.fact) {
            case -1:
                return e.attribute(c.attribute);
            case Condition.EVENT:
                return e.kind.wireName();
            case Condition.STATE:
                return cleared ? MachineState.SIGNED_OUT.wireName() : s.state.wireName();
            case Condition.NETWORK:
                return e.network == null ? null : e.network.wireName();
            case Condition.AUTH_MODE:
                return cleared || s.authMode == null ? null : s.authMode.wireName();
            case Condition.KEYSTORE:
                return e.keystore == null ? null : e.keystore.wireName();
            case Condition.INTEGRITY:
                return e.integrity == null ? null : e.integrity.wireName();
            case Condition.READ_ONLY:
                return !cleared && s.readOnly ? "true" : "false";
            default:
                return null;
        }
    }

    private static int compare(Condition c, MutableSessionState s, boolean cleared, Event e, long now) {
        long v;
        long idp = cleared ? NONE : s.lastIdpLogin;
        switch (c.fact) {
            case Condition.SINCE_IDP_LOGIN:
                if (idp == NONE) return UNKNOWN;
                v = now - idp;
                break;
            case Condition.SINCE_ONLINE: {
                long r = cleared ? NONE : s.lastOnline != NONE ? s.lastOnline : idp;
                if (r == NONE) return UNKNOWN;
                v = now - r;
                break;
            }
            case Condition.SINCE_ACTIVITY: {
                long r = cleared ? NONE : s.lastActivity != NONE ? s.lastActivity : idp;
                if (r == NONE) return UNKNOWN;
                v = now - r;
                break;
            }
            case Condition.BIOMETRIC_FAILURES:
                v = cleared ? 0 : s.biometricFailures;
                break;
            case Condition.OFFLINE_FAILURES:
                v = cleared ? 0 : s.offlineLoginFailures;
                break;
            case Condition.IDP_FAILURES:
                v = cleared ? 0 : s.idpLoginFailures;
                break;
            case -1: {
                String raw = e.attribute(c.attribute);
                if (raw == null) return UNKNOWN;
                if (Text.isInteger(raw)) {
                    v = Text.integerValue(raw);
                } else {
                    long seconds = Durations.parseSeconds(raw);
                    if (seconds < 0) return UNKNOWN;
                    v = seconds * 1000;
                }
                break;
            }
            default:
                return UNKNOWN;
        }
        return Condition.holds(c.comparison, Long.compare(v, c.value)) ? YES : NO;
    }

    // ---- applying a transition ----

    private Verdict apply(int id, MutableSessionState s, Event e, long now, long highest) {
        AuthMode previousMode = s.authMode;
        Action a = actions[id];
        int fx = a.effects;
        s.highestTime = highest != NONE && highest > e.time ? highest : e.time;
        if ((fx & Action.CLEAR_SESSION) != 0) s.clearKeepingHighest();
        if ((fx & Action.ESTABLISH) != 0) {
            if (e.user != null) s.user = e.user;
            if (e.deviceId != null) s.device = e.deviceId;
            // An adopted session's mode is the policy's, never the event's.
            s.authMode = (fx & Action.ADOPT_BEHIND_BIOMETRIC) != 0 ? AuthMode.BIOMETRIC
                    : e.kind == EventKind.DEVICE_SESSION_DETECTED ? AuthMode.NONE
                    : e.authMode != null ? e.authMode : AuthMode.NONE;
            s.lastIdpLogin = e.time;
            s.lastOnline = e.time;
            s.lastActivity = e.time;
            s.highestTime = e.time;
            s.biometricFailures = 0;
            s.offlineLoginFailures = 0;
            s.idpLoginFailures = 0;
            s.readOnly = false;
            // Only an IdP login unlocks the biometric path; an adopted device session does not.
            if (e.kind == EventKind.IDP_LOGIN_SUCCEEDED) s.biometricLocked = false;
        }
        if ((fx & Action.RECORD_ONLINE) != 0) {
            s.lastOnline = e.time;
            s.offlineLoginFailures = 0;
        }
        if ((fx & Action.RECORD_ACTIVITY) != 0) s.lastActivity = now;
        if ((fx & Action.COUNT_BIOMETRIC_FAILURE) != 0) s.biometricFailures = increment(s.biometricFailures);
        if ((fx & Action.COUNT_OFFLINE_FAILURE) != 0) s.offlineLoginFailures = increment(s.offlineLoginFailures);
        if ((fx & Action.COUNT_IDP_FAILURE) != 0) s.idpLoginFailures = increment(s.idpLoginFailures);
        if ((fx & Action.RESET_BIOMETRIC_FAILURES) != 0) s.biometricFailures = 0;
        if ((fx & Action.LOCK_BIOMETRIC) != 0) s.biometricLocked = true;
        if ((fx & Action.SET_READ_ONLY) != 0) s.readOnly = true;
        if (a.target == Action.RESTING) s.state = s.readOnly ? MachineState.READ_ONLY : MachineState.ACTIVE;
        else if (a.target != Action.UNCHANGED) s.state = STATES[a.target];
        int notices = a.notices;
        if (e.network == Network.OFFLINE && (a.decision == Decision.IDP_LOGIN || a.decision == Decision.WIPE)) {
            notices |= Notice.NETWORK_REQUIRED.bit();
        }
        if (s.readOnly) notices |= Notice.READ_ONLY.bit();
        Scope scope = null;
        if (a.namesScope) {
            boolean hardware = e.keystore == Keystore.HARDWARE;
            scope = s.authMode == AuthMode.BIOMETRIC ? scopes[hardware ? 3 : 2] : scopes[hardware ? 1 : 0];
        }
        AuthMode mode = a.usesPreviousAuthMode && a.decision == Decision.IDP_LOGIN ? previousMode : null;
        return a.verdict(id, notices, scope, mode);
    }

    /** {@code n + 1}, saturating: a tampered counter never overflows. */
    private static long increment(long n) {
        return n < Long.MAX_VALUE ? Math.max(n, 0) + 1 : n;
    }

    // ---- writing the document back ----

    /** The machine as its document, digest included. */
    Map<String, Object> canonical() {
        Map<String, Object> m = canonicalBody();
        m.put("digest", digest);
        return m;
    }

    /** The machine as its document without the digest: what the reader compares with what it received. */
    Map<String, Object> canonicalBody() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("format", MachineReader.FORMAT);
        m.put("name", name);
        m.put("description", description);
        m.put("source", source);
        List<Object> states = new ArrayList<>();
        for (MachineState s : MachineState.values()) states.add(s.wireName());
        m.put("states", states);
        List<Object> events = new ArrayList<>();
        for (EventKind e : EventKind.values()) events.add(e.wireName());
        m.put("events", events);
        List<Object> transitions = new ArrayList<>();
        for (int i = 0; i < guards.length; i++) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("id", (long) i);
            t.put("from", from[i].wireName());
            t.put("event", on[i].wireName());
            t.put("guard", guards[i].canonical());
            t.put("action", actions[i].canonical());
            List<Object> ls = new ArrayList<>();
            for (String l : levers[i]) ls.add(l);
            t.put("levers", ls);
            t.put("location", location(locations[i]));
            transitions.add(t);
        }
        m.put("transitions", transitions);
        List<Object> rs = new ArrayList<>();
        for (Rule r : rules) rs.add(r.canonical());
        m.put("rules", rs);
        List<Object> as = new ArrayList<>();
        for (Attribute a : attributes) as.add(a.canonical());
        m.put("attributes", as);
        List<Object> apps = new ArrayList<>();
        for (String a : trustedApps) apps.add(a);
        m.put("trusted_apps", apps);
        m.put("reveal_refusal", revealRefusal);
        Map<String, Object> sc = new LinkedHashMap<>();
        sc.put("none", scopes[0].wireName());
        sc.put("none_hardware", scopes[1].wireName());
        sc.put("biometric", scopes[2].wireName());
        sc.put("biometric_hardware", scopes[3].wireName());
        m.put("scopes", sc);
        Map<String, Object> lv = new LinkedHashMap<>();
        for (Map.Entry<String, long[]> x : leverLocations.entrySet()) lv.put(x.getKey(), location(x.getValue()));
        m.put("levers", lv);
        return m;
    }

    private static Object location(long[] l) {
        if (l == null) return null;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("line", l[0]);
        m.put("column", l[1]);
        return m;
    }

    /** The limits the machine's guards use, in seconds, by guard kind name (for the benchmark); -1 when absent. */
    long limitSeconds(String guardKind) {
        long found = -1;
        for (Guard g : guards) {
            Guard x = g.kind == Guard.SWITCHED ? g.inner : g;
            if (Guard.NAMES[x.kind].equals(guardKind)) found = Math.max(found, x.seconds);
        }
        return found;
    }
}
