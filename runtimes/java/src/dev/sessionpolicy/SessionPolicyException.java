package dev.sessionpolicy;

import androidx.annotation.NonNull;
import java.util.Collections;
import java.util.List;

/**
 * An input was refused: a machine document, a session state or an event. Carries the
 * diagnostics, the first of which is the refusal's code ({@link #code()}). Nothing is decided
 * from a refused input.
 */
public final class SessionPolicyException extends Exception {
    private static final long serialVersionUID = 1L;

    private final List<Diagnostic> diagnostics;

    SessionPolicyException(List<Diagnostic> diagnostics) {
        super(diagnostics.isEmpty() ? "refused" : diagnostics.get(0).toString());
        this.diagnostics = Collections.unmodifiableList(diagnostics);
    }

    SessionPolicyException(Diagnostic diagnostic) {
        this(Collections.singletonList(diagnostic));
    }

    /** Every problem found, in the order found; never empty. */
    public @NonNull List<Diagnostic> diagnostics() {
        return diagnostics;
    }

    /** The first diagnostic's code. */
    public @NonNull String code() {
        return diagnostics.get(0).code();
    }
}
