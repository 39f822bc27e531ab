package dev.sessionpolicy;

/**
 * Text rules the Swift engine follows, made explicit. Names and words are compared scalar by
 * scalar (docs/machine-format.md, "String equality"): no Unicode normalization, so no table of
 * the JVM's or the device's enters a decision. This class reads no Unicode property either: the
 * white space it knows is a fixed list.
 */
final class Text {
    private Text() {}

    /**
     * Whether two strings hold the same Unicode scalars: {@code String.equals} (the same UTF-16
     * code units, which for well-formed text are the same scalars). A precomposed {@code é} and
     * {@code e} with a combining accent are two names.
     */
    static boolean same(String a, String b) {
        if (a == b) return true;
        if (a == null || b == null) return false;
        return a.equals(b);
    }

    /** Whether {@code list} holds a string with the scalars of {@code s}. */
    static boolean contains(String[] list, String s) {
        for (String x : list) {
            if (same(x, s)) return true;
        }
        return false;
    }

    /**
     * Foundation's {@code CharacterSet.whitespacesAndNewlines}: Unicode category Zs, Zl, Zp,
     * U+0009 to U+000D and U+0085, as a fixed list (the JavaScript runtime's) rather than
     * {@code Character.getType}, whose answer is the JVM's Unicode version (U+180E was Zs before
     * Unicode 6.3).
     */
    static boolean isWhitespaceOrNewline(int cp) {
        return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680
                || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F
                || cp == 0x3000;
    }

    /** A name as the strict reader accepts it: not empty, no whitespace at either end. */
    static boolean isName(String s) {
        if (s.isEmpty()) return false;
        return !isWhitespaceOrNewline(s.codePointAt(0)) && !isWhitespaceOrNewline(s.codePointBefore(s.length()));
    }

    /**
     * Whether {@code s} is an integer as the engine reads one ({@code AttributeType.integer}): an
     * optional {@code -}, then decimal digits (leading zeros allowed), within 64 bits. No {@code +}.
     */
    static boolean isInteger(String s) {
        int n = s.length();
        if (n == 0) return false;
        int i = 0;
        char c0 = s.charAt(0);
        if (c0 == '-') {
            if (n == 1) return false;
            i = 1;
        }
        long v = 0; // accumulated negatively, so that Long.MIN_VALUE is representable
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') return false;
            int d = c - '0';
            if (v < Long.MIN_VALUE / 10 || v * 10 < Long.MIN_VALUE + d) return false;
            v = v * 10 - d;
        }
        return c0 == '-' || v != Long.MIN_VALUE;
    }

    /** Negative, zero or positive: {@code a} and {@code b} in the order of their UTF-8 bytes (of their code points). */
    static int compareUtf8(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) return x < y ? -1 : 1;
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return (a.length() - i) - (b.length() - j) == 0 ? 0 : (i < a.length() ? 1 : -1);
    }

    /** The value of {@code s}, which {@link #isInteger} accepts. */
    static long integerValue(String s) {
        int n = s.length();
        int i = 0;
        char c0 = s.charAt(0);
        if (c0 == '-') i = 1;
        long v = 0;
        for (; i < n; i++) v = v * 10 - (s.charAt(i) - '0');
        return c0 == '-' ? v : -v;
    }
}
