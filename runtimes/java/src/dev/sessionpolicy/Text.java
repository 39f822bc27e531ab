package dev.sessionpolicy;

import java.text.Normalizer;

/** Text rules the Swift engine follows implicitly, made explicit. */
final class Text {
    private Text() {}

    /**
     * Whether two strings are equal as Swift compares strings: by canonical equivalence (a
     * precomposed {@code é} equals {@code e} and a combining accent). Allocates nothing unless
     * the strings differ and one of them is not ASCII.
     */
    static boolean same(String a, String b) {
        if (a == b) return true;
        if (a == null || b == null) return false;
        if (a.equals(b)) return true;
        if (isAscii(a) && isAscii(b)) return false;
        return Normalizer.normalize(a, Normalizer.Form.NFD).equals(Normalizer.normalize(b, Normalizer.Form.NFD));
    }

    /** A form of {@code s} equal for canonically equivalent strings (for sets of keys). */
    static String canonicalKey(String s) {
        return isAscii(s) ? s : Normalizer.normalize(s, Normalizer.Form.NFD);
    }

    static boolean isAscii(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            if (s.charAt(i) >= 0x80) return false;
        }
        return true;
    }

    /** Whether {@code list} holds a string equal to {@code s} (canonical equivalence). */
    static boolean contains(String[] list, String s) {
        for (String x : list) {
            if (same(x, s)) return true;
        }
        return false;
    }

    /**
     * Foundation's {@code CharacterSet.whitespacesAndNewlines}: Unicode category Zs, Zl, Zp,
     * U+0009 to U+000D and U+0085.
     */
    static boolean isWhitespaceOrNewline(int cp) {
        if (cp >= 0x09 && cp <= 0x0D) return true;
        if (cp == 0x85) return true;
        int t = Character.getType(cp);
        return t == Character.SPACE_SEPARATOR || t == Character.LINE_SEPARATOR || t == Character.PARAGRAPH_SEPARATOR;
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
