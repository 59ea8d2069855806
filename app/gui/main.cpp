// map-inspector [--connect URL] [--token-env VAR] [--auth api-key|bearer] [--observer]
//               [--memory-budget MB] [--journal-max-size MB] [--journal-max-age HOURS]
//               [--sample | TRACEFILE | file://URL | map-inspector://open?file=…]
#include "CrashReport.h"
#include "MainWindow.h"
#include "systems/SystemView.h"
#include "client/StreamTransports.h"
#include "common/Redaction.h"
#include "controllers/TraceController.h"
#include "controllers/ConnectionController.h"
#include "common/DeepLink.h"
#include "session/InspectorSession.h"
#include "style/Theme.h"
#include "common/VectorStateGuard.h"

#include <QApplication>
#include <QMessageBox>
#include <QCommandLineParser>
#include <QFileOpenEvent>
#include <QIcon>
#include <QSettings>
#include <QTimer>

#include <cstdio>

using namespace mapi;

namespace {

// macOS hands links of the registered scheme (Info.plist CFBundleURLTypes) and files opened from
// the Finder to the running application as QFileOpenEvent, never on the command line.
class OpenEventFilter : public QObject
{
public:
    explicit OpenEventFilter(ui::MainWindow *window) : QObject(window), m_window(window) {}

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() != QEvent::FileOpen)
            return QObject::eventFilter(watched, event);
        auto *open = static_cast<QFileOpenEvent *>(event);
        const QString url = open->url().toString(QUrl::FullyEncoded);
        if (isDeepLink(url))
            m_window->openDeepLinkBeside(url); // beside what the window shows, never instead of it
        else if (!open->file().isEmpty())
            m_window->openTraceBeside(open->file());
        return true;
    }

private:
    ui::MainWindow *m_window;
};

} // namespace

int main(int argc, char **argv)
{
    mapi::installCrashReport("map-inspector");
    // A link comes from outside (a web page, a chat): the desktop starts `map-inspector LINK`. A
    // link that brings options with it (an unencoded quote breaking out of "%1", say
    // --connect somewhere, or one of Qt's own such as -platformpluginpath) is refused whole
    // rather than obeyed in part: checked on the raw arguments, before Qt takes its own out.
    for (int i = 1; i < argc; ++i)
        if (isDeepLink(QString::fromLocal8Bit(argv[i])) && argc != 2) {
            std::fprintf(stderr, "map-inspector: a map-inspector: link must be the only argument\n");
            return 1;
        }
    QApplication app(argc, argv);
    mapi::ui::installVectorStateGuard(); // before any of this project's code runs on the GUI thread
    QApplication::setOrganizationName(QStringLiteral("MAP Inspector"));
    QApplication::setApplicationName(QStringLiteral("map-inspector"));
    QApplication::setApplicationDisplayName(QStringLiteral("MAP Inspector"));
    QApplication::setApplicationVersion(QStringLiteral(MAPI_VERSION));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/map-inspector.svg")));
    // Lets Wayland and the desktop match the window to the installed .desktop file.
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.mapinspector.MapInspector"));

    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Operator console for multi-agent systems that speak MAP."));
    p.addHelpOption();
    p.addVersionOption();
    p.addPositionalArgument(QStringLiteral("trace"),
                            QStringLiteral("A trace or incident bundle to open: a path, a file:// URL, or a map-inspector:// link "
                                           "(map-inspector://open?file=PATH&t=TIME&agent=ID&message=ID)."),
                            QStringLiteral("[TRACEFILE|LINK]"));
    p.addOptions({
        {QStringLiteral("connect"), QStringLiteral("Connect to this MAP system: ws://, wss://, unix:/PATH, or stdio:COMMAND (launch it)."), QStringLiteral("URL")},
        {QStringLiteral("token-env"), QStringLiteral("Read the credential from this environment variable."), QStringLiteral("VAR")},
        {QStringLiteral("auth"), QStringLiteral("Credential method: bearer (default) or api-key."), QStringLiteral("METHOD"), QStringLiteral("bearer")},
        {QStringLiteral("fleet"), QStringLiteral("Connect every profile of this fleet, each a system of its own (Systems → Save the connected systems as a fleet…)."), QStringLiteral("NAME")},
        {QStringLiteral("observer"), QStringLiteral("Observer only: every control action is disabled.")},
        {QStringLiteral("sample"), QStringLiteral("Open the sample trace that ships with MAP Inspector.")},
        {QStringLiteral("memory-budget"), QStringLiteral("Memory for the live sessions' history, in MB, shared evenly by the systems connected at once (default 1024; setting session/memoryBudgetMB)."), QStringLiteral("MB")},
        {QStringLiteral("journal-max-size"), QStringLiteral("Largest session journal on disk, in MB (default 2048; setting session/journalMaxMB)."), QStringLiteral("MB")},
        {QStringLiteral("journal-max-age"), QStringLiteral("Oldest journaled history kept, in hours (default 24; setting session/journalMaxAgeHours)."), QStringLiteral("HOURS")},
    });
    p.process(app);

    // Live-session limits: the settings file's values, which the command line overrides for
    // this run (not saved). Wrong values are refused with a message, not silently replaced.
    QSettings settings;
    const auto limit = [&](const char *option, const char *key, double fallback, double minimum, double &out) {
        const QString name = QLatin1String(option);
        const QString text = p.isSet(name) ? p.value(name) : settings.value(QLatin1String(key)).toString();
        if (text.isEmpty()) {
            out = fallback;
            return true;
        }
        bool ok = false;
        out = text.toDouble(&ok);
        if (ok && out >= minimum)
            return true;
        std::fprintf(stderr, "map-inspector: --%s must be a number of at least %g (got \"%s\"%s)\n", option, minimum,
                     qPrintable(text), p.isSet(name) ? "" : qPrintable(QStringLiteral(" from setting ") + QLatin1String(key)));
        return false;
    };
    double budgetMb = 0, journalMb = 0, journalHours = 0;
    if (!limit("memory-budget", "session/memoryBudgetMB", 1024, 64, budgetMb)
        || !limit("journal-max-size", "session/journalMaxMB", 2048, 16, journalMb)
        || !limit("journal-max-age", "session/journalMaxAgeHours", 24, 0.01, journalHours))
        return 1;

    ClientOptions options;
    if (p.isSet(QStringLiteral("connect"))) {
        const QString target = p.value(QStringLiteral("connect"));
        options.url = target.startsWith(QLatin1String("stdio:")) ? launchUrl(target.mid(6)) : QUrl(target, QUrl::StrictMode);
        if (const QString wrong = connectionTargetError(options.url); !wrong.isEmpty()) {
            std::fprintf(stderr, "map-inspector: --connect: %s\n", qPrintable(wrong));
            return 1;
        }
        if (p.isSet(QStringLiteral("token-env"))) {
            const QByteArray var = p.value(QStringLiteral("token-env")).toUtf8();
            if (!qEnvironmentVariableIsSet(var.constData())) {
                std::fprintf(stderr, "map-inspector: environment variable %s is not set\n", var.constData());
                return 1;
            }
            options.auth.credential = qEnvironmentVariable(var.constData());
            options.auth.method = p.value(QStringLiteral("auth")) == QLatin1String("api-key") ? AuthConfig::Method::ApiKey
                                                                                               : AuthConfig::Method::Bearer;
        }
    }

    ui::applyTheme(ui::themeFromName(QSettings().value(QStringLiteral("ui/theme"), QStringLiteral("light")).toString()));
    ui::MainWindow window;
    window.setForcedObserver(p.isSet(QStringLiteral("observer")));
    window.setMemoryBudget(qint64(budgetMb * 1024 * 1024)); // in total, split among the live systems
    JournalOptions journal;
    journal.maxBytes = qint64(journalMb * 1024 * 1024);
    journal.maxAgeMs = qint64(journalHours * 3600 * 1000);
    window.setJournalOptions(journal);
    window.show();
    // A trace named on the command line that cannot be read is said on stderr too (the window
    // shows it in a message box): scripts and the package check read it there.
    QObject::connect(window.session(), &InspectorSession::traceLoadFinished, &window,
                     [](bool ok, bool cancelled, const QString &error) {
                         if (!ok && !cancelled)
                             std::fprintf(stderr, "map-inspector: Cannot open trace: %s\n", qPrintable(redactSecrets(error)));
                     });
    if (p.isSet(QStringLiteral("fleet")) && window.openFleet(p.value(QStringLiteral("fleet"))) == 0) {
        std::fprintf(stderr, "map-inspector: --fleet: no fleet named \"%s\" with a profile\n", qPrintable(p.value(QStringLiteral("fleet"))));
        return 1;
    }
    if (!options.url.isEmpty())
        window.systemForNewSource()->connection()->connectTo(options, p.isSet(QStringLiteral("observer")));
    else if (p.isSet(QStringLiteral("sample"))) {
        if (!window.traces()->openSampleTrace())
            std::fprintf(stderr, "map-inspector: Cannot open trace (see the window)\n");
    } else if (!p.positionalArguments().isEmpty()) {
        // Launchers pass %u: a map-inspector:// link, a file:// URL or a path.
        const QString argument = p.positionalArguments().first();
        const ErrorOr<QString> path = isDeepLink(argument) ? ErrorOr<QString>(QString()) : localPathFromArgument(argument);
        if (!path) { // a network path (file://host/share, \\host\share): refused, and said why
            std::fprintf(stderr, "map-inspector: Cannot open %s\n", qPrintable(redactSecrets(path.error())));
            QMessageBox::warning(&window, QObject::tr("Cannot open trace"), path.error());
        } else if (isDeepLink(argument) ? !window.traces()->openDeepLink(argument) : !window.traces()->openTrace(*path)) {
            std::fprintf(stderr, "map-inspector: Cannot open %s (see the window)\n", isDeepLink(argument) ? "link" : "trace");
        }
    }
    app.installEventFilter(new OpenEventFilter(&window));
    // Journals of live sessions that did not close (a crash, a kill): offered once the window is up.
    QTimer::singleShot(0, &window, [&window] { window.traces()->offerRecovery(); });
    return QApplication::exec();
}
