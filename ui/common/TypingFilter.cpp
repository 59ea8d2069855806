#include "common/TypingFilter.h"

#include <QLineEdit>
#include <QTimer>

namespace mapi::ui {

void whenTypingSettles(QLineEdit *edit, std::function<void()> apply)
{
    auto *settle = new QTimer(edit);
    settle->setSingleShot(true);
    settle->setInterval(kTypingSettleMs);
    QObject::connect(settle, &QTimer::timeout, edit, apply);
    QObject::connect(edit, &QLineEdit::textChanged, settle, qOverload<>(&QTimer::start));
    QObject::connect(edit, &QLineEdit::returnPressed, edit, [settle, apply] {
        settle->stop();
        apply();
    });
}

} // namespace mapi::ui
