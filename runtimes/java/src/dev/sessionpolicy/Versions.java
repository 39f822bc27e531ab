package dev.sessionpolicy;

/**
 * Dotted versions ({@code 2.4.0}) as the Swift engine reads them: 1 to 4 parts split on
 * {@code .}, each a non-negative integer as Swift's {@code Int(text)} reads it (so {@code +2}
 * and {@code -0} are parts too), compared part by part with missing parts 0.
 */
final class Versions {
    private Versions() {}

    /** The parts of {@code text}, or null when it is not a version. */
    static long[] parse(String text) {
        int n = count(text);
        if (n < 0) return null;
        long[] parts = new long[n];
        int start = 0;
        for (int i = 0; i < n; i++) {
            int end = text.indexOf('.', start);
            if (end < 0) end = text.length();
            parts[i] = Text.integerValue(text.substring(start, end));
            start = end + 1;
        }
        return parts;
    }

    /** How many parts {@code text} has, or -1 when it is not a version. Allocates nothing. */
    static int count(String text) {
        int parts = 0;
        int start = 0;
        int n = text.length();
        while (true) {
            int end = start;
            while (end < n && text.charAt(end) != '.') end++;
            if (!validPart(text, start, end)) return -1;
            parts++;
            if (parts > 4) return -1;
            if (end == n) return parts;
            start = end + 1;
        }
    }

    private static boolean validPart(String s, int from, int to) {
        if (from == to) return false;
        int i = from;
        long v = 0; // decimal digits only, no sign
        for (; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') return false;
            int d = c - '0';
            if (v > (Long.MAX_VALUE - d) / 10) {
                // Past Int.max: only Int.min itself, which is negative, would still be an Int.
                return false;
            }
            v = v * 10 + d;
        }
        return true;
    }

    private static long partValue(String s, int from, int to) {
        int i = from;
        long v = 0;
        for (; i < to; i++) v = v * 10 + (s.charAt(i) - '0');
        return v;
    }

    /**
     * Compares the version written {@code raw} with {@code parts}: negative, zero or positive,
     * or {@code Integer.MIN_VALUE} when {@code raw} is not a version. Allocates nothing.
     */
    static int compare(String raw, long[] parts) {
        int n = count(raw);
        if (n < 0) return Integer.MIN_VALUE;
        int len = Math.max(n, parts.length);
        int start = 0;
        for (int i = 0; i < len; i++) {
            long x = 0;
            if (i < n) {
                int end = start;
                while (end < raw.length() && raw.charAt(end) != '.') end++;
                x = partValue(raw, start, end);
                start = end + 1;
            }
            long y = i < parts.length ? parts[i] : 0;
            if (x != y) return x < y ? -1 : 1;
        }
        return 0;
    }
}
