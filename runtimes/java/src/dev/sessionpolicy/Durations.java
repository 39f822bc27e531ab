package dev.sessionpolicy;

/**
 * Durations as the Swift engine reads them ({@code TimeSpan.parse}): whole numbers each
 * followed by a unit, {@code w d h m s}, such as {@code 7d} or {@code 1d12h}; no sign, no
 * spaces, at most 100 years.
 */
final class Durations {
    private Durations() {}

    static final long MAXIMUM_SECONDS = 100L * 366 * 86_400;

    /** The seconds of {@code text}, or -1 when it is not a duration. Allocates nothing. */
    static long parseSeconds(String text) {
        int n = text.length();
        if (n == 0 || text.charAt(0) == '-') return -1;
        long total = 0;
        long number = -1;
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9') {
                long v = (number < 0 ? 0 : number) * 10 + (c - '0');
                if (v > MAXIMUM_SECONDS) return -1;
                number = v;
                continue;
            }
            long unit;
            switch (c) {
                case 'w': unit = 604_800; break;
                case 'd': unit = 86_400; break;
                case 'h': unit = 3600; break;
                case 'm': unit = 60; break;
                case 's': unit = 1; break;
                default: return -1;
            }
            if (number < 0) return -1;
            total += number * unit;
            if (total > MAXIMUM_SECONDS) return -1;
            number = -1;
        }
        return number >= 0 ? -1 : total;
    }
}
