#include "common/VectorStateGuard.h"

#include "common/VectorState.h"

#include <QCoreApplication>
#include <QPointer>

namespace mapi::ui {

namespace {

class VectorStateGuard : public QObject
{
public:
    using QObject::QObject;
    bool eventFilter(QObject *, QEvent *) override
    {
        clearUpperVectorState();
        return false; // never consumes an event
    }
};

} // namespace

void installVectorStateGuard()
{
    static QPointer<QObject> installed; // gone with its application
    QCoreApplication *app = QCoreApplication::instance();
    if (!app || installed)
        return;
    installed = new VectorStateGuard(app); // owned by the application
    app->installEventFilter(installed);
}

} // namespace mapi::ui
