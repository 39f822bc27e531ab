package dev.sessionpolicy;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/**
 * One problem found in an input: a stable kebab-case code (the same as the Swift engine's,
 * documented in {@code docs/diagnostics.md}), a message, where (1-based line and column, in
 * Unicode scalars), and how to fix it. Immutable.
 */
public final class Diagnostic {
    private final String code;
    private final String message;
    private final String help;
    private final int line;
    private final int column;

    Diagnostic(String code, String message, String help, int line, int column) {
        this.code = code;
        this.message = message;
        this.help = help;
        this.line = line;
        this.column = column;
    }

    /** The stable code, for example {@code unknown-key} or {@code digest-mismatch}. */
    public @NonNull String code() {
        return code;
    }

    /** What is wrong, one lowercase line. */
    public @NonNull String message() {
        return message;
    }

    /** How to fix it, if there is a hint. */
    public @Nullable String help() {
        return help;
    }

    /** The 1-based line of the input where the problem is. */
    public int line() {
        return line;
    }

    /** The 1-based column (in Unicode scalars) where the problem is. */
    public int column() {
        return column;
    }

    @Override
    public String toString() {
        return line + ":" + column + ": error: " + message + " [" + code + "]" + (help == null ? "" : "\n  help: " + help);
    }
}
