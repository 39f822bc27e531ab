package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/**
 * What {@link MachineUpdater} did with an envelope (docs/envelope.md): installed it, left
 * everything as it was because it carries the machine already held, or refused it with the code
 * of the first check that failed. Immutable.
 */
public final class UpdateResult {
    /** The three results. */
    public enum Kind {
        /** The envelope passed every check; its machine is the one the updater decides with now: store {@link SignedMachine#envelope()}. */
        INSTALLED,
        /** The envelope passed every check but carries the machine already held (the same digest): nothing changes. */
        UNCHANGED,
        /** A check failed ({@link #code()}): nothing changes, the updater keeps the machine it held. */
        REFUSED
    }

    private final Kind kind;
    private final String code;
    private final String message;
    private final SignedMachine installed;

    private UpdateResult(Kind kind, String code, String message, SignedMachine installed) {
        this.kind = kind;
        this.code = code;
        this.message = message;
        this.installed = installed;
    }

    static UpdateResult installed(SignedMachine machine) {
        return new UpdateResult(Kind.INSTALLED, null, null, machine);
    }

    static UpdateResult unchanged() {
        return new UpdateResult(Kind.UNCHANGED, null, null, null);
    }

    static UpdateResult refused(String code, String message) {
        return new UpdateResult(Kind.REFUSED, code, message, null);
    }

    /** Installed, unchanged or refused. */
    public @NonNull Kind kind() {
        return kind;
    }

    /**
     * For a refusal, the code of the first check that failed ({@code envelope-too-large},
     * {@code envelope-malformed}, {@code unsupported-envelope}, {@code unsupported-algorithm},
     * {@code signature-missing}, {@code unpinned-key}, {@code bad-signature}, {@code wrong-policy},
     * {@code not-yet-valid}, {@code expired}, {@code machine-refused}, {@code machine-mismatch},
     * {@code rollback}); otherwise {@code null}.
     */
    public @Nullable String code() {
        return code;
    }

    /**
     * For a refusal, what was wrong, for logs (for {@code machine-refused}, it names the machine
     * document's own refusal code); otherwise {@code null}.
     */
    public @Nullable String message() {
        return message;
    }

    /** For {@link Kind#INSTALLED}, the machine installed; otherwise {@code null}. */
    public @Nullable SignedMachine machine() {
        return installed;
    }

    @Override
    public String toString() {
        switch (kind) {
            case INSTALLED:
                return "installed " + installed;
            case UNCHANGED:
                return "unchanged";
            default:
                return "refused " + code + ": " + message;
        }
    }
}
