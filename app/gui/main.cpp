// map-inspector [--connect URL] [--token-env VAR] [--auth api-key|bearer] [--observer] [--sample | TRACEFILE]
#include "MainWindow.h"
#include "session/LiveSession.h"
#include "style/Theme.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QSettings>
#include <QTimer>

#include <cstdio>

using namespace mapi;

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
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
    p.addPositionalArgument(QStringLiteral("trace"), QStringLiteral("A trace file to open."), QStringLiteral("[TRACEFILE]"));
    p.addOptions({
        {QStringLiteral("connect"), QStringLiteral("Connect to this MAP server (ws:// or wss://)."), QStringLiteral("URL")},
        {QStringLiteral("token-env"), QStringLiteral("Read the credential from this environment variable."), QStringLiteral("VAR")},
        {QStringLiteral("auth"), QStringLiteral("Credential method: bearer (default) or api-key."), QStringLiteral("METHOD"), QStringLiteral("bearer")},
        {QStringLiteral("observer"), QStringLiteral("Observer only: every control action is disabled.")},
        {QStringLiteral("sample"), QStringLiteral("Open the sample trace that ships with MAP Inspector.")},
    });
    p.process(app);

    ClientOptions options;
    if (p.isSet(QStringLiteral("connect"))) {
        options.url = QUrl(p.value(QStringLiteral("connect")), QUrl::StrictMode);
        if (!options.url.isValid() || (options.url.scheme() != QLatin1String("ws") && options.url.scheme() != QLatin1String("wss"))) {
            std::fprintf(stderr, "map-inspector: --connect needs a ws:// or wss:// URL\n");
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
    window.show();
    // A trace named on the command line that cannot be read is said on stderr too (the window
    // shows it in a message box): scripts and the package check read it there.
    QObject::connect(window.session(), &ui::LiveSession::traceLoadFinished, &window,
                     [](bool ok, bool cancelled, const QString &error) {
                         if (!ok && !cancelled)
                             std::fprintf(stderr, "map-inspector: Cannot open trace: %s\n", qPrintable(error));
                     });
    if (!options.url.isEmpty())
        window.connectTo(options, p.isSet(QStringLiteral("observer")));
    else if (p.isSet(QStringLiteral("sample")) ? !window.openSampleTrace()
             : !p.positionalArguments().isEmpty() && !window.openTrace(p.positionalArguments().first()))
        std::fprintf(stderr, "map-inspector: Cannot open trace (see the window)\n");
    // Journals of live sessions that did not close (a crash, a kill): offered once the window is up.
    QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    return QApplication::exec();
}
