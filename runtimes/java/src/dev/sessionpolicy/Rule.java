package dev.sessionpolicy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A policy rule as the machine keeps it: name, events, checked condition, and its text. */
final class Rule {
    final String name;
    final EventKind[] on;
    final Condition condition;
    final String text;

    Rule(String name, EventKind[] on, Condition condition, String text) {
        this.name = name;
        this.on = on;
        this.condition = condition;
        this.text = text;
    }

    Map<String, Object> canonical() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        List<Object> events = new ArrayList<>();
        for (EventKind e : on) events.add(e.wireName());
        m.put("on", events);
        m.put("condition", condition.canonical());
        m.put("text", text);
        return m;
    }
}
