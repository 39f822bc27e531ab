package dev.sessionpolicy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A rule's condition: an expression tree over built-in facts and declared attributes,
 * evaluated to yes, no or unknown (a fact the event or session does not have) without
 * allocating.
 */
final class Condition {
    static final int ONE_OF = 0;
    static final int COMPARE = 1;
    static final int COMPARE_VERSION = 2;
    static final int AND = 3;
    static final int OR = 4;
    static final int NOT = 5;
    static final String[] OPS = {"one_of", "compare", "compare_version", "and", "or", "not"};

    /** The built-in facts, by index (the Swift engine's {@code Fact.builtIn} order). */
    static final String[] FACTS = {"event", "state", "network", "auth_mode", "device.keystore", "device.integrity",
        "elapsed.since_idp_login", "elapsed.since_online", "elapsed.since_activity", "failures.biometric",
        "failures.offline_login", "failures.idp_login", "read_only"};
    static final int EVENT = 0, STATE = 1, NETWORK = 2, AUTH_MODE = 3, KEYSTORE = 4, INTEGRITY = 5, SINCE_IDP_LOGIN = 6,
            SINCE_ONLINE = 7, SINCE_ACTIVITY = 8, BIOMETRIC_FAILURES = 9, OFFLINE_FAILURES = 10, IDP_FAILURES = 11, READ_ONLY = 12;

    /** The comparisons, by index. */
    static final String[] COMPARISONS = {"==", "!=", "<", "<=", ">", ">="};

    final int op;
    /** A built-in fact's index, or -1 for an attribute. */
    final int fact;
    final String attribute;
    final String[] values;
    final boolean negated;
    final int comparison;
    final long value;
    final long[] version;
    final Condition left;
    final Condition right;

    Condition(int op, int fact, String attribute, String[] values, boolean negated, int comparison, long value, long[] version,
            Condition left, Condition right) {
        this.op = op;
        this.fact = fact;
        this.attribute = attribute;
        this.values = values;
        this.negated = negated;
        this.comparison = comparison;
        this.value = value;
        this.version = version;
        this.left = left;
        this.right = right;
    }

    /** Whether {@code c} (a {@link Long#compare} result) satisfies the comparison. */
    static boolean holds(int comparison, int c) {
        switch (comparison) {
            case 0: return c == 0;
            case 1: return c != 0;
            case 2: return c < 0;
            case 3: return c <= 0;
            case 4: return c > 0;
            default: return c >= 0;
        }
    }

    /** The condition as the machine document writes it. */
    Map<String, Object> canonical() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", OPS[op]);
        switch (op) {
            case AND:
            case OR:
                m.put("left", left.canonical());
                m.put("right", right.canonical());
                return m;
            case NOT:
                m.put("operand", left.canonical());
                return m;
            default:
                break;
        }
        if (fact < 0) m.put("attribute", attribute);
        else m.put("fact", FACTS[fact]);
        if (op == ONE_OF) {
            List<Object> list = new ArrayList<>();
            for (String v : values) list.add(v);
            m.put("values", list);
            m.put("negated", negated);
        } else if (op == COMPARE) {
            m.put("comparison", COMPARISONS[comparison]);
            m.put("value", value);
        } else {
            m.put("comparison", COMPARISONS[comparison]);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < version.length; i++) {
                if (i > 0) sb.append('.');
                sb.append(version[i]);
            }
            m.put("value", sb.toString());
        }
        return m;
    }
}
