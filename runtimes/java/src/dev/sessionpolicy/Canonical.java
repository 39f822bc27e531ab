package dev.sessionpolicy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The canonical JSON of machine documents (docs/machine-format.md): object keys sorted by their
 * UTF-8 bytes, no whitespace, integers only, strings escaped as RFC 8785 does. Values are
 * {@code null}, {@link Boolean}, {@link Long}, {@link String}, {@link List} and {@link Map}.
 */
final class Canonical {
    private Canonical() {}

    /** Compares by UTF-8 bytes, which is code point order. */
    static int compareUtf8(String a, String b) {
        int i = 0, j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i), y = b.codePointAt(j);
            if (x != y) return Integer.compare(x, y);
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    static String write(Object v) {
        StringBuilder sb = new StringBuilder(1 << 16);
        write(v, sb);
        return sb.toString();
    }

    @SuppressWarnings("unchecked")
    static void write(Object v, StringBuilder sb) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Boolean || v instanceof Long) {
            sb.append(v);
        } else if (v instanceof String) {
            JsonOut.string((String) v, sb);
        } else if (v instanceof List) {
            sb.append('[');
            boolean first = true;
            for (Object item : (List<Object>) v) {
                if (!first) sb.append(',');
                first = false;
                write(item, sb);
            }
            sb.append(']');
        } else {
            Map<String, Object> m = (Map<String, Object>) v;
            List<String> keys = new ArrayList<>(m.keySet());
            Collections.sort(keys, Canonical::compareUtf8);
            sb.append('{');
            boolean first = true;
            for (String k : keys) {
                if (!first) sb.append(',');
                first = false;
                JsonOut.string(k, sb);
                sb.append(':');
                write(m.get(k), sb);
            }
            sb.append('}');
        }
    }

    /**
     * The document as a canonical value: strings as written, integers as numbers; any other
     * number (a fraction, an exponent, past 64 bits) is refused ({@code invalid-value}).
     */
    static Object fromNode(JsonNode n) throws SessionPolicyException {
        switch (n.kind) {
            case JsonNode.SEQUENCE: {
                List<Object> out = new ArrayList<>(n.items.size());
                for (JsonNode item : n.items) out.add(fromNode(item));
                return out;
            }
            case JsonNode.MAPPING: {
                Map<String, Object> out = new LinkedHashMap<>();
                for (int i = 0; i < n.keys.size(); i++) out.put(n.keys.get(i).text, fromNode(n.items.get(i)));
                return out;
            }
            default:
                if (!n.plain) return n.text;
                switch (n.text) {
                    case "null": return null;
                    case "true": return Boolean.TRUE;
                    case "false": return Boolean.FALSE;
                    default:
                        if (!Text.isInteger(n.text)) {
                            throw JsonSyntax.error("invalid-value", "`" + n.text + "` is not an integer; a machine document holds integers only",
                                    null, n.line, n.column);
                        }
                        return Text.integerValue(n.text);
                }
        }
    }

    /** {@code sha256:} and the hex SHA-256 of the canonical text of {@code document} without its {@code digest}. */
    static String digest(Map<String, Object> document) {
        Map<String, Object> m = new LinkedHashMap<>(document);
        m.remove("digest");
        return "sha256:" + sha256Hex(write(m).getBytes(StandardCharsets.UTF_8));
    }

    static String sha256Hex(byte[] bytes) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder sb = new StringBuilder(64);
            for (byte x : d) sb.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }
}
