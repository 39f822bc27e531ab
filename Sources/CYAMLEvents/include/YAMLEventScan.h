#ifndef SESSIONPOLICY_YAML_EVENT_SCAN_H
#define SESSIONPOLICY_YAML_EVENT_SCAN_H

#include <stddef.h>

/// What a scan of a YAML text's events found first.
typedef enum {
    /// Nothing below: the text is left to Yams (a syntax error too, which Yams reports).
    SPYAMLScanOK = 0,
    /// A node with an anchor (`&name`).
    SPYAMLScanAnchor = 1,
    /// An alias (`*name`).
    SPYAMLScanAlias = 2,
    /// A mapping key that is a list.
    SPYAMLScanListKey = 3,
    /// A mapping key that is a mapping.
    SPYAMLScanMappingKey = 4,
    /// More nodes than the budget.
    SPYAMLScanTooManyNodes = 5,
} SPYAMLScanCode;

/// The first problem of a scan and where it starts (line and column from 1, in characters).
typedef struct {
    SPYAMLScanCode code;
    size_t line;
    size_t column;
} SPYAMLScanResult;

/// Reads the events of the UTF-8 text `input` (`length` bytes) with libyaml, without building
/// a tree, and stops at the first anchor, alias, key that is a list or a mapping, or node past
/// `maxNodes` (each scalar, alias, list and mapping is a node).
SPYAMLScanResult sp_yaml_scan(const unsigned char *input, size_t length, long maxNodes);

/// Sets libyaml's nesting bound, a global of the library (1000 by default).
void sp_yaml_set_max_nest_level(int max);

#endif
