package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** What the device's integrity check says. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum Integrity {
    OK("ok"),
    COMPROMISED("compromised");

    private static final Integrity[] ALL = values();

    private final String wireName;

    Integrity(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "ok"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable Integrity fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (Integrity v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
