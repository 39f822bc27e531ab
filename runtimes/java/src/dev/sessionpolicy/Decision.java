package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** The four decisions. A closed set by design; an outcome without a decision has {@code null}. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum Decision {
    ALLOW("allow"),
    REQUIRE_BIOMETRIC("require_biometric"),
    IDP_LOGIN("idp_login"),
    WIPE("wipe");

    private static final Decision[] ALL = values();

    private final String wireName;

    Decision(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "allow"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable Decision fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (Decision v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
