// The window on a launched MAP system (issue 43 item 1): Connect with "Launch a command" makes a
// stdio: target (a command holding a credential is refused, the URL field gives way to the
// command); the demo system launched on stdio fills the model; the Process output panel appears
// with the command and the child's standard error; Disconnect ends the child and the panel says
// it ended; a trace opened afterwards hides the panel.
#include "WindowLiveSupport.h"

#include "client/StreamTransports.h"
#include "dialogs/ConnectDialog.h"

#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTemporaryDir>
#include <QTextCursor>

using namespace mapi;
using namespace mapi::test;

class StdioWindowTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        qInstallMessageHandler(failOnWarnings);
    }

    void connectDialogLaunchesACommand()
    {
        ui::ConnectDialog dialog;
        auto *launch = dialog.findChild<QLineEdit *>(QStringLiteral("launchCommand"));
        const QList<QLabel *> message = dialog.findChildren<QLabel *>();
        QVERIFY(launch);
        launch->setText(QStringLiteral("node my-system.mjs --stdio"));
        QCOMPARE(dialog.options().url.scheme(), QStringLiteral("stdio"));
        QCOMPARE(launchCommand(dialog.options().url), (QStringList{QStringLiteral("node"), QStringLiteral("my-system.mjs"), QStringLiteral("--stdio")}));
        // A credential on the command line would be shown and remembered: refused, said.
        launch->setText(QStringLiteral("node my-system.mjs --header 'Authorization: Bearer sk-live-0123456789abcdef'"));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        bool said = false;
        for (QLabel *label : message)
            said = said || label->text().contains(QLatin1String("looks like a credential"));
        QVERIFY(said);
        // A profile's stdio: target fills the command, not the URL.
        dialog.setUrl(QStringLiteral("stdio:node other.mjs"));
        QCOMPARE(launch->text(), QStringLiteral("node other.mjs"));
    }

    // A child that floods its stderr (200,000 lines at once): the panel keeps the newest, says
    // how many it did not show, and its header counts them.
    void stderrFloodIsShownBounded()
    {
#ifndef Q_OS_UNIX
        QSKIP("uses sh and seq");
#else
        ui::MainWindow window;
        window.show();
        ClientOptions options;
        options.url = launchUrl(QStringLiteral("sh -c \"seq 1 200000 >&2; sleep 30\""));
        window.connection()->connectTo(options, true);
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("processOutputDock"));
        QVERIFY(dock);
        QTRY_VERIFY(!dock->isHidden());
        auto *output = dock->findChild<QPlainTextEdit *>(QStringLiteral("processOutput"));
        auto *header = dock->findChild<QLabel *>(QStringLiteral("processCommand"));
        QVERIFY(output && header);
        QTRY_VERIFY_WITH_TIMEOUT(output->toPlainText().endsWith(QLatin1String("\n200000")), 15000);
        const QStringList lines = output->toPlainText().split(u'\n');
        QVERIFY2(lines.size() <= int(InspectorSession::kMaxProcessOutputLines), qPrintable(QString::number(lines.size())));
        QVERIFY2(output->toPlainText().contains(QLatin1String("lines not shown: the process wrote faster than they could be kept")),
                 qPrintable(lines.first()));
        QVERIFY2(header->text().contains(QLatin1String("older lines not kept")), qPrintable(header->text()));
        QCOMPARE(window.session()->processOutput().size(), InspectorSession::kMaxProcessOutputLines);
        QCOMPARE(window.session()->processOutput().last(), QStringLiteral("200000"));
        QCOMPARE(window.session()->processOutputTrimmed() + window.session()->processOutput().size(), qint64(200000));
        if (const QString shot = qEnvironmentVariable("MAPI_SCREENSHOT_DIR"); !shot.isEmpty()) {
            dock->raise();
            window.resize(1400, 900);
            output->moveCursor(QTextCursor::Start); // the notice at the top of what is kept
            QTest::qWait(300);
            window.grab().save(shot + QStringLiteral("/stdio-stderr-flood.png"));
        }
        window.session()->disconnectFromServer();
#endif
    }

    void launchedSystemInTheWindow()
    {
        QTemporaryDir dir;
        const QString urlFile = dir.filePath(QStringLiteral("url"));
        ui::MainWindow window;
        window.show();
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("processOutputDock"));
        QVERIFY(dock);
        QVERIFY(dock->isHidden()); // nothing launched
        ClientOptions options;
        options.url = launchUrl(QStringLiteral("node \"%1\" --mode extended --stdio serialized --agents 8 --url-file \"%2\"")
                                    .arg(QStringLiteral(MAPI_DEMO_SCRIPT), urlFile));
        window.connection()->connectTo(options, true);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->store()->agents().size() >= 8, 20000);
        QTRY_VERIFY(!dock->isHidden());
        auto *output = dock->findChild<QPlainTextEdit *>(QStringLiteral("processOutput"));
        auto *header = dock->findChild<QLabel *>(QStringLiteral("processCommand"));
        QVERIFY(output && header);
        QTRY_VERIFY_WITH_TIMEOUT(output->toPlainText().contains(QLatin1String("MAP demo system listening")), 10000);
        QVERIFY2(header->text().startsWith(QLatin1String("node ")) && header->text().contains(QLatin1String("--stdio serialized")),
                 qPrintable(header->text()));
        QFile file(urlFile);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString httpUrl = QString::fromUtf8(file.readAll()).trimmed();
        QVERIFY(!demoHttp(httpUrl, QStringLiteral("/status")).is_null());
        if (const QString shot = qEnvironmentVariable("MAPI_SCREENSHOT_DIR"); !shot.isEmpty()) {
            dock->raise();
            window.resize(1400, 900);
            QTest::qWait(300);
            window.grab().save(shot + QStringLiteral("/stdio-process-output.png"));
        }

        window.session()->disconnectFromServer();
        // The child is ended (stdin closed: the demo leaves by itself): its HTTP side goes.
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(httpUrl, QStringLiteral("/status")).is_null(), 15000);
        QTRY_VERIFY(header->text().contains(QLatin1String("ended")));
        QVERIFY(!output->toPlainText().isEmpty()); // what it said stays to be read
    }
};

QTEST_MAIN(StdioWindowTest)
#include "tst_stdio_window.moc"
