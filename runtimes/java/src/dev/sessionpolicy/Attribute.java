package dev.sessionpolicy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A declared attribute: a fact events may report for the rules, and its type. */
final class Attribute {
    static final int WORDS = 0;
    static final int VERSION = 1;
    static final int BOOLEAN = 2;
    static final int INTEGER = 3;
    static final int DURATION = 4;
    static final int STRING = 5;
    static final String[] KINDS = {"words", "version", "boolean", "integer", "duration", "string"};

    final String name;
    final int type;
    final String[] words;

    Attribute(String name, int type, String[] words) {
        this.name = name;
        this.type = type;
        this.words = words;
    }

    /** Whether {@code raw}, as an event reports it, is a value of this type. Allocates nothing. */
    boolean accepts(String raw) {
        switch (type) {
            case WORDS: return Text.contains(words, raw);
            case VERSION: return Versions.count(raw) > 0;
            case BOOLEAN: return raw.equals("true") || raw.equals("false");
            case INTEGER: return Text.isInteger(raw);
            case DURATION: return Durations.parseSeconds(raw) >= 0;
            default: return true;
        }
    }

    /** The type in messages, as the Swift engine words it. */
    String typeName() {
        switch (type) {
            case WORDS: {
                StringBuilder sb = new StringBuilder("one of ");
                for (int i = 0; i < words.length; i++) {
                    if (i > 0) sb.append(", ");
                    sb.append('`').append(words[i]).append('`');
                }
                return sb.toString();
            }
            case VERSION: return "a version";
            case BOOLEAN: return "`true` or `false`";
            case INTEGER: return "an integer";
            case DURATION: return "a duration";
            default: return "a string";
        }
    }

    Map<String, Object> canonical() {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("kind", KINDS[type]);
        if (type == WORDS) {
            List<Object> list = new ArrayList<>();
            for (String w : words) list.add(w);
            t.put("words", list);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("type", t);
        return m;
    }
}
