// Deep links (core/common/DeepLink.h): map-inspector://open?file=…&t=…&agent=…&message=… round
// trips for paths that need encoding, the forms launchers pass, every refusal with its reason,
// and the window's positional argument given as a file:// URL (never a network path).
#include "TestSupport.h"

#include "common/DeepLink.h"

using namespace mapi;
using mapi_test::q;

namespace {

// An absolute local path on this platform from a Unix-style one: "/tmp/x" here, "C:/tmp/x" on
// Windows (where "/tmp/x" has no drive and is not absolute).
QString local(const QString &unixPath)
{
#ifdef Q_OS_WIN
    return QStringLiteral("C:") + unixPath;
#else
    return unixPath;
#endif
}

QString openLink(const QString &rawQuery)
{
    return QStringLiteral("map-inspector://open?") + rawQuery;
}

constexpr qint64 kNoTime = -1;
constexpr qint64 kT = 1795705200123; // 2026-11-26T15:00:00.123Z

} // namespace

class TestDeepLink : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }

    void roundTrip_data();
    void roundTrip();
    void makeEncodesEveryValue();
    void times_data();
    void times();
    void acceptedForms_data();
    void acceptedForms();
    void refusals_data();
    void refusals();
    void lengthIsBounded();
    void windowsDrivePath();
    void recognisesLinks();
    void fileUrlArguments_data();
    void fileUrlArguments();
    void networkArgumentsAreRefused_data();
    void networkArgumentsAreRefused();
};

void TestDeepLink::roundTrip_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("timeMs");
    QTest::addColumn<QString>("agent");
    QTest::addColumn<QString>("message");
    QTest::newRow("plain") << QStringLiteral("/var/traces/run.jsonl.zst") << kNoTime << QString() << QString();
    QTest::newRow("spaces") << QStringLiteral("/tmp/my traces/run 1.jsonl.zst") << kT << QString() << QString();
    QTest::newRow("ampersand and equals") << QStringLiteral("/tmp/a&b=c/t&file=x.jsonl") << kNoTime
                                          << QStringLiteral("a1") << QString();
    QTest::newRow("hash") << QStringLiteral("/tmp/#1/t#2.jsonl") << qint64(0) << QString() << QString();
    QTest::newRow("percent") << QStringLiteral("/tmp/100%/a%20b%zz%.jsonl") << kNoTime << QString() << QString();
    QTest::newRow("plus") << QStringLiteral("/tmp/a+b/c++ d.jsonl") << kNoTime << QString() << QString();
    QTest::newRow("question mark") << QStringLiteral("/tmp/what?/t?x=1.jsonl") << kNoTime << QString() << QString();
    QTest::newRow("unicode") << q("/home/é/日本/トレース.jsonl.zst") << kT << q("agent-é") << q("msg-日本");
    QTest::newRow("backslash and quotes") << QStringLiteral("/tmp/a\\b/\"q\" 'r'.jsonl") << kNoTime << QString()
                                          << QString();
    QTest::newRow("everything") << QStringLiteral("/tmp/x y&z#1?%+/t.jsonl.zst") << kT
                                << QStringLiteral("agent 7&t=0#x") << QStringLiteral("m+1%2?&message=m2");
    QTest::newRow("latest time") << QStringLiteral("/t.jsonl") << qint64(253402300799999) << QString() << QString();
}

void TestDeepLink::roundTrip()
{
    QFETCH(QString, file);
    QFETCH(qint64, timeMs);
    QFETCH(QString, agent);
    QFETCH(QString, message);
    DeepLink link;
    link.file = local(file);
    if (timeMs != kNoTime)
        link.timeMs = timeMs;
    link.agentId = agent;
    link.messageId = message;

    const QString text = makeDeepLink(link);
    QVERIFY2(text.startsWith(QLatin1String("map-inspector://open?file=")), qPrintable(text));
    // No value leaks a delimiter: one '?', one '&' per optional value, no space, no '#'.
    QVERIFY2(!text.contains(QLatin1Char(' ')) && !text.contains(QLatin1Char('#')), qPrintable(text));
    QCOMPARE(text.count(QLatin1Char('?')), 1);
    const int optional = int(link.timeMs.has_value()) + int(!agent.isEmpty()) + int(!message.isEmpty());
    QCOMPARE(text.count(QLatin1Char('&')), optional);
    QVERIFY(isDeepLink(text));

    const ErrorOr<DeepLink> back = parseDeepLink(text);
    QVERIFY2(back.ok(), qPrintable(text + QStringLiteral(" -> ") + back.error()));
    QCOMPARE(back->file, link.file);
    QCOMPARE(back->timeMs.has_value(), link.timeMs.has_value());
    if (link.timeMs)
        QCOMPARE(*back->timeMs, *link.timeMs);
    QCOMPARE(back->agentId, link.agentId);
    QCOMPARE(back->messageId, link.messageId);
    QVERIFY(*back == link);
    // The canonical form is stable.
    QCOMPARE(makeDeepLink(*back), text);
}

void TestDeepLink::makeEncodesEveryValue()
{
    DeepLink link;
    link.file = QStringLiteral("/tmp/a b&c/d#e?f%g+h.jsonl"); // (makeDeepLink does not check the path)
    link.timeMs = 5;
    link.agentId = QStringLiteral("ag ent&x=1");
    link.messageId = q("m&1 #é");
    QCOMPARE(makeDeepLink(link),
             QStringLiteral("map-inspector://open?file=/tmp/a%20b%26c/d%23e%3Ff%25g%2Bh.jsonl&t=5"
                            "&agent=ag%20ent%26x%3D1&message=m%261%20%23%C3%A9"));
    // Empty ids and no time: nothing but the file.
    QCOMPARE(makeDeepLink(DeepLink{QStringLiteral("/t.jsonl"), std::nullopt, QString(), QString()}),
             QStringLiteral("map-inspector://open?file=/t.jsonl"));
}

void TestDeepLink::times_data()
{
    QTest::addColumn<QString>("t");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("epoch ms") << QStringLiteral("1795705200123") << kT;
    QTest::newRow("zero") << QStringLiteral("0") << qint64(0);
    QTest::newRow("ISO with ms, Z") << QStringLiteral("2026-11-26T15:00:00.123Z") << kT;
    QTest::newRow("ISO with ms, offset") << QStringLiteral("2026-11-26T16:00:00.123+01:00") << kT;
    QTest::newRow("ISO percent-encoded") << QStringLiteral("2026-11-26T10%3A00%3A00.123-05%3A00") << kT;
    QTest::newRow("ISO without offset is UTC") << QStringLiteral("2026-11-26T15:00:00.123") << kT;
    QTest::newRow("ISO without ms") << QStringLiteral("2026-11-26T15:00:00Z") << kT - 123;
}

void TestDeepLink::times()
{
    QFETCH(QString, t);
    QFETCH(qint64, expected);
    const QString text = openLink(QStringLiteral("file=") + local(QStringLiteral("/t.jsonl")) + QStringLiteral("&t=") + t);
    const ErrorOr<DeepLink> link = parseDeepLink(text);
    QVERIFY2(link.ok(), qPrintable(link.error()));
    QVERIFY(link->timeMs.has_value());
    QCOMPARE(*link->timeMs, expected);
    // Written back as epoch ms.
    const QString written = makeDeepLink(*link);
    QVERIFY2(written.endsWith(QString(QStringLiteral("&t=") + QString::number(expected))), qPrintable(written));
}

void TestDeepLink::acceptedForms_data()
{
    const QString path = local(QStringLiteral("/tmp/t.jsonl"));
    // (QString(): a QStringBuilder is not a type QTest's data rows know.)
    const auto link = [&path](const char *before, const char *after = "") {
        return QString(QLatin1String(before) + path + QLatin1String(after));
    };
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("agent");
    QTest::newRow("canonical") << link("map-inspector://open?file=", "&agent=a1") << QStringLiteral("a1");
    QTest::newRow("no slashes") << link("map-inspector:open?file=", "&agent=a1") << QStringLiteral("a1");
    QTest::newRow("upper-case scheme and action") << link("MAP-INSPECTOR://OPEN?file=", "&agent=a1") << QStringLiteral("a1");
    QTest::newRow("mixed case, no slashes") << link("Map-Inspector:Open?file=") << QString();
    QTest::newRow("slash after the action") << link("map-inspector://open/?file=") << QString();
    QTest::newRow("surrounding white space") << link("  map-inspector://open?file=", "\n") << QString();
    QTest::newRow("unknown keys are ignored") << link("map-inspector://open?zoom=3&file=", "&v=2&agent=a1&zoom=4")
                                              << QStringLiteral("a1");
    QTest::newRow("encoded slashes") << QString(QStringLiteral("map-inspector://open?file=")
                                                + QString(path).replace(QLatin1Char('/'), QLatin1String("%2F")))
                                     << QString();
    QTest::newRow("empty values are none") << link("map-inspector://open?file=", "&agent=&message=&t=") << QString();
}

void TestDeepLink::acceptedForms()
{
    QFETCH(QString, text);
    QFETCH(QString, agent);
    const ErrorOr<DeepLink> link = parseDeepLink(text);
    QVERIFY2(link.ok(), qPrintable(text + QStringLiteral(" -> ") + link.error()));
    QCOMPARE(link->file, local(QStringLiteral("/tmp/t.jsonl")));
    QCOMPARE(link->agentId, agent);
    QVERIFY(link->messageId.isEmpty());
    QVERIFY(!link->timeMs.has_value());
}

void TestDeepLink::refusals_data()
{
    const QString file = QStringLiteral("file=") + local(QStringLiteral("/tmp/t.jsonl"));
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason"); // a fragment of the error
    QTest::newRow("empty") << QString() << QStringLiteral("not a MAP Inspector link");
    QTest::newRow("http") << QString(QStringLiteral("http://example.org/open?") + file) << QStringLiteral("not a MAP Inspector link");
    QTest::newRow("file URL") << QStringLiteral("file:///tmp/t.jsonl") << QStringLiteral("not a MAP Inspector link");
    QTest::newRow("scheme without dash") << QString(QStringLiteral("mapinspector://open?") + file)
                                         << QStringLiteral("not a MAP Inspector link");
    QTest::newRow("no scheme") << QStringLiteral("/tmp/t.jsonl") << QStringLiteral("not a MAP Inspector link");
    QTest::newRow("action close") << QString(QStringLiteral("map-inspector://close?") + file)
                                  << QStringLiteral("unknown action \"close\"");
    QTest::newRow("action openx") << QString(QStringLiteral("map-inspector:openx?") + file) << QStringLiteral("unknown action");
    QTest::newRow("no action") << QString(QStringLiteral("map-inspector://?") + file) << QStringLiteral("no action");
    QTest::newRow("nothing after the scheme") << QStringLiteral("map-inspector:") << QStringLiteral("no action");
    QTest::newRow("no query") << QStringLiteral("map-inspector://open") << QStringLiteral("names no file");
    QTest::newRow("no file") << openLink(QStringLiteral("agent=a1&t=5")) << QStringLiteral("names no file");
    QTest::newRow("empty file") << openLink(QStringLiteral("file=&agent=a1")) << QStringLiteral("names no file");
    QTest::newRow("file key in upper case") << openLink(QStringLiteral("FILE=/tmp/t.jsonl")) << QStringLiteral("names no file");
    QTest::newRow("relative path") << openLink(QStringLiteral("file=traces/t.jsonl")) << QStringLiteral("not an absolute path");
    QTest::newRow("bare name") << openLink(QStringLiteral("file=t.jsonl")) << QStringLiteral("not an absolute path");
    QTest::newRow("dot-dot") << openLink(QStringLiteral("file=../t.jsonl")) << QStringLiteral("not an absolute path");
    QTest::newRow("Qt resource") << openLink(QStringLiteral("file=:/sample/demo.jsonl.zst")) << QStringLiteral("not an absolute path");
    QTest::newRow("network, slashes") << openLink(QStringLiteral("file=//server/share/t.jsonl")) << QStringLiteral("network");
    QTest::newRow("network, backslashes") << openLink(QStringLiteral("file=%5C%5Cserver%5Cshare%5Ct.jsonl"))
                                          << QStringLiteral("network");
    QTest::newRow("NUL in file") << openLink(QStringLiteral("file=") + local(QStringLiteral("/tmp/a%00.jsonl")))
                                 << QStringLiteral("NUL");
    QTest::newRow("NUL in agent") << openLink(file + QStringLiteral("&agent=a%001")) << QStringLiteral("NUL");
    QTest::newRow("not UTF-8") << openLink(QStringLiteral("file=") + local(QStringLiteral("/tmp/%FF.jsonl")))
                               << QStringLiteral("not UTF-8");
    QTest::newRow("raw hash") << openLink(QStringLiteral("file=") + local(QStringLiteral("/tmp/a#b.jsonl"))) << QStringLiteral("'#'");
    QTest::newRow("fragment") << openLink(file + QStringLiteral("#top")) << QStringLiteral("'#'");
    QTest::newRow("stray percent") << openLink(QStringLiteral("file=") + local(QStringLiteral("/tmp/100%.jsonl")))
                                   << QStringLiteral("percent-encoded");
    QTest::newRow("percent, not hex") << openLink(file + QStringLiteral("&agent=%G1")) << QStringLiteral("percent-encoded");
    QTest::newRow("t is a word") << openLink(file + QStringLiteral("&t=yesterday")) << QStringLiteral("not a time");
    QTest::newRow("t has letters") << openLink(file + QStringLiteral("&t=12abc")) << QStringLiteral("not a time");
    QTest::newRow("t negative") << openLink(file + QStringLiteral("&t=-5")) << QStringLiteral("not a time");
    QTest::newRow("t with a space") << openLink(file + QStringLiteral("&t=%2012")) << QStringLiteral("not a time");
    QTest::newRow("t bad date") << openLink(file + QStringLiteral("&t=2026-13-40T25:00:00Z")) << QStringLiteral("not a time");
    QTest::newRow("t too large") << openLink(file + QStringLiteral("&t=99999999999999999999")) << QStringLiteral("between 1970");
    QTest::newRow("t after 9999") << openLink(file + QStringLiteral("&t=253402300800000")) << QStringLiteral("between 1970");
    QTest::newRow("t before 1970") << openLink(file + QStringLiteral("&t=1969-12-31T23:59:59Z")) << QStringLiteral("between 1970");
    QTest::newRow("file twice") << openLink(file + QStringLiteral("&file=") + local(QStringLiteral("/tmp/u.jsonl")))
                                << QStringLiteral("\"file\" is given twice");
    QTest::newRow("t twice") << openLink(file + QStringLiteral("&t=1&t=2")) << QStringLiteral("\"t\" is given twice");
    QTest::newRow("agent twice, first empty") << openLink(file + QStringLiteral("&agent=&agent=a2"))
                                              << QStringLiteral("\"agent\" is given twice");
    QTest::newRow("message twice") << openLink(file + QStringLiteral("&message=m1&message=m1"))
                                   << QStringLiteral("\"message\" is given twice");
}

void TestDeepLink::refusals()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    const ErrorOr<DeepLink> link = parseDeepLink(text);
    QVERIFY2(!link.ok(), qPrintable(text + QStringLiteral(" was accepted")));
    QVERIFY2(link.error().contains(reason), qPrintable(link.error()));
}

void TestDeepLink::lengthIsBounded()
{
    const QString head = QStringLiteral("map-inspector://open?file=") + local(QStringLiteral("/"));
    const QString longest = head + QString(kMaxDeepLinkLength - head.size(), QLatin1Char('a'));
    QCOMPARE(longest.size(), 8192);
    const ErrorOr<DeepLink> ok = parseDeepLink(longest);
    QVERIFY2(ok.ok(), qPrintable(ok.error()));
    QCOMPARE(ok->file.size(), longest.size() - 26);

    const ErrorOr<DeepLink> tooLong = parseDeepLink(longest + QLatin1Char('a'));
    QVERIFY(!tooLong.ok());
    QVERIFY2(tooLong.error().contains(QLatin1String("at most 8192")), qPrintable(tooLong.error()));
    // Bounded before anything else is looked at: even a wrong scheme is refused for its length.
    const ErrorOr<DeepLink> huge = parseDeepLink(QString(100000, QLatin1Char('x')));
    QVERIFY2(huge.error().contains(QLatin1String("at most 8192")), qPrintable(huge.error()));
}

void TestDeepLink::windowsDrivePath()
{
    DeepLink link;
    link.file = QStringLiteral("C:/Users/x y/t.jsonl.zst");
    link.agentId = QStringLiteral("a1");
    const QString text = makeDeepLink(link);
    QCOMPARE(text, QStringLiteral("map-inspector://open?file=C%3A/Users/x%20y/t.jsonl.zst&agent=a1"));
    const ErrorOr<DeepLink> back = parseDeepLink(text);
    DeepLink backslashes;
    backslashes.file = QStringLiteral("C:\\Users\\x y\\t.jsonl.zst");
    const ErrorOr<DeepLink> backslashesBack = parseDeepLink(makeDeepLink(backslashes));
#ifdef Q_OS_WIN
    QVERIFY2(back.ok(), qPrintable(back.error()));
    QVERIFY(*back == link);
    QVERIFY2(backslashesBack.ok(), qPrintable(backslashesBack.error()));
    QCOMPARE(backslashesBack->file, backslashes.file);
    // A drive-relative path is not absolute.
    QVERIFY(!parseDeepLink(openLink(QStringLiteral("file=C:t.jsonl"))).ok());
#else
    // Elsewhere a drive letter is the start of a relative path.
    QVERIFY(!back.ok());
    QVERIFY2(back.error().contains(QLatin1String("not an absolute path")), qPrintable(back.error()));
    QVERIFY(!backslashesBack.ok());
#endif
}

void TestDeepLink::recognisesLinks()
{
    QVERIFY(isDeepLink(QStringLiteral("map-inspector://open?file=/t.jsonl")));
    QVERIFY(isDeepLink(QStringLiteral("map-inspector:open?file=/t.jsonl")));
    QVERIFY(isDeepLink(QStringLiteral("MAP-Inspector://open")));
    QVERIFY(isDeepLink(QStringLiteral(" map-inspector://x")));
    QVERIFY(isDeepLink(QStringLiteral("map-inspector:"))); // a link, if a broken one: parseDeepLink says why
    QVERIFY(!isDeepLink(QString()));
    QVERIFY(!isDeepLink(QStringLiteral("map-inspector")));
    QVERIFY(!isDeepLink(QStringLiteral("map-inspector.jsonl")));
    QVERIFY(!isDeepLink(QStringLiteral("/tmp/map-inspector:x.jsonl")));
    QVERIFY(!isDeepLink(QStringLiteral("file:///tmp/t.jsonl")));
    QVERIFY(!isDeepLink(QStringLiteral("https://map-inspector.example/open")));
}

void TestDeepLink::fileUrlArguments_data()
{
    QTest::addColumn<QString>("arg");
    QTest::addColumn<QString>("expected");
#ifdef Q_OS_WIN
    QTest::newRow("drive") << QStringLiteral("file:///C:/Users/x%20y/t.jsonl.zst") << QStringLiteral("C:/Users/x y/t.jsonl.zst");
    QTest::newRow("encoded specials") << QStringLiteral("file:///C:/tmp/a%23b%25c%26d.jsonl") << QStringLiteral("C:/tmp/a#b%c&d.jsonl");
    QTest::newRow("unicode") << QStringLiteral("file:///C:/tmp/%C3%A9%E6%97%A5.jsonl") << q("C:/tmp/é日.jsonl");
#else
    QTest::newRow("encoded spaces") << QStringLiteral("file:///tmp/my%20traces/run%201.jsonl.zst")
                                    << QStringLiteral("/tmp/my traces/run 1.jsonl.zst");
    QTest::newRow("encoded specials") << QStringLiteral("file:///tmp/a%23b%25c%26d%3F.jsonl") << QStringLiteral("/tmp/a#b%c&d?.jsonl");
    QTest::newRow("unicode") << QStringLiteral("file:///tmp/%C3%A9%E6%97%A5.jsonl") << q("/tmp/é日.jsonl");
    QTest::newRow("upper-case scheme") << QStringLiteral("FILE:///tmp/t.jsonl") << QStringLiteral("/tmp/t.jsonl");
#endif
    // localhost is this machine: its path, not the UNC path "//localhost/…" QUrl would make.
#ifdef Q_OS_WIN
    QTest::newRow("localhost") << QStringLiteral("file://localhost/C:/tmp/t.jsonl") << QStringLiteral("C:/tmp/t.jsonl");
    QTest::newRow("LOCALHOST") << QStringLiteral("file://LOCALHOST/C:/tmp/a%20b.jsonl") << QStringLiteral("C:/tmp/a b.jsonl");
#else
    QTest::newRow("localhost") << QStringLiteral("file://localhost/tmp/t.jsonl") << QStringLiteral("/tmp/t.jsonl");
    QTest::newRow("LOCALHOST") << QStringLiteral("file://LOCALHOST/tmp/a%20b.jsonl") << QStringLiteral("/tmp/a b.jsonl");
#endif
    // Everything that is not a file:// URL comes back as it is.
    QTest::newRow("path") << QStringLiteral("/tmp/a%20b.jsonl") << QStringLiteral("/tmp/a%20b.jsonl");
    QTest::newRow("relative") << QStringLiteral("traces/t.jsonl") << QStringLiteral("traces/t.jsonl");
    QTest::newRow("windows path") << QStringLiteral("C:\\x y\\t.jsonl") << QStringLiteral("C:\\x y\\t.jsonl");
    QTest::newRow("deep link") << QStringLiteral("map-inspector://open?file=/t%20x") << QStringLiteral("map-inspector://open?file=/t%20x");
    QTest::newRow("name starting with file:") << QStringLiteral("file:t.jsonl") << QStringLiteral("file:t.jsonl");
    QTest::newRow("http URL") << QStringLiteral("https://example.org/t.jsonl") << QStringLiteral("https://example.org/t.jsonl");
}

void TestDeepLink::fileUrlArguments()
{
    QFETCH(QString, arg);
    QFETCH(QString, expected);
    QCOMPARE(localFileFromArgument(arg), expected);
    const ErrorOr<QString> path = localPathFromArgument(arg);
    QVERIFY2(path.ok(), qPrintable(path.error()));
    QCOMPARE(*path, expected);
}

// A file on another machine is refused, as a file URL or as a path, whatever the platform: on
// Windows, opening it would connect to that host over SMB (and offer it the user's credentials)
// because a launcher or a clicked link said so. QUrl("file://host/share/x").toLocalFile() is the
// UNC path "//host/share/x".
void TestDeepLink::networkArgumentsAreRefused_data()
{
    QTest::addColumn<QString>("arg");
    QTest::addColumn<QString>("said"); // a part of the reason
    QTest::newRow("file URL with a host") << QStringLiteral("file://host/share/x.jsonl") << QStringLiteral("network host \"host\"");
    QTest::newRow("file URL, host in capitals") << QStringLiteral("FILE://Server.Example/share/t.jsonl") << QStringLiteral("network host");
    QTest::newRow("file URL, IP host") << QStringLiteral("file://10.0.0.5/share/t.jsonl") << QStringLiteral("network host");
    QTest::newRow("file URL, drive as host") << QStringLiteral("file://C:/x/t.jsonl") << QString(); // "//c/x/t.jsonl" before
    QTest::newRow("file URL, UNC in the path") << QStringLiteral("file:////host/share/t.jsonl") << QString();
    QTest::newRow("file URL, encoded backslashes") << QStringLiteral("file:///%5C%5Chost/share/t.jsonl") << QStringLiteral("network path");
    QTest::newRow("UNC path") << QStringLiteral("//host/share/t.jsonl") << QStringLiteral("network path");
    QTest::newRow("UNC path, backslashes") << QStringLiteral("\\\\host\\share\\t.jsonl") << QStringLiteral("network path");
    QTest::newRow("UNC path, long form") << QStringLiteral("\\\\?\\UNC\\host\\share\\t.jsonl") << QStringLiteral("network path");
    QTest::newRow("UNC path, mixed slashes") << QStringLiteral("/\\host/share/t.jsonl") << QStringLiteral("network path");
}

void TestDeepLink::networkArgumentsAreRefused()
{
    QFETCH(QString, arg);
    QFETCH(QString, said);
    const ErrorOr<QString> path = localPathFromArgument(arg);
    QVERIFY2(!path.ok(), qPrintable(path.ok() ? *path : QString()));
    QVERIFY2(path.error().contains(said), qPrintable(path.error()));
    QVERIFY(localFileFromArgument(arg).isEmpty()); // nothing a caller could open
}

QTEST_GUILESS_MAIN(TestDeepLink)
#include "tst_deeplink.moc"
