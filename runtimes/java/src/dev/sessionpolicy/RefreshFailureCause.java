package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** Why a token refresh failed. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum RefreshFailureCause {
    NETWORK("network"),
    INVALID_TOKEN("invalid_token");

    private static final RefreshFailureCause[] ALL = values();

    private final String wireName;

    RefreshFailureCause(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "network"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable RefreshFailureCause fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (RefreshFailureCause v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
