package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** How the user authenticated at the last IdP login. {@code NONE} is written {@code none}. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum AuthMode {
    NONE("none"),
    BIOMETRIC("biometric"),
    PASSWORD("password"),
    PIN("pin");

    private static final AuthMode[] ALL = values();

    private final String wireName;

    AuthMode(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "none"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable AuthMode fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (AuthMode v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }

    /** True for modes that need the IdP and can never re-authenticate offline (password, PIN). */
    public boolean needsIdp() {
        return this == PASSWORD || this == PIN;
    }
}
