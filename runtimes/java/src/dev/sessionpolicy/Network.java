package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** Network reachability reported with an event. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum Network {
    ONLINE("online"),
    OFFLINE("offline");

    private static final Network[] ALL = values();

    private final String wireName;

    Network(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "online"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable Network fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (Network v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
