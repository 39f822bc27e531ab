package dev.sessionpolicy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Strict RFC 8259 JSON over UTF-8 bytes, refusing exactly what the Swift engine's
 * {@code JSONSyntax} refuses, with its codes: {@code input-too-large}, {@code
 * unsupported-encoding}, {@code invalid-json}, {@code invalid-utf8}, {@code duplicate-key}
 * (keys with the same scalars; two spellings of one text are two keys), {@code nesting-too-deep}, {@code too-many-nodes}.
 * A byte-order mark at the start is skipped. The bounds on size, values and nesting are a
 * {@link Limits}: the machine document's and the other documents' ({@link Limits#FILES}), or an
 * envelope's header and payload's ({@link Limits#ENVELOPE}).
 */
final class JsonSyntax {
    /** The machine document's (and states' and events') limits: 1 MiB, 100,000 values, 64 levels. */
    static final int MAX_BYTES = 1 << 20;
    static final int MAX_NODES = 100_000;
    static final int MAX_DEPTH = 64;

    /**
     * Bounds on one JSON text, enforced as it is read: its size in bytes ({@code input-too-large}),
     * how many keys, values and containers it holds ({@code too-many-nodes}) and how deep they
     * nest, the root being level 1 ({@code nesting-too-deep}).
     */
    static final class Limits {
        /** Machine documents, states and events (docs/machine-format.md, "Syntax and limits"): 1 MiB, 100,000 values, 64 levels. */
        static final Limits FILES = new Limits(MAX_BYTES, MAX_NODES, MAX_DEPTH);
        /** An envelope's header and payload (docs/envelope.md, "Reading an envelope"): 4 MiB, 64 values, 8 levels. */
        static final Limits ENVELOPE = new Limits(4 * 1024 * 1024, 64, 8);

        final int bytes;
        final int nodes;
        final int depth;

        Limits(int bytes, int nodes, int depth) {
            this.bytes = bytes;
            this.nodes = nodes;
            this.depth = depth;
        }
    }

    private final byte[] b;
    private final Limits limits;
    private int index;
    private int line = 1;
    private int lineStart;
    private int continuations;
    private int nodes;
    private int depth;

    private JsonSyntax(byte[] bytes, Limits limits) {
        this.b = bytes;
        this.limits = limits;
    }

    /** The root value of {@code bytes} within {@link Limits#FILES}, or null when they hold no value (empty or blank). */
    static JsonNode parse(byte[] bytes) throws SessionPolicyException {
        return parse(bytes, Limits.FILES);
    }

    /** The root value of {@code bytes} within {@code limits}, or null when they hold no value (empty or blank). */
    static JsonNode parse(byte[] bytes, Limits limits) throws SessionPolicyException {
        if (bytes.length > limits.bytes) {
            throw error("input-too-large", "input is " + bytes.length + " bytes, more than the limit of " + limits.bytes + " bytes", null, 1, 1);
        }
        String wide = wideEncoding(bytes);
        if (wide != null) {
            throw error("unsupported-encoding", "the input is in " + wide + "; only UTF-8 is read", "convert it to UTF-8", 1, 1);
        }
        JsonSyntax r = new JsonSyntax(bytes, limits);
        return r.document();
    }

    static SessionPolicyException error(String code, String message, String help, int line, int column) {
        return new SessionPolicyException(new Diagnostic(code, message, help, line, column));
    }

    private static String wideEncoding(byte[] b) {
        int n = b.length;
        int b0 = n > 0 ? b[0] & 0xFF : -1, b1 = n > 1 ? b[1] & 0xFF : -1, b2 = n > 2 ? b[2] & 0xFF : -1, b3 = n > 3 ? b[3] & 0xFF : -1;
        if (b0 == 0 && b1 == 0 && b2 == 0xFE && b3 == 0xFF) return "UTF-32 (big-endian, with a byte-order mark)";
        if (b0 == 0xFF && b1 == 0xFE && b2 == 0 && b3 == 0) return "UTF-32 (little-endian, with a byte-order mark)";
        if (b0 == 0xFE && b1 == 0xFF) return "UTF-16 (big-endian, with a byte-order mark)";
        if (b0 == 0xFF && b1 == 0xFE) return "UTF-16 (little-endian, with a byte-order mark)";
        if (b0 == 0 && b1 == 0 && b2 == 0 && b3 > 0) return "UTF-32 (big-endian)";
        if (b0 > 0 && b1 == 0 && b2 == 0 && b3 == 0) return "UTF-32 (little-endian)";
        if (b0 == 0 && b1 > 0 && b1 < 0x80) return "UTF-16 (big-endian)";
        if (b0 > 0 && b0 < 0x80 && b1 == 0) return "UTF-16 (little-endian)";
        return null;
    }

    // ---- positions ----

    private int column() {
        return index - lineStart - continuations + 1;
    }

    private SessionPolicyException syntax(String message, String help) {
        return error("invalid-json", message, help, line, column());
    }

    private SessionPolicyException syntaxAt(String message, String help, int l, int c) {
        return error("invalid-json", message, help, l, c);
    }

    private int next() {
        return index < b.length ? b[index] & 0xFF : -1;
    }

    private void skipSpace() {
        while (index < b.length) {
            int c = b[index] & 0xFF;
            if (c == 0x20 || c == 0x09) {
                index++;
            } else if (c == 0x0A) {
                newLine(index);
            } else if (c == 0x0D) {
                newLine(index + 1 < b.length && b[index + 1] == 0x0A ? index + 1 : index);
            } else {
                return;
            }
        }
    }

    private void newLine(int breakIndex) {
        index = breakIndex + 1;
        line++;
        lineStart = index;
        continuations = 0;
    }

    private String found() throws SessionPolicyException {
        if (index >= b.length) return "the end of the input";
        int c = b[index] & 0xFF;
        if (c >= 0x20 && c < 0x7F) return c == '`' ? "a backtick" : "`" + (char) c + "`";
        if (c < 0x80) return String.format("control character U+%04X", c);
        int w = scalarWidth();
        return "`" + new String(b, index, w, StandardCharsets.UTF_8) + "`";
    }

    // ---- the document ----

    private JsonNode document() throws SessionPolicyException {
        if (b.length >= 3 && (b[0] & 0xFF) == 0xEF && (b[1] & 0xFF) == 0xBB && (b[2] & 0xFF) == 0xBF) {
            index = 3;
            lineStart = 3;
        }
        skipSpace();
        if (index >= b.length) return null;
        JsonNode root = value();
        skipSpace();
        if (index < b.length) {
            throw syntax("unexpected " + found() + " after the JSON value", "a JSON document is one value; remove what follows it");
        }
        return root;
    }

    private void count(int l, int c) throws SessionPolicyException {
        nodes++;
        if (nodes > limits.nodes) throw error("too-many-nodes", "the document has more than " + limits.nodes + " values", null, l, c);
        if (depth + 1 > limits.depth) {
            throw error("nesting-too-deep", "values are nested more than " + limits.depth + " levels deep", null, l, c);
        }
    }

    private JsonNode value() throws SessionPolicyException {
        int c = next();
        if (c < 0) throw syntax("the JSON ends early", "give a value after the last `:`");
        int l = line, col = column();
        count(l, col);
        switch (c) {
            case '{':
                return object(l, col);
            case '[':
                return array(l, col);
            case '"':
                return new JsonNode(JsonNode.SCALAR, string(), false, null, null, l, col);
            case 't':
                return literal("true", l, col);
            case 'f':
                return literal("false", l, col);
            case 'n':
                return literal("null", l, col);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return number(l, col);
                throw syntax("expected a JSON value, found " + found(), null);
        }
    }

    private JsonNode object(int l, int col) throws SessionPolicyException {
        index++;
        depth++;
        List<JsonNode> keys = new ArrayList<>();
        List<JsonNode> values = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        skipSpace();
        if (next() == '}') {
            index++;
            depth--;
            return new JsonNode(JsonNode.MAPPING, null, false, values, keys, l, col);
        }
        while (true) {
            skipSpace();
            if (next() != '"') {
                if (index == b.length) throw endsInside(true, l, col);
                throw syntax("expected a key in double quotes, found " + found(), "keys are in double quotes");
            }
            int kl = line, kc = column();
            count(kl, kc);
            String key = string();
            if (!seen.add(key)) {
                throw error("duplicate-key", "key `" + key + "` appears twice in the same mapping",
                        "keep one of the two; a key may appear only once in an object", kl, kc);
            }
            keys.add(new JsonNode(JsonNode.SCALAR, key, false, null, null, kl, kc));
            skipSpace();
            if (next() != ':') {
                if (index == b.length) throw endsInside(true, l, col);
                throw syntax("expected `:` after the key, found " + found(), null);
            }
            index++;
            skipSpace();
            values.add(value());
            skipSpace();
            if (!afterValue('}', true, l, col)) break;
        }
        depth--;
        return new JsonNode(JsonNode.MAPPING, null, false, values, keys, l, col);
    }

    private JsonNode array(int l, int col) throws SessionPolicyException {
        index++;
        depth++;
        List<JsonNode> items = new ArrayList<>();
        skipSpace();
        if (next() == ']') {
            index++;
            depth--;
            return new JsonNode(JsonNode.SEQUENCE, null, false, items, null, l, col);
        }
        while (true) {
            skipSpace();
            items.add(value());
            skipSpace();
            if (!afterValue(']', false, l, col)) break;
        }
        depth--;
        return new JsonNode(JsonNode.SEQUENCE, null, false, items, null, l, col);
    }

    /** After a member or element: true on a comma (another follows), false on the closer. */
    private boolean afterValue(char closer, boolean isObject, int l, int col) throws SessionPolicyException {
        int c = next();
        if (c != ',' && c != closer) {
            if (index == b.length) throw endsInside(isObject, l, col);
            throw syntax("expected `,` or `" + closer + "` after " + (isObject ? "a member" : "an element") + ", found " + found(), null);
        }
        if (c == closer) {
            index++;
            return false;
        }
        int cl = line, cc = column();
        index++;
        skipSpace();
        if (next() == closer) throw syntaxAt("trailing comma before `" + closer + "`", "remove the comma", cl, cc);
        return true;
    }

    private SessionPolicyException endsInside(boolean isObject, int l, int col) {
        String what = isObject ? "object" : "array";
        return syntax("the JSON ends inside an " + what + " (it starts at " + l + ":" + col + ")",
                "close the " + what + " with `" + (isObject ? "}" : "]") + "`");
    }

    private JsonNode literal(String word, int l, int col) throws SessionPolicyException {
        for (int k = 0; k < word.length(); k++) {
            if (index + k >= b.length || b[index + k] != word.charAt(k)) {
                throw syntaxAt("expected `" + word + "`", "JSON's literals are `true`, `false` and `null`, in lower case", l, col);
            }
        }
        index += word.length();
        return new JsonNode(JsonNode.SCALAR, word, true, null, null, l, col);
    }

    private int digits() {
        int start = index;
        while (index < b.length && b[index] >= '0' && b[index] <= '9') index++;
        return index - start;
    }

    private JsonNode number(int l, int col) throws SessionPolicyException {
        int start = index;
        String help = "write numbers such as `7`, `-1.5` or `2e3`";
        if (b[index] == '-') index++;
        int first = index;
        int n = digits();
        if (n == 0) throw syntax("a number needs digits after `-`", help);
        if (n > 1 && b[first] == '0') {
            index = first;
            throw syntax("a number cannot start with 0", "write numbers without leading zeros");
        }
        if (next() == '.') {
            index++;
            if (digits() == 0) throw syntax("a number needs digits after `.`", help);
        }
        int e = next();
        if (e == 'e' || e == 'E') {
            index++;
            int s = next();
            if (s == '+' || s == '-') index++;
            if (digits() == 0) throw syntax("a number needs digits in its exponent", help);
        }
        return new JsonNode(JsonNode.SCALAR, new String(b, start, index - start, StandardCharsets.US_ASCII), true, null, null, l, col);
    }

    private String string() throws SessionPolicyException {
        int ol = line, oc = column();
        index++;
        int start = index;
        ByteBuf scratch = null;
        while (index < b.length) {
            int c = b[index] & 0xFF;
            if (c == '"') {
                String text = scratch != null ? scratch.string() : new String(b, start, index - start, StandardCharsets.UTF_8);
                index++;
                return text;
            }
            if (c == '\\') {
                if (scratch == null) {
                    scratch = new ByteBuf();
                    scratch.add(b, start, index - start);
                }
                escape(scratch);
                continue;
            }
            if (c < 0x20) {
                if (c == 0x0A || c == 0x0D) throw syntax("a line break inside a string", "write the line break as `\\n`");
                throw syntax(String.format("the control character U+%04X must be escaped in a string", c), null);
            }
            if (c < 0x80) {
                if (scratch != null) scratch.add(c);
                index++;
                continue;
            }
            int w = scalarWidth();
            if (scratch != null) scratch.add(b, index, w);
            index += w;
            continuations += w - 1;
        }
        throw syntaxAt("a string is not closed", "close it with `\"`", ol, oc);
    }

    private void escape(ByteBuf out) throws SessionPolicyException {
        int al = line, ac = column();
        String help = "JSON's escapes are `\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t` and `\\u` with four hexadecimal digits";
        index++;
        int c = next();
        if (c < 0) return; // the caller reports the string as not closed
        int simple;
        switch (c) {
            case '"': simple = 0x22; break;
            case '\\': simple = 0x5C; break;
            case '/': simple = 0x2F; break;
            case 'b': simple = 0x08; break;
            case 'f': simple = 0x0C; break;
            case 'n': simple = 0x0A; break;
            case 'r': simple = 0x0D; break;
            case 't': simple = 0x09; break;
            default: simple = -1;
        }
        if (simple >= 0) {
            out.add(simple);
            index++;
            return;
        }
        if (c != 'u') {
            if (c < 0x20 || c >= 0x7F) throw syntaxAt("unknown escape: a backslash followed by " + found(), help, al, ac);
            throw syntaxAt("unknown escape `\\" + (char) c + "`", help, al, ac);
        }
        index++;
        int unit = hex4(al, ac, help);
        int scalar = unit;
        if (unit >= 0xD800 && unit <= 0xDBFF) {
            if (!(index + 1 < b.length && b[index] == '\\' && b[index + 1] == 'u')) throw lone(unit, al, ac);
            int ll = line, lc = column();
            index += 2;
            int low = hex4(ll, lc, help);
            if (low < 0xDC00 || low > 0xDFFF) throw lone(unit, al, ac);
            scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
            throw lone(unit, al, ac);
        }
        byte[] enc = new String(Character.toChars(scalar)).getBytes(StandardCharsets.UTF_8);
        out.add(enc, 0, enc.length);
    }

    private SessionPolicyException lone(int unit, int l, int c) {
        return syntaxAt(String.format("`\\u%04x` is half of a surrogate pair, without its other half", unit),
                "a character above U+FFFF is written as a pair, such as `\\ud83d\\ude00`", l, c);
    }

    private int hex4(int l, int c, String help) throws SessionPolicyException {
        int v = 0;
        for (int k = 0; k < 4; k++) {
            int d = index + k < b.length ? Character.digit(b[index + k] & 0xFF, 16) : -1;
            int ch = index + k < b.length ? b[index + k] & 0xFF : 0;
            if (d < 0 || ch >= 0x80) throw syntaxAt("`\\u` needs four hexadecimal digits", help, l, c);
            v = v << 4 | d;
        }
        index += 4;
        return v;
    }

    /** The width of the valid UTF-8 sequence at {@code index}, or an {@code invalid-utf8} refusal. */
    private int scalarWidth() throws SessionPolicyException {
        int w = sequenceWidth(b, index);
        if (w > 0) return w;
        // Located as the Swift engine locates it: the first bad sequence of the whole input.
        int l = 1, col = 1;
        boolean afterCR = false;
        int i = 0;
        while (i < b.length) {
            int width = sequenceWidth(b, i);
            if (width == 0) break;
            int c = b[i] & 0xFF;
            if (c == 0x0A) {
                if (!afterCR) l++;
                col = 1;
                afterCR = false;
            } else if (c == 0x0D) {
                l++;
                col = 1;
                afterCR = true;
            } else {
                col++;
                afterCR = false;
            }
            i += width;
        }
        throw error("invalid-utf8", String.format("byte 0x%02X at byte offset %d is not valid UTF-8", b[i] & 0xFF, i),
                "save the file as UTF-8", l, col);
    }

    static int sequenceWidth(byte[] b, int i) {
        int c = b[i] & 0xFF;
        if (c < 0x80) return 1;
        if (c >= 0xC2 && c <= 0xDF) return cont(b, i + 1, 0x80, 0xBF) ? 2 : 0;
        if (c == 0xE0) return cont(b, i + 1, 0xA0, 0xBF) && cont(b, i + 2, 0x80, 0xBF) ? 3 : 0;
        if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(b, i + 1, 0x80, 0xBF) && cont(b, i + 2, 0x80, 0xBF) ? 3 : 0;
        if (c == 0xED) return cont(b, i + 1, 0x80, 0x9F) && cont(b, i + 2, 0x80, 0xBF) ? 3 : 0;
        if (c == 0xF0) return cont(b, i + 1, 0x90, 0xBF) && cont(b, i + 2, 0x80, 0xBF) && cont(b, i + 3, 0x80, 0xBF) ? 4 : 0;
        if (c >= 0xF1 && c <= 0xF3) return cont(b, i + 1, 0x80, 0xBF) && cont(b, i + 2, 0x80, 0xBF) && cont(b, i + 3, 0x80, 0xBF) ? 4 : 0;
        if (c == 0xF4) return cont(b, i + 1, 0x80, 0x8F) && cont(b, i + 2, 0x80, 0xBF) && cont(b, i + 3, 0x80, 0xBF) ? 4 : 0;
        return 0;
    }

    private static boolean cont(byte[] b, int k, int lo, int hi) {
        if (k >= b.length) return false;
        int c = b[k] & 0xFF;
        return c >= lo && c <= hi;
    }

    /** A growable byte buffer for strings with escapes. */
    private static final class ByteBuf {
        byte[] data = new byte[32];
        int size;

        void add(int c) {
            if (size == data.length) data = java.util.Arrays.copyOf(data, size * 2);
            data[size++] = (byte) c;
        }

        void add(byte[] src, int from, int n) {
            if (size + n > data.length) data = java.util.Arrays.copyOf(data, Math.max(size * 2, size + n));
            System.arraycopy(src, from, data, size, n);
            size += n;
        }

        String string() {
            return new String(data, 0, size, StandardCharsets.UTF_8);
        }
    }
}
