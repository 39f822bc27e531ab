package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/**
 * A point in time with millisecond precision, read and written as RFC 3339 text exactly as the
 * Swift engine does ({@code 2026-03-01T09:30:00Z}, {@code .250} when there are milliseconds).
 * Years 0001 to 9999 only. Immutable.
 */
public final class Timestamp implements Comparable<Timestamp> {
    /** 0001-01-01T00:00:00Z. */
    public static final long EARLIEST_MILLIS = -62_135_596_800_000L;
    /** 9999-12-31T23:59:59.999Z. */
    public static final long LATEST_MILLIS = 253_402_300_799_999L;

    private final long millis;

    private Timestamp(long millis) {
        this.millis = millis;
    }

    /**
     * The time {@code millis} milliseconds after the Unix epoch.
     *
     * @throws IllegalArgumentException outside the years 0001 to 9999
     */
    public static @NonNull Timestamp ofEpochMilli(long millis) {
        if (millis < EARLIEST_MILLIS || millis > LATEST_MILLIS) {
            throw new IllegalArgumentException("time outside the years 0001 to 9999: " + millis);
        }
        return new Timestamp(millis);
    }

    /**
     * Parses RFC 3339 as the Swift engine does: {@code YYYY-MM-DDTHH:MM:SS}, an optional fraction
     * (milliseconds kept, finer digits dropped), {@code Z} or {@code ±HH:MM}; a plain date means
     * midnight UTC.
     *
     * @throws IllegalArgumentException for anything else
     */
    public static @NonNull Timestamp parse(@NonNull String text) {
        long m = parseMillis(text);
        if (m == Long.MIN_VALUE) throw new IllegalArgumentException("not an RFC 3339 time: " + text);
        return new Timestamp(m);
    }

    /** Like {@link #parse(String)}, but {@code null} for text that is not a time. */
    public static @Nullable Timestamp tryParse(@Nullable String text) {
        if (text == null) return null;
        long m = parseMillis(text);
        return m == Long.MIN_VALUE ? null : new Timestamp(m);
    }

    /** Milliseconds since the Unix epoch. */
    public long epochMilli() {
        return millis;
    }

    @Override
    public int compareTo(Timestamp o) {
        return Long.compare(millis, o.millis);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Timestamp && ((Timestamp) o).millis == millis;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(millis);
    }

    /** RFC 3339 in UTC, as the Swift engine writes it. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(24);
        format(millis, sb);
        return sb.toString();
    }

    // ---- parsing and formatting, shared with the readers and writers ----

    /** The milliseconds of {@code text}, or {@code Long.MIN_VALUE} when it is not a time. */
    static long parseMillis(String b) {
        int n = b.length();
        for (int i = 0; i < n; i++) {
            if (b.charAt(i) >= 0x80) return Long.MIN_VALUE;
        }
        if (n < 10) return Long.MIN_VALUE;
        int y = num(b, 0, 4), mo = num(b, 5, 2), d = num(b, 8, 2);
        if (y < 0 || b.charAt(4) != '-' || mo < 0 || b.charAt(7) != '-' || d < 0) return Long.MIN_VALUE;
        if (mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y)) return Long.MIN_VALUE;
        int h = 0, mi = 0, s = 0, offset = 0, ms = 0;
        if (n > 10) {
            if (n < 20) return Long.MIN_VALUE;
            char t = b.charAt(10);
            if (t != 'T' && t != 't' && t != ' ') return Long.MIN_VALUE;
            int hh = num(b, 11, 2), mm = num(b, 14, 2), ss = num(b, 17, 2);
            if (hh < 0 || b.charAt(13) != ':' || mm < 0 || b.charAt(16) != ':' || ss < 0) return Long.MIN_VALUE;
            if (hh >= 24 || mm >= 60 || ss >= 60) return Long.MIN_VALUE;
            h = hh;
            mi = mm;
            s = ss;
            int i = 19;
            if (i < n && b.charAt(i) == '.') {
                i++;
                int start = i;
                while (i < n && b.charAt(i) >= '0' && b.charAt(i) <= '9') {
                    if (i - start < 3) ms = ms * 10 + (b.charAt(i) - '0');
                    i++;
                }
                if (i == start) return Long.MIN_VALUE;
                for (int k = Math.min(3, i - start); k < 3; k++) ms *= 10;
            }
            if (i >= n) return Long.MIN_VALUE;
            char z = b.charAt(i);
            if (z == 'Z' || z == 'z') {
                if (i + 1 != n) return Long.MIN_VALUE;
            } else if (z == '+' || z == '-') {
                if (i + 6 != n) return Long.MIN_VALUE;
                int oh = num(b, i + 1, 2), om = num(b, i + 4, 2);
                if (oh < 0 || b.charAt(i + 3) != ':' || om < 0 || oh >= 24 || om >= 60) return Long.MIN_VALUE;
                offset = (oh * 3600 + om * 60) * (z == '+' ? 1 : -1);
            } else {
                return Long.MIN_VALUE;
            }
        }
        if (y < 1) return Long.MIN_VALUE;
        long days = daysFromCivil(y, mo, d);
        long seconds = days * 86_400L + (h * 3600 + mi * 60 + s - offset);
        long m = seconds * 1000 + ms;
        return m < EARLIEST_MILLIS || m > LATEST_MILLIS ? Long.MIN_VALUE : m;
    }

    private static int num(String b, int from, int count) {
        if (from + count > b.length()) return -1;
        int v = 0;
        for (int i = from; i < from + count; i++) {
            char c = b.charAt(i);
            if (c < '0' || c > '9') return -1;
            v = v * 10 + (c - '0');
        }
        return v;
    }

    static int daysIn(int month, int year) {
        switch (month) {
            case 2:
                return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28;
            case 4:
            case 6:
            case 9:
            case 11:
                return 30;
            default:
                return 31;
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days, as the Swift engine uses them.
    static long daysFromCivil(long year, long month, long day) {
        long y = month <= 2 ? year - 1 : year;
        long era = (y >= 0 ? y : y - 399) / 400;
        long yoe = y - era * 400;
        long mp = (month + 9) % 12;
        long doy = (153 * mp + 2) / 5 + day - 1;
        long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146_097 + doe - 719_468;
    }

    /** Appends the RFC 3339 text of {@code millis} (years 0001 to 9999) to {@code out}. */
    static void format(long millis, StringBuilder out) {
        long secs = millis >= 0 ? millis / 1000 : (millis - 999) / 1000;
        int ms = (int) (millis - secs * 1000);
        long days = secs >= 0 ? secs / 86_400 : (secs - 86_399) / 86_400;
        int rem = (int) (secs - days * 86_400);
        long z = days + 719_468;
        long era = (z >= 0 ? z : z - 146_096) / 146_097;
        long doe = z - era * 146_097;
        long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        long mp = (5 * doy + 2) / 153;
        int d = (int) (doy - (153 * mp + 2) / 5 + 1);
        int m = (int) (mp < 10 ? mp + 3 : mp - 9);
        int y = (int) (yoe + era * 400 + (m <= 2 ? 1 : 0));
        two(y / 100, out);
        two(y % 100, out);
        out.append('-');
        two(m, out);
        out.append('-');
        two(d, out);
        out.append('T');
        two(rem / 3600, out);
        out.append(':');
        two(rem % 3600 / 60, out);
        out.append(':');
        two(rem % 60, out);
        if (ms > 0) {
            out.append('.').append((char) ('0' + ms / 100));
            two(ms % 100, out);
        }
        out.append('Z');
    }

    private static void two(int v, StringBuilder out) {
        out.append((char) ('0' + v / 10)).append((char) ('0' + v % 10));
    }
}
