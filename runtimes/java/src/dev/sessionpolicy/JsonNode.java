package dev.sessionpolicy;

import java.util.List;

/**
 * A located JSON value as the strict reader builds it (the Swift engine's {@code SyntaxNode}):
 * strings (keys too) are non-plain scalars holding the decoded text; numbers, {@code true},
 * {@code false} and {@code null} are plain scalars holding the text as written; objects keep
 * their members in document order.
 */
final class JsonNode {
    static final int SCALAR = 0;
    static final int SEQUENCE = 1;
    static final int MAPPING = 2;

    final int kind;
    /** A scalar's text (decoded for strings, as written for the others); null for containers. */
    final String text;
    /** True for numbers, {@code true}, {@code false} and {@code null}. */
    final boolean plain;
    /** A sequence's items, or a mapping's values. */
    final List<JsonNode> items;
    /** A mapping's keys (string scalars), parallel to {@code items}. */
    final List<JsonNode> keys;
    final int line;
    final int column;

    JsonNode(int kind, String text, boolean plain, List<JsonNode> items, List<JsonNode> keys, int line, int column) {
        this.kind = kind;
        this.text = text;
        this.plain = plain;
        this.items = items;
        this.keys = keys;
        this.line = line;
        this.column = column;
    }

    boolean isNull() {
        return kind == SCALAR && plain && "null".equals(text);
    }

    boolean isString() {
        return kind == SCALAR && !plain;
    }

    /** The value of member {@code key} (the first written), or null. */
    JsonNode get(String key) {
        if (kind != MAPPING) return null;
        for (int i = 0; i < keys.size(); i++) {
            if (Text.same(keys.get(i).text, key)) return items.get(i);
        }
        return null;
    }

    /** The word for this node's shape in messages. */
    String shapeName() {
        switch (kind) {
            case SEQUENCE:
                return "a list";
            case MAPPING:
                return "a mapping";
            default:
                return isNull() ? "null" : "a scalar";
        }
    }
}
