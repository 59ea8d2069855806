// A filter box that does not refilter on every keystroke: `apply` runs once typing has paused for
// kTypingSettleMs, or at once on Return. GUI thread.
#pragma once

#include <functional>

class QLineEdit;

namespace mapi::ui {

// Long enough to skip the intermediate words of a typed filter, short enough to feel immediate.
constexpr int kTypingSettleMs = 150;

// The timer is a child of `edit`: it lives and dies with the box.
void whenTypingSettles(QLineEdit *edit, std::function<void()> apply);

} // namespace mapi::ui
