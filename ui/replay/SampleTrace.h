// The sample trace embedded in the program: about a minute of the demo system (40 agents,
// extended mode) recorded with map-inspector-cli (resources/sample/README.md), so that a first
// run has something to show without a MAP server.
#pragma once

#include <QString>

namespace mapi::ui {

// Resource path of the sample (qt_add_resources in ui/CMakeLists.txt, prefix /samples).
QString sampleTraceResource();

// The trace loader reads files: copies the sample to the cache folder (once, again when the
// program carries a different one) and returns that file's path, where its bookmarks are kept
// too. Empty, with `error` set, when the cache folder cannot be written.
QString sampleTraceFile(QString *error);

} // namespace mapi::ui
