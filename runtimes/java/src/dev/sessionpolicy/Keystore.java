package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** Where the device keeps keys. {@code NONE} (no keystore) is written {@code none}. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum Keystore {
    HARDWARE("hardware"),
    SOFTWARE("software"),
    NONE("none");

    private static final Keystore[] ALL = values();

    private final String wireName;

    Keystore(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "hardware"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable Keystore fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (Keystore v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
