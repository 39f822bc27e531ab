// The system's libyaml (Debian: libyaml-dev; macOS: brew install libyaml), found through
// pkg-config's `yaml-0.1`. Its own header, never a copy: the layout of its structs is the one
// of the library that is linked.
#include <yaml.h>
