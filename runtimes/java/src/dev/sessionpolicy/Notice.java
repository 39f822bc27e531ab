package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** Notices for the user interface that come with a decision, in name order (the order outcomes list them). Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum Notice {
    NETWORK_REQUIRED("network_required"),
    READ_ONLY("read_only"),
    RETRY_LATER("retry_later"),
    SUGGEST_AUTH_MODE_CHANGE("suggest_auth_mode_change"),
    UNSYNCED_DATA("unsynced_data");

    private static final Notice[] ALL = values();

    private final String wireName;

    Notice(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "network_required"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable Notice fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (Notice v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }

    /** This notice's bit in a set of notices ({@code 1 << ordinal()}). */
    int bit() {
        return 1 << ordinal();
    }
}
