package dev.sessionpolicy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A transition's guard, compiled at load into an int kind and its parameters, so that the
 * evaluator tests it with a switch and no allocation. The kinds are those of
 * docs/machine-format.md.
 */
final class Guard {
    static final int ALWAYS = 0;
    static final int DEVICE_COMPROMISED = 1;
    static final int CLOCK_ROLLED_BACK = 2;
    static final int DIFFERENT_USER = 3;
    static final int DIFFERENT_DEVICE = 4;
    static final int SESSION_MAX_EXCEEDED = 5;
    static final int IDLE_EXCEEDED = 6;
    static final int OFFLINE_WINDOW_EXCEEDED = 7;
    static final int AUTH_MODE_MISSING = 8;
    static final int AUTH_MODE_NEEDS_IDP = 9;
    static final int AUTH_MODE_NOT_OFFLINE = 10;
    static final int KEYSTORE_NOT_HARDWARE = 11;
    static final int BIOMETRIC_LOCKED = 12;
    static final int AUTH_MODE_IS = 13;
    static final int FAILURE_LIMIT_REACHED = 14;
    static final int NETWORK_OFFLINE = 15;
    static final int REFRESH_CAUSE = 16;
    static final int UNSYNCED_ITEMS = 17;
    static final int APP_NOT_TRUSTED = 18;
    static final int RULE_FACT_MISSING = 19;
    static final int RULE = 20;
    static final int SWITCHED = 21;

    /** The kinds' names, by kind. */
    static final String[] NAMES = {"always", "device_compromised", "clock_rolled_back", "different_user", "different_device",
        "session_max_exceeded", "idle_exceeded", "offline_window_exceeded", "auth_mode_missing", "auth_mode_needs_idp",
        "auth_mode_not_offline", "keystore_not_hardware", "biometric_locked", "auth_mode_is", "failure_limit_reached",
        "network_offline", "refresh_cause", "unsynced_items", "app_not_trusted", "rule_fact_missing", "rule", "switched"};

    /** The failure paths, by index. */
    static final String[] PATHS = {"biometric", "offline_login", "idp_login"};
    /** The switches, by index: 0 another user, 1 another device. */
    static final String[] SWITCHES = {"different_user", "different_device"};

    final int kind;
    /** Milliseconds: the tolerance or limit of the time guards. */
    final long millis;
    /** The same, in seconds, as written. */
    final long seconds;
    /** {@code auth_mode_not_offline}: the offline modes, one bit per {@link AuthMode} ordinal. */
    final int modes;
    /** {@code auth_mode_is}. */
    final AuthMode mode;
    /** {@code failure_limit_reached}: the path's index in {@link #PATHS} and the limit. */
    final int path;
    final long limit;
    /** {@code refresh_cause}. */
    final RefreshFailureCause cause;
    /** {@code rule}, {@code rule_fact_missing}: the rule's index. */
    final int rule;
    /** {@code switched}: the index in {@link #SWITCHES} and the guard for the cleared session. */
    final int switchKind;
    final Guard inner;

    private Guard(int kind, long seconds, int modes, AuthMode mode, int path, long limit, RefreshFailureCause cause, int rule,
            int switchKind, Guard inner) {
        this.kind = kind;
        this.seconds = seconds;
        // A limit past what milliseconds can hold is clamped (the Swift engine would trap on it).
        this.millis = seconds > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : seconds * 1000;
        this.modes = modes;
        this.mode = mode;
        this.path = path;
        this.limit = limit;
        this.cause = cause;
        this.rule = rule;
        this.switchKind = switchKind;
        this.inner = inner;
    }

    static Guard simple(int kind) {
        return new Guard(kind, 0, 0, null, 0, 0, null, 0, 0, null);
    }

    static Guard span(int kind, long seconds) {
        return new Guard(kind, seconds, 0, null, 0, 0, null, 0, 0, null);
    }

    static Guard notOffline(int modes) {
        return new Guard(AUTH_MODE_NOT_OFFLINE, 0, modes, null, 0, 0, null, 0, 0, null);
    }

    static Guard authModeIs(AuthMode mode) {
        return new Guard(AUTH_MODE_IS, 0, 0, mode, 0, 0, null, 0, 0, null);
    }

    static Guard failureLimit(int path, long limit) {
        return new Guard(FAILURE_LIMIT_REACHED, 0, 0, null, path, limit, null, 0, 0, null);
    }

    static Guard refreshCause(RefreshFailureCause cause) {
        return new Guard(REFRESH_CAUSE, 0, 0, null, 0, 0, cause, 0, 0, null);
    }

    static Guard rule(int kind, int rule) {
        return new Guard(kind, 0, 0, null, 0, 0, null, rule, 0, null);
    }

    static Guard switched(int switchKind, Guard inner) {
        return new Guard(SWITCHED, 0, 0, null, 0, 0, null, 0, switchKind, inner);
    }

    /** The guard as the machine document writes it. */
    Map<String, Object> canonical() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", NAMES[kind]);
        switch (kind) {
            case CLOCK_ROLLED_BACK:
                m.put("tolerance_seconds", seconds);
                break;
            case SESSION_MAX_EXCEEDED:
            case IDLE_EXCEEDED:
            case OFFLINE_WINDOW_EXCEEDED:
                m.put("limit_seconds", seconds);
                break;
            case AUTH_MODE_NOT_OFFLINE: {
                List<Object> list = new ArrayList<>();
                for (AuthMode a : AuthMode.values()) {
                    if ((modes & (1 << a.ordinal())) != 0) list.add(a.wireName());
                }
                m.put("modes", list);
                break;
            }
            case AUTH_MODE_IS:
                m.put("mode", mode.wireName());
                break;
            case FAILURE_LIMIT_REACHED:
                m.put("path", PATHS[path]);
                m.put("limit", limit);
                break;
            case REFRESH_CAUSE:
                m.put("cause", cause.wireName());
                break;
            case RULE_FACT_MISSING:
            case RULE:
                m.put("rule", (long) rule);
                break;
            case SWITCHED:
                m.put("switch", SWITCHES[switchKind]);
                m.put("inner", inner.canonical());
                break;
            default:
                break;
        }
        return m;
    }
}
