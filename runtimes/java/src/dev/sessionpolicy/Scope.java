package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/** The OAuth scope the client must request for an offline login. Each constant has the word the JSON forms use ({@link #wireName()}). */
public enum Scope {
    NO_AUTH_OFFLINE("no_auth_offline"),
    BIO_AUTH_OFFLINE("bio_auth_offline"),
    NO_AUTH_GRANT("no_auth_grant"),
    BIO_AUTH_GRANT("bio_auth_grant"),
    BIO_AUTH_GRANT_SE("bio_auth_grant_SE");

    private static final Scope[] ALL = values();

    private final String wireName;

    Scope(String wireName) {
        this.wireName = wireName;
    }

    /** The word as written in JSON (for example {@code "no_auth_offline"}). */
    public @NonNull String wireName() {
        return wireName;
    }

    /** The constant written {@code word}, or {@code null} when there is none. */
    public static @Nullable Scope fromWireName(@Nullable String word) {
        if (word == null) return null;
        for (Scope v : ALL) {
            if (v.wireName.equals(word)) return v;
        }
        return null;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
