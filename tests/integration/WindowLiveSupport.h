// What the window's live tests share (tst_window_live, tst_window_recording): Qt warnings as
// failures, a dialog answered, the demo system's options, the window connected and filled, and a
// model's state without what depends on the clock.
#pragma once

#include "DemoSystem.h"
#include "MainWindow.h"
#include "controllers/ConnectionController.h"
#include "controllers/TraceController.h"
#include "model/StateJson.h"
#include "session/InspectorSession.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QPointer>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QtTest>

#include <cstdio>
#include <functional>

namespace mapi::test {

inline void failOnWarnings(QtMsgType type, const QMessageLogContext &, const QString &message)
{
    if (type == QtDebugMsg || type == QtInfoMsg)
        return;
    if (message.contains(QLatin1String("XDG_RUNTIME_DIR")) || message.contains(QLatin1String("This plugin does not support")))
        return;
    std::fprintf(stderr, "Qt warning turned into a failure: %s\n", qPrintable(message));
    std::abort();
}

// Runs `fill` on the next modal dialog that opens, then presses its OK button.
inline void answerNextDialog(std::function<void(QDialog *)> fill)
{
    QTimer::singleShot(200, [fill] {
        auto *dialog = qobject_cast<QDialog *>(QApplication::activeModalWidget());
        if (!dialog) {
            answerNextDialog(fill);
            return;
        }
        fill(dialog);
        auto *buttons = dialog->findChild<QDialogButtonBox *>();
        QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
        // A dialog that refused OK (or a failed check in `fill`) must fail the test, not hang it.
        QPointer<QDialog> guard(dialog);
        QTimer::singleShot(2000, [guard] {
            if (guard && guard->isVisible()) {
                std::fprintf(stderr, "dialog %s still open after OK: rejected by the test\n", qPrintable(guard->windowTitle()));
                guard->reject();
            }
        });
    });
}

inline QAbstractItemView *agentsView(ui::MainWindow &window)
{
    return window.dock(QStringLiteral("agentsDock"))->findChild<QTableView *>();
}

// The extended demo system both live-to-replay tests observe: 20 agents, enough traffic.
inline const QStringList kDemoOptions{QStringLiteral("--agents"), QStringLiteral("20"), QStringLiteral("--rate"),
                               QStringLiteral("40")};

// The window connected (observer) to `url`, live, with at least 20 agents and 50 messages.
inline void connectAndFill(ui::MainWindow &window, const QString &url)
{
    window.show();
    ClientOptions options;
    options.url = QUrl(url);
    window.connection()->connectTo(options, true);
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live, 15000);
    const SystemStore *store = window.session()->store();
    QTRY_VERIFY_WITH_TIMEOUT(store->agents().size() >= 20 && store->messages().size() >= 50, 20000);
}

inline Json modelState(const SystemStore &store)
{
    StateJsonOptions options;
    options.includeActions = false;
    Json state = stateToJson(store, options);
    for (Json &agent : state["agents"])
        agent.erase("health"); // a function of the clock, not of the frames
    return state;
}


} // namespace mapi::test
