// The first pass over a YAML text, before Yams builds its tree (see YAMLSyntax.swift): Yams
// hashes every mapping key whole to check for duplicates and sorts duplicated keys, so keys
// that are lists or mappings, or aliases of large nodes, cost time exponential in their depth
// or proportional to an alias's expansion (a 465-byte file took 10 s). Here libyaml's events
// are read one by one, in constant memory, and the first such node stops the scan.

#define YAML_DECLARE_STATIC
#include "libyaml/yaml.h"
#include "YAMLEventScan.h"

/// What an open collection expects next: a list's item, a mapping's key or a mapping's value.
enum Expecting { Item, Key, Value };

/// The deepest nesting followed; deeper documents are refused by libyaml's own bound first.
#define MAX_FRAMES 4096

static yaml_char_t *anchor_of(const yaml_event_t *event) {
    switch (event->type) {
    case YAML_SCALAR_EVENT: return event->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT: return event->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT: return event->data.mapping_start.anchor;
    default: return NULL;
    }
}

SPYAMLScanResult sp_yaml_scan(const unsigned char *input, size_t length, long maxNodes) {
    SPYAMLScanResult result = {SPYAMLScanOK, 0, 0};
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return result;
    yaml_parser_set_input_string(&parser, input, length);
    unsigned char frames[MAX_FRAMES];
    int depth = 0;
    long nodes = 0;
    for (;;) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) break;  // a syntax error: Yams reports it
        yaml_event_type_t type = event.type;
        SPYAMLScanCode code = SPYAMLScanOK;
        int opens = type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT;
        if (opens || type == YAML_SCALAR_EVENT || type == YAML_ALIAS_EVENT) {
            nodes += 1;
            int isKey = depth > 0 && frames[depth - 1] == Key;
            if (nodes > maxNodes) {
                code = SPYAMLScanTooManyNodes;
            } else if (type == YAML_ALIAS_EVENT) {
                code = SPYAMLScanAlias;
            } else if (anchor_of(&event) != NULL) {
                code = SPYAMLScanAnchor;
            } else if (isKey && opens) {
                code = type == YAML_SEQUENCE_START_EVENT ? SPYAMLScanListKey : SPYAMLScanMappingKey;
            }
            if (depth > 0 && frames[depth - 1] != Item) frames[depth - 1] = frames[depth - 1] == Key ? Value : Key;
            if (opens && code == SPYAMLScanOK) {
                if (depth == MAX_FRAMES) {
                    yaml_event_delete(&event);
                    break;  // left to libyaml's bound and Yams
                }
                frames[depth++] = type == YAML_MAPPING_START_EVENT ? Key : Item;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            if (depth > 0) depth -= 1;
        }
        if (code != SPYAMLScanOK) {
            result.code = code;
            result.line = event.start_mark.line + 1;
            result.column = event.start_mark.column + 1;
        }
        yaml_event_delete(&event);
        if (code != SPYAMLScanOK || type == YAML_STREAM_END_EVENT) break;
    }
    yaml_parser_delete(&parser);
    return result;
}

void sp_yaml_set_max_nest_level(int max) { yaml_set_max_nest_level(max); }
