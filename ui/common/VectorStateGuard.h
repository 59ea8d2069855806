// An application-wide event filter that clears the AVX registers' upper halves before every
// event the GUI thread delivers (core/common/VectorState.h says why: Qt's GUI code leaves them
// dirty, and this project's SSE code then runs up to 15× slower on recent Intel CPUs).
#pragma once

namespace mapi::ui {

// Installs the filter on the running QCoreApplication, once. Thread: the GUI thread, after the
// application object exists.
void installVectorStateGuard();

} // namespace mapi::ui
