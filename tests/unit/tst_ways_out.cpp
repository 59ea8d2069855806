// Every way data leaves the program, fed with every row of the table of secret shapes
// (SecretShapes.h; issue 42 item 2): the session journal, a recorded trace, a converted trace,
// every CSV table, the Chrome trace, OTLP, the incident bundle (default options), the alert
// webhook's body, the Problems' details, the connection's error text and the program's log, and
// the CLI's outputs (state, stats, convert, chain, bundle, its error lines). Each check asserts
// that no row's secret comes out (as it is, JSON-escaped once or twice, or CSV-quoted) and that
// each row's marker, and where the output carries the whole text the row's `kept` part, does:
// a way out that wrote nothing would fail. docs/security.md lists which rule applies where.
//
// The traffic: per row, an agent (name and metadata), a message, an error report (an alert's
// reason quotes it), a task, a conversation turn, a trajectory checkpoint, an ACP prompt, a
// request refused with an error text, and a frame that does not parse, all holding the row's
// text; the connection URL holds user info and ?token=.
#include "SecretShapes.h"
#include "TestSupport.h"

#include "alerts/AlertEngine.h"
#include "alerts/AlertWebhook.h"
#include "client/MapClient.h"
#include "client/Transport.h"
#include "common/Redaction.h"
#include "model/SystemStore.h"
#include "session/SessionJournal.h"
#include "trace/CompressedFile.h"
#include "trace/IncidentBundle.h"
#include "trace/ModelExport.h"
#include "trace/Otlp.h"
#include "trace/Trace.h"
#include "trace/TraceLoader.h"

#include <QBuffer>
#include <QDir>
#include <QProcess>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QWebSocket>
#include <QWebSocketServer>

using namespace mapi;
using mapi_test::dump;
using mapi_test::s;

namespace {

// The connection's address: user info and a token in the query.
const char *const kUrl = "wss://ops:hunter2@agents.example.org/map?token=qt-1234abcd&room=ops";
const char *const kUrlSecrets[] = {"hunter2", "qt-1234abcd"};
const qint64 kStart = 1'790'000'000'000;

QString marker(size_t row)
{
    return QStringLiteral("wo%1").arg(row, 2, 10, QLatin1Char('0'));
}

// `text` as it reads inside a JSON string, escaped `levels` times.
QByteArray escaped(const QByteArray &text, int levels)
{
    QByteArray out = text;
    for (int i = 0; i < levels; ++i) {
        const QByteArray literal = dump(Json(out.toStdString()));
        out = literal.mid(1, literal.size() - 2);
    }
    return out;
}

// Every form `text` can take in an output: as it is, JSON-escaped once or twice, each also
// CSV-quoted (quotes doubled).
QList<QByteArray> forms(const QByteArray &text)
{
    QList<QByteArray> out;
    for (int level = 0; level <= 2; ++level) {
        const QByteArray e = escaped(text, level);
        out << e;
        if (e.contains('"'))
            out << QByteArray(e).replace("\"", "\"\"");
    }
    return out;
}

bool holds(const QByteArray &output, const QByteArray &text)
{
    for (const QByteArray &f : forms(text))
        if (output.contains(f))
            return true;
    return false;
}

// The traffic of one connection, as trace records (what the server sent and what we sent).
std::vector<TraceRecord> secretTraffic()
{
    std::vector<TraceRecord> out;
    qint64 t = kStart;
    qint64 sequence = 0;
    int eventNo = 0;
    auto add = [&](const char *dir, const QByteArray &raw) {
        t += 10;
        TraceRecord r;
        r.timeMs = t;
        r.dir = QString::fromLatin1(dir);
        r.raw = raw;
        out.push_back(r);
    };
    auto event = [&](const char *type, const Json &data, const QString &agent) {
        const QString id = QStringLiteral("evt-%1").arg(++eventNo, 5, 10, QLatin1Char('0'));
        add("recv", mapi_test::eventFrame(QStringLiteral("sub-1"), ++sequence,
                                          mapi_test::innerEvent(id, QString::fromLatin1(type), t + 10, data, {{"agentId", s(agent)}})));
    };
    auto message = [&](const QString &id, const QString &from, const QString &to, const Json &payload) {
        event("message.sent", {{"message", {{"id", s(id)}, {"from", s(from)}, {"to", s(to)}, {"payload", payload}, {"timestamp", t + 10}}}},
              from);
    };
    add("send", mapi_test::requestFrame(1, QStringLiteral("map/connect"),
                                        {{"protocolVersion", 1}, {"auth", {{"method", "bearer"}, {"credential", "sk-live-conn-0123456789"}}}}));
    const QString hub = QStringLiteral("ag-") + marker(0);
    const auto &rows = mapi_test::secretShapes();
    for (size_t i = 0; i < rows.size(); ++i) {
        const QString m = marker(i);
        const std::string text = rows[i].text;
        const std::string tagged = s(m) + " " + text;
        const QString agent = QStringLiteral("ag-") + m;
        event("agent.registered",
              {{"agent", mapi_test::regAgent(agent, QString::fromStdString(tagged), QStringLiteral("idle"), {},
                                             {{"marker", s(m)}, {"description", text}})}},
              agent);
        message(QStringLiteral("msg-") + m, agent, hub, {{"marker", s(m)}, {"text", text}});
        const auto seed = [&](const char *type, const QString &id, const Json &payload) {
            message(id, agent, hub,
                    {{"message_id", s(id)}, {"type", type}, {"from", s(agent)}, {"to", s(hub)}, {"payload", payload}});
        };
        seed("ERROR_REPORT", QStringLiteral("err-") + m, {{"severity", "CRITICAL"}, {"message", s(m) + " failed: " + text}});
        seed("TASK_REQUEST", QStringLiteral("treq-") + m, {{"task_id", s(QStringLiteral("task-") + m)}, {"task_type", tagged}});
        event("mail.turn.added",
              {{"conversationId", "conv-1"},
               {"turn", {{"id", s(QStringLiteral("turn-") + m)}, {"conversationId", "conv-1"}, {"participant", s(agent)},
                         {"timestamp", t}, {"contentType", "text"}, {"content", {{"text", tagged}}}, {"status", "complete"}}}},
              agent);
        event("trajectory.checkpoint",
              {{"checkpoint", {{"id", s(QStringLiteral("cp-") + m)}, {"agentId", s(agent)}, {"label", tagged}, {"timestamp", t},
                               {"metadata", {{"note", text}}}}}},
              agent);
        message(QStringLiteral("acp-") + m, hub, agent,
                {{"acp", {{"jsonrpc", "2.0"}, {"id", int(i) + 1}, {"method", "session/prompt"},
                          {"params", {{"sessionId", "sess-1"}, {"prompt", {{{"type", "text"}, {"text", tagged}}}}}}}},
                 {"acpContext", {{"streamId", s(QStringLiteral("stream-") + m)}, {"sessionId", nullptr}, {"direction", "client-to-agent"}}}});
        // A request the server refuses, quoting the text in its error.
        add("send", mapi_test::requestFrame(int(1000 + i), QStringLiteral("map/agents/list"), {{"marker", s(m)}, {"filter", text}}));
        add("recv", mapi_test::errorFrame(int(1000 + i), -32001, QString::fromStdString(tagged + " refused: " + text)));
        // A frame that does not parse (cut short) quoting the text.
        add("recv", "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"log\":" + dump(Json(tagged)) + ",\"n\":");
    }
    return out;
}

// A trace file as another tool (or an older recorder) would write it: nothing redacted. The
// input of the bundle, convert and the CLI.
QString writeRawTrace(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write(dump(Json{{"format", "map-inspector-trace"}, {"version", 2}, {"startedAt", kStart}, {"url", kUrl}}) + '\n');
    file.write(dump(Json{{"t", kStart}, {"dir", "open"}, {"conn", 1}, {"raw", kUrl}}) + '\n');
    for (const TraceRecord &r : secretTraffic()) {
        const bool json = Json::accept(r.raw.constBegin(), r.raw.constEnd());
        const QByteArray line = json ? QByteArray("{\"t\":" + QByteArray::number(r.timeMs) + ",\"dir\":\"" + r.dir.toUtf8()
                                                  + "\",\"conn\":1,\"frame\":" + r.raw + "}\n")
                                     : QByteArray(dump(Json{{"t", r.timeMs}, {"dir", s(r.dir)}, {"conn", 1}, {"raw", r.raw.toStdString()}}) + '\n');
        file.write(line);
    }
    return path;
}

// Feeds the traffic through the live pipeline into `store`.
void feed(SystemStore &store)
{
    ProtocolPipeline pipeline;
    store.apply(pipeline.connectionOpened(redactedUrl(QUrl(QString::fromLatin1(kUrl))), kStart));
    for (const TraceRecord &r : secretTraffic()) {
        if (r.dir == QLatin1String("send"))
            pipeline.frameSent(r.raw, r.timeMs);
        else
            store.apply(pipeline.frameReceived(r.raw, r.timeMs).inputs);
    }
    store.advanceTime(kStart + 600'000);
    store.flushChanges();
}

QByteArray readAll(const QString &path)
{
    DecompressingReader reader;
    QString error;
    if (!reader.open(path, &error))
        return {};
    QByteArray out;
    char buffer[65536];
    for (qint64 n; (n = reader.read(buffer, sizeof buffer)) > 0;)
        out.append(buffer, n);
    return out;
}

// What a check saw: the secrets that came out and the markers / kept parts that did not.
QString audit(const QByteArray &output, bool keptToo, bool markers = true)
{
    QStringList problems;
    if (output.isEmpty())
        return QStringLiteral("nothing written");
    const auto &rows = mapi_test::secretShapes();
    for (size_t i = 0; i < rows.size(); ++i) {
        if (holds(output, QByteArray::fromStdString(rows[i].secret)))
            problems << QStringLiteral("LEAK %1 (%2)").arg(QString::fromStdString(rows[i].name), QString::fromStdString(rows[i].secret));
        if (markers && !holds(output, marker(i).toUtf8()))
            problems << QStringLiteral("no marker %1 (%2)").arg(marker(i), QString::fromStdString(rows[i].name));
        if (keptToo && !rows[i].kept.empty() && !holds(output, QByteArray::fromStdString(rows[i].kept)))
            problems << QStringLiteral("kept part lost: %1 (%2)").arg(QString::fromStdString(rows[i].name), QString::fromStdString(rows[i].kept));
    }
    for (const char *secret : kUrlSecrets)
        if (output.contains(secret))
            problems << QStringLiteral("LEAK url (%1)").arg(QLatin1String(secret));
    if (output.contains("sk-live-conn-0123456789"))
        problems << QStringLiteral("LEAK map/connect credential");
    return problems.join(QLatin1Char('\n'));
}

#define MAPI_AUDIT(output, keptToo)                                                                     \
    do {                                                                                                \
        const QString mapiAudit = audit((output), (keptToo));                                          \
        QVERIFY2(mapiAudit.isEmpty(), qPrintable(mapiAudit));                                          \
    } while (false)

// Logs: every message the program (or Qt) logs while a test runs.
QStringList &logged()
{
    static QStringList lines;
    return lines;
}
QtMessageHandler g_previous = nullptr;
void logCollector(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    logged() << message;
    if (g_previous && type != QtWarningMsg && type != QtCriticalMsg)
        g_previous(type, context, message);
}

} // namespace

class TestWaysOut : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        g_previous = qInstallMessageHandler(logCollector);
        QVERIFY(m_dir.isValid());
        QVERIFY(!writeRawTrace(m_dir.filePath(QStringLiteral("secrets.jsonl"))).isEmpty());
        // The fixture itself: the raw trace holds every secret (a check that found nothing to
        // redact would prove nothing).
        const QByteArray raw = readAll(m_dir.filePath(QStringLiteral("secrets.jsonl")));
        for (const mapi_test::SecretShape &row : mapi_test::secretShapes())
            QVERIFY2(holds(raw, QByteArray::fromStdString(row.secret)), row.name.c_str());
        feed(m_store);
        QCOMPARE(m_store.agents().size(), mapi_test::secretShapes().size());
    }
    void init() { logged().clear(); }
    void cleanup()
    {
        // Logs: whatever was logged during the test holds no secret.
        const QString log = audit(logged().join(QLatin1Char('\n')).toUtf8(), false, false);
        QVERIFY2(logged().isEmpty() || log.isEmpty(), qPrintable(log));
    }

    void sessionJournal();
    void recordedTrace();
    void convertedTrace();
    void csvTables_data();
    void csvTables();
    void chromeTrace();
    void otlp();
    void incidentBundle();
    void webhookBody();
    void problems();
    void connectionErrorAndLogs();
    void cli_data();
    void cli();
    void watch();

private:
    QTemporaryDir m_dir;
    SystemStore m_store;
};

// The journal: every record (and the URL in the header and session.json) redacted; each record
// still read back whole.
void TestWaysOut::sessionJournal()
{
    SessionJournal journal;
    const QString folder = m_dir.filePath(QStringLiteral("journal"));
    QString error;
    QVERIFY2(journal.open(folder, QString::fromLatin1(kUrl), &error), qPrintable(error));
    journal.write({kStart, QStringLiteral("open"), 1, QByteArray(kUrl), false, Json()});
    for (const TraceRecord &r : secretTraffic())
        journal.write(r);
    journal.flush();
    QString all;
    QByteArray content;
    for (const QString &part : journal.parts())
        content += readAll(part);
    QFile info(folder + QStringLiteral("/session.json"));
    QVERIFY(info.open(QIODevice::ReadOnly));
    content += info.readAll();
    journal.close(true);
    QVERIFY(content.contains("agents.example.org"));
    MAPI_AUDIT(content, true);
}

// A recording (record, File → Record to file): TraceWriter.
void TestWaysOut::recordedTrace()
{
    const QString path = m_dir.filePath(QStringLiteral("recorded.jsonl"));
    TraceWriter writer;
    QString error;
    QVERIFY2(writer.open(path, QString::fromLatin1(kUrl), &error), qPrintable(error));
    writer.socketOpened(QString::fromLatin1(kUrl), kStart); // even an unredacted URL handed over
    for (const TraceRecord &r : secretTraffic())
        r.dir == QLatin1String("send") ? writer.frameSent(r.raw, r.timeMs) : void(writer.frameReceived(r.raw, r.timeMs, false));
    writer.socketClosed(QStringLiteral("closed: Authorization: Bearer sk-proj-Abc123Def456Ghi789Jkl"), kStart + 900'000);
    writer.close();
    const QByteArray content = readAll(path);
    QVERIFY(content.contains("closed: Authorization: Bearer"));
    MAPI_AUDIT(content, true);
}

// convert to a trace, Save session as…, Save visible range as… (writeTraceSlice) from a trace
// whose records hold the secrets: re-encoded, so redacted.
void TestWaysOut::convertedTrace()
{
    const QString out = m_dir.filePath(QStringLiteral("converted.jsonl.zst"));
    const TraceSlice slice = writeTraceSlice(m_dir.filePath(QStringLiteral("secrets.jsonl")), out, std::nullopt, std::nullopt);
    QVERIFY2(slice.ok(), qPrintable(slice.error));
    QVERIFY(slice.written > 400);
    MAPI_AUDIT(readAll(out), true);
}

void TestWaysOut::csvTables_data()
{
    QTest::addColumn<int>("table");
    QTest::addColumn<bool>("keptToo"); // the table carries each row's whole text
    QTest::newRow("agents") << int(CsvTable::Agents) << true;
    QTest::newRow("messages") << int(CsvTable::Messages) << true;
    QTest::newRow("tasks") << int(CsvTable::Tasks) << false; // ids and types: the marker only
    QTest::newRow("turns") << int(CsvTable::Turns) << true;
    QTest::newRow("checkpoints") << int(CsvTable::Checkpoints) << true;
    QTest::newRow("acp") << int(CsvTable::Acp) << true;
}

void TestWaysOut::csvTables()
{
    QFETCH(int, table);
    QFETCH(bool, keptToo);
    QBuffer buffer;
    QVERIFY(buffer.open(QIODevice::WriteOnly));
    const ErrorOr<qint64> rows = writeCsv(m_store, CsvTable(table), buffer);
    QVERIFY(rows.ok());
    QVERIFY2(*rows >= qint64(mapi_test::secretShapes().size()), qPrintable(QString::number(*rows)));
    MAPI_AUDIT(buffer.data(), keptToo);
}

void TestWaysOut::chromeTrace()
{
    QBuffer buffer;
    QVERIFY(buffer.open(QIODevice::WriteOnly));
    ChromeTraceOptions options;
    options.processName = QStringLiteral("MAP system (%1)").arg(QLatin1String(kUrl)); // as the CLI names it
    QVERIFY(writeChromeTrace(m_store, buffer, options));
    QVERIFY(QJsonDocument::fromJson(buffer.data()).isObject());
    MAPI_AUDIT(buffer.data(), true);
}

void TestWaysOut::otlp()
{
    const QString path = m_dir.filePath(QStringLiteral("out.otlp.json"));
    OtlpOptions options;
    options.serviceName = QStringLiteral("MAP system (%1)").arg(QLatin1String(kUrl));
    QString error;
    QVERIFY2(writeOtlpJson(m_store, path, options, nullptr, &error), qPrintable(error));
    MAPI_AUDIT(readAll(path), true);
}

// Default options (no key names, no patterns of the operator's): the bundle is a trace, so the
// rules of every trace apply to its records and header (docs/security.md).
void TestWaysOut::incidentBundle()
{
    const QString out = m_dir.filePath(QStringLiteral("bundle.jsonl"));
    BundleOptions options;
    options.content.note = QStringLiteral("seen with password: correct-horse-battery");
    const BundleResult r = writeIncidentBundle(m_dir.filePath(QStringLiteral("secrets.jsonl")), out, options);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.recordsWritten > 400);
    const QByteArray content = readAll(out);
    QVERIFY(content.contains("seen with password: "));
    MAPI_AUDIT(content, true);
}

// The webhook: the alert engine's failed alerts quote each agent's error text in their reason.
void TestWaysOut::webhookBody()
{
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost));
    QByteArray received;
    int posts = 0;
    QHash<QTcpSocket *, QByteArray> buffers;
    connect(&server, &QTcpServer::newConnection, this, [&] {
        while (QTcpSocket *socket = server.nextPendingConnection())
            connect(socket, &QTcpSocket::readyRead, this, [&, socket] {
                QByteArray &b = buffers[socket];
                b += socket->readAll();
                const int end = b.indexOf("\r\n\r\n");
                if (end < 0)
                    return;
                int length = 0;
                for (const QByteArray &line : b.left(end).split('\n'))
                    if (line.toLower().startsWith("content-length:"))
                        length = line.mid(15).trimmed().toInt();
                if (b.size() < end + 4 + length)
                    return;
                received += b.mid(end + 4, length) + '\n';
                ++posts;
                buffers.remove(socket);
                socket->write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                socket->disconnectFromHost();
            });
    });
    AlertEngine engine;
    std::vector<AlertChange> changes;
    for (int round = 0; round < 100 && (changes.empty() || engine.isBehind(m_store) || engine.isEvaluating()); ++round)
        for (AlertChange &c : engine.update(m_store))
            changes.push_back(std::move(c));
    int failed = 0;
    for (const AlertChange &c : changes)
        failed += c.alert.kind == AlertKind::Failed && c.alert.reason.contains(QLatin1String("failed: ")) ? 1 : 0;
    QCOMPARE(failed, int(mapi_test::secretShapes().size()));
    // The failed alerts only: the queue's bound (100) must not drop any of them.
    std::vector<AlertChange> failedChanges;
    for (const AlertChange &c : changes)
        if (c.alert.kind == AlertKind::Failed)
            failedChanges.push_back(c);
    AlertWebhook hook;
    hook.setTarget(QUrl(QStringLiteral("http://127.0.0.1:%1/hook").arg(server.serverPort())), QString(), AlertSeverity::Info);
    hook.offer(failedChanges);
    QTRY_COMPARE_WITH_TIMEOUT(posts, failed, 30000);
    QCOMPARE(hook.dropped(), 0);
    MAPI_AUDIT(received, true);
}

// Problems: a frame that does not parse says where it broke, never what it read; a refused
// request's problem quotes the server's error text (docs/security.md: the store keeps what the
// server sent; the ways out redact it).
void TestWaysOut::problems()
{
    QByteArray parseDetails;
    int invalid = 0;
    int refused = 0;
    QByteArray refusedDetails;
    for (const ProtocolProblem &p : m_store.problems()) {
        if (p.kind == ProblemKind::InvalidJson) {
            ++invalid;
            parseDetails += p.detail.toUtf8() + '\n';
        } else if (p.kind == ProblemKind::MethodFailed) {
            ++refused;
            refusedDetails += p.detail.toUtf8() + '\n';
        }
    }
    QCOMPARE(invalid, int(mapi_test::secretShapes().size()));
    QCOMPARE(refused, int(mapi_test::secretShapes().size()));
    QVERIFY2(parseDetails.contains("column"), parseDetails.constData()); // where it broke is said
    const QString parse = audit(parseDetails, false, false);
    QVERIFY2(parse.isEmpty(), qPrintable(parse));
    // Through the ways out that show them (state's JSON, the inspector): redacted, markers kept.
    MAPI_AUDIT(redactSecrets(refusedDetails), true);
}

// The connection's error text (status bar, CLI error line) and the log: a URL with user info and
// a token, a credential, a connection refused.
void TestWaysOut::connectionErrorAndLogs()
{
    QTcpServer closed; // a port nobody listens on: bind, then close
    QVERIFY(closed.listen(QHostAddress::LocalHost));
    const quint16 port = closed.serverPort();
    closed.close();
    ClientOptions o;
    o.url = QUrl(QStringLiteral("ws://ops:hunter2@127.0.0.1:%1/map?token=qt-1234abcd&room=ops").arg(port));
    o.auth.method = AuthConfig::Method::Bearer;
    o.auth.credential = QStringLiteral("sk-live-conn-0123456789");
    o.reconnect = false;
    MapClient client(o);
    QSignalSpy failed(&client, &MapClient::fatalError);
    QStringList errors;
    connect(&client, &MapClient::lastErrorChanged, this, [&errors](const QString &e) { errors << e; });
    client.start();
    QTRY_VERIFY_WITH_TIMEOUT(!client.lastError().isEmpty(), 15000);
    errors << client.lastError();
    for (const QList<QVariant> &f : failed)
        errors << f.at(1).toString();
    const QByteArray said = errors.join(QLatin1Char('\n')).toUtf8();
    QVERIFY2(!said.trimmed().isEmpty(), "no error text: nothing to check");
    const QString check = audit(said + '\n' + logged().join(QLatin1Char('\n')).toUtf8(), false, false);
    QVERIFY2(check.isEmpty(), qPrintable(check + QLatin1Char('\n') + QString::fromUtf8(said)));
    // The handler sees what is logged (a check of an empty log would prove nothing).
    qInfo("ways-out log check");
    QVERIFY(logged().contains(QStringLiteral("ways-out log check")));
}

void TestWaysOut::cli_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("out");     // a file the command writes (empty: stdout)
    QTest::addColumn<bool>("keptToo");
    QTest::addColumn<bool>("markers");
    QTest::addColumn<int>("exitCode");
    const QString trace = m_dir.filePath(QStringLiteral("secrets.jsonl"));
    const QString t = QStringLiteral("--trace");
    QTest::newRow("state") << QStringList{QStringLiteral("state"), t, trace} << QString() << false << true << 0;
    QTest::newRow("stats") << QStringList{QStringLiteral("stats"), t, trace} << QString() << false << false << 0;
    QTest::newRow("chain") << QStringList{QStringLiteral("chain"), t, trace, QStringLiteral("--message"), QStringLiteral("msg-wo05")}
                           << QString() << false << false << 0;
    const auto convert = [&](const QString &name, const QStringList &extra, bool kept) {
        const QString out = m_dir.filePath(QStringLiteral("cli-") + name);
        QTest::addRow("convert %s%s", qPrintable(name), qPrintable(extra.join(u' ')))
            << (QStringList{QStringLiteral("convert"), t, trace, QStringLiteral("--out"), out} + extra) << out << kept << true << 0;
    };
    convert(QStringLiteral("out.jsonl"), {}, true);
    convert(QStringLiteral("out.json"), {}, true);
    convert(QStringLiteral("out.otlp.json"), {}, true);
    for (const char *table : {"agents", "messages", "tasks", "turns", "checkpoints", "acp"})
        convert(QStringLiteral("%1.csv").arg(QLatin1String(table)), {QStringLiteral("--table"), QLatin1String(table)},
                QLatin1String(table) != QLatin1String("tasks"));
    const QString bundle = m_dir.filePath(QStringLiteral("cli-bundle.jsonl"));
    QTest::newRow("bundle") << QStringList{QStringLiteral("bundle"), t, trace, QStringLiteral("--out"), bundle} << bundle << true
                            << true << 0;
    QTest::newRow("bundle --preview") << QStringList{QStringLiteral("bundle"), t, trace, QStringLiteral("--preview")} << QString()
                                      << false << false << 0;
    // Error lines: a file named with a secret, a connection refused to a URL holding credentials.
    QTest::newRow("error: trace named with a token")
        << QStringList{QStringLiteral("stats"), t, QStringLiteral("/nonexistent/access_token=q1w2e3r4t5&page=2")} << QString() << false
        << false << 6;
    QTest::newRow("error: connection refused")
        << QStringList{QStringLiteral("state"), QStringLiteral("--url"), QStringLiteral("ws://ops:hunter2@127.0.0.1:1/map?token=qt-1234abcd"),
                       QStringLiteral("--token"), QStringLiteral("sk-live-conn-0123456789")}
        << QString() << false << false << 2;
}

// The CLI on a trace that holds the secrets: stdout, stderr and the files it writes.
void TestWaysOut::cli()
{
    QFETCH(QStringList, args);
    QFETCH(QString, out);
    QFETCH(bool, keptToo);
    QFETCH(bool, markers);
    QFETCH(int, exitCode);
    QProcess p;
    p.start(QStringLiteral(MAPI_CLI_PATH), args);
    QVERIFY(p.waitForFinished(120000));
    const QByteArray stdOut = p.readAllStandardOutput();
    const QByteArray stdErr = p.readAllStandardError();
    QVERIFY2(p.exitCode() == exitCode, qPrintable(QStringLiteral("exit %1: %2").arg(p.exitCode()).arg(QString::fromUtf8(stdErr))));
    QByteArray written = out.isEmpty() ? stdOut : readAll(out);
    QVERIFY2(!QByteArray(stdOut + written + stdErr).trimmed().isEmpty(), "nothing printed");
    if (exitCode == 0) { // what it wrote: no secret, every row's marker (and kept part)
        const QString check = audit(written, keptToo, markers);
        QVERIFY2(check.isEmpty(), qPrintable(check));
    }
    const QString streams = audit(stdOut + '\n' + stdErr, false, false);
    QVERIFY2(streams.isEmpty(), qPrintable(streams + QLatin1Char('\n') + QString::fromUtf8(stdErr.left(2000))));
    if (exitCode == 6)
        QVERIFY2(stdErr.contains("access_token=REDACTED&page=2"), stdErr.constData());
    if (exitCode == 2)
        QVERIFY2(stdErr.contains("127.0.0.1"), stdErr.constData());
}

// `watch`: a server that answers the handshake and then sends every row's traffic (the events and
// the frames that do not parse). Each alert line names its agents (whose names hold the secrets)
// and quotes the error reports in its reason: stdout and stderr hold no secret, and the alerts
// were printed (a watch that printed nothing would prove nothing).
void TestWaysOut::watch()
{
    QWebSocketServer server(QStringLiteral("ways-out"), QWebSocketServer::NonSecureMode);
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    connect(&server, &QWebSocketServer::newConnection, this, [&server] {
        QWebSocket *socket = server.nextPendingConnection();
        connect(socket, &QWebSocket::textMessageReceived, socket, [socket](const QString &text) {
            const Json request = Json::parse(text.toStdString(), nullptr, false);
            const std::string method = request.is_object() ? request.value("method", "") : "";
            Json result = Json::object();
            if (method == "map/connect")
                result = {{"protocolVersion", 1}, {"sessionId", "S1"}, {"systemInfo", {{"name", "ways-out"}}}};
            else if (method == "map/subscribe")
                result = {{"subscriptionId", "sub-1"}};
            else if (method == "map/agents/list")
                result = {{"agents", Json::array()}};
            else if (method == "map/scopes/list")
                result = {{"scopes", Json::array()}};
            if (request.is_object() && request.contains("id"))
                socket->sendTextMessage(QString::fromStdString(Json({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}}).dump()));
            if (method != "map/scopes/list")
                return; // the traffic comes after the snapshot (an event before it would be superseded by it)
            for (const TraceRecord &r : secretTraffic()) {
                const bool response = r.raw.contains("\"id\":") && !r.raw.contains("map/event");
                if (r.dir == QLatin1String("recv") && !response)
                    socket->sendTextMessage(QString::fromUtf8(r.raw));
            }
        });
    });
    QProcess p;
    p.start(QStringLiteral(MAPI_CLI_PATH),
            {QStringLiteral("watch"), QStringLiteral("--url"), QStringLiteral("ws://127.0.0.1:%1").arg(server.serverPort()),
             QStringLiteral("--duration"), QStringLiteral("3")});
    QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, 60000); // serves the CLI meanwhile
    const QByteArray stdOut = p.readAllStandardOutput();
    const QByteArray stdErr = p.readAllStandardError();
    int raised = 0;
    for (const QByteArray &line : stdOut.split('\n'))
        raised += line.contains("\"state\":\"raised\"") ? 1 : 0;
    QVERIFY2(raised >= int(mapi_test::secretShapes().size()),
             qPrintable(QStringLiteral("%1 alerts raised\n").arg(raised) + QString::fromUtf8(stdOut.left(3000) + stdErr.left(2000))));
    const QString check = audit(stdOut + '\n' + stdErr, false, true);
    QVERIFY2(check.isEmpty(), qPrintable(check + QLatin1Char('\n') + QString::fromUtf8(stdOut.left(3000))));
}

QTEST_GUILESS_MAIN(TestWaysOut)
#include "tst_ways_out.moc"
