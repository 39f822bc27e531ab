package dev.sessionpolicy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The conformance suite's files, and the members of a vector line as written (never re-serialized). */
final class Vectors {
    private Vectors() {}

    /** {@code spec/conformance}: the system property {@code conformance.dir}, else found from the current directory. */
    static Path dir() {
        String p = System.getProperty("conformance.dir");
        if (p != null && !p.isEmpty()) return Paths.get(p);
        Path d = Paths.get("").toAbsolutePath();
        for (int i = 0; i < 6 && d != null; i++, d = d.getParent()) {
            Path c = d.resolve("spec/conformance");
            if (Files.isDirectory(c)) return c;
        }
        throw new IllegalStateException("spec/conformance not found: set -Dconformance.dir");
    }

    static List<Path> machines() throws IOException {
        try (Stream<Path> s = Files.list(dir().resolve("machines"))) {
            return s.filter(p -> p.toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
    }

    static byte[] machine(String policy) throws IOException {
        return Files.readAllBytes(dir().resolve("machines").resolve(policy + ".json"));
    }

    static List<String> lines(String policy) throws IOException {
        List<String> out = new ArrayList<>();
        for (String l : Files.readAllLines(dir().resolve("vectors").resolve(policy + ".jsonl"), StandardCharsets.UTF_8)) {
            if (!l.isEmpty()) out.add(l);
        }
        return out;
    }

    /**
     * The raw text of top-level member {@code key} of the JSON object {@code line}, exactly as
     * written, or null when absent.
     */
    static String member(String line, String key) {
        int depth = 0;
        boolean inString = false;
        int keyStart = -1;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                    if (depth == 1 && keyStart >= 0) {
                        String k = line.substring(keyStart + 1, i);
                        keyStart = -1;
                        int colon = i + 1;
                        if (colon < line.length() && line.charAt(colon) == ':' && k.equals(key)) return value(line, colon + 1);
                    }
                }
                continue;
            }
            if (c == '"') {
                inString = true;
                boolean isKey = depth == 1 && (line.charAt(i - 1) == '{' || line.charAt(i - 1) == ',');
                keyStart = isKey ? i : -1;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
        return null;
    }

    /** The JSON value starting at {@code from}, as written. */
    private static String value(String s, int from) {
        int depth = 0;
        boolean inString = false;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (inString) {
                if (c == '\\') i++;
                else if (c == '"') {
                    inString = false;
                    if (depth == 0) return s.substring(from, i + 1);
                }
                continue;
            }
            if (c == '"') inString = true;
            else if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') {
                if (depth == 0) return s.substring(from, i);
                depth--;
                if (depth == 0) return s.substring(from, i + 1);
            } else if (c == ',' && depth == 0) {
                return s.substring(from, i);
            }
        }
        return s.substring(from);
    }

    /** A JSON string member's text (the vectors' ids and codes need no unescaping beyond quotes). */
    static String text(String raw) {
        return raw == null ? null : raw.substring(1, raw.length() - 1).replace("\\\"", "\"").replace("\\\\", "\\");
    }
}
