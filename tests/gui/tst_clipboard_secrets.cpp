// The clipboard as a way out (issue 42 item 2): on a trace whose frames hold every row of the
// table of secret shapes (tests/unit/SecretShapes.h), the inspector's "Copy JSON" and "Copy raw"
// of agents (name, metadata), messages (payloads) and problems (frames that do not parse) copy no
// secret, and still copy the rest (each row's marker and kept part); File → Copy link copies a
// link to the trace, its time and the selected agent, and nothing of what the frames hold.
// docs/security.md: "the inspector's tree, raw text and everything it copies to the clipboard"
// are redacted; "Copy raw" copies the frame as received, redacted. Offscreen; any Qt warning fails.
#include "GuiTestSupport.h"

#include "../unit/SecretShapes.h"

#include "alerts/AlertMonitor.h"
#include "controllers/TraceController.h"
#include "models/ProblemModel.h"
#include "panels/InspectorPanel.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QWidget>
#include <QtTest>

using namespace mapi;
using namespace mapi::ui;
using Kind = SelectionHub::Kind;

namespace {

const qint64 kStart = 1'790'000'000'000;

QString marker(size_t row)
{
    return QStringLiteral("wo%1").arg(row, 2, 10, QLatin1Char('0'));
}

QByteArray dumpJson(const Json &j)
{
    return QByteArray::fromStdString(j.dump());
}

QByteArray escaped(const QByteArray &text, int levels)
{
    QByteArray out = text;
    for (int i = 0; i < levels; ++i) {
        const QByteArray literal = dumpJson(Json(out.toStdString()));
        out = literal.mid(1, literal.size() - 2);
    }
    return out;
}

bool holds(const QByteArray &output, const std::string &text)
{
    for (int level = 0; level <= 2; ++level)
        if (output.contains(escaped(QByteArray::fromStdString(text), level)))
            return true;
    return false;
}

// A trace as another tool would write it (nothing redacted): per row an agent whose name and
// metadata hold the text, a message whose payload does, and a frame that does not parse.
bool writeRawTrace(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write(dumpJson({{"format", "map-inspector-trace"}, {"version", 2}, {"startedAt", kStart},
                         {"url", "wss://ops:hunter2@agents.example.org/map?token=qt-1234abcd"}})
               + '\n');
    qint64 t = kStart;
    int seq = 0;
    auto recv = [&](const QByteArray &frame) {
        t += 10;
        if (Json::accept(frame.constBegin(), frame.constEnd()))
            file.write("{\"t\":" + QByteArray::number(t) + ",\"dir\":\"recv\",\"conn\":1,\"frame\":" + frame + "}\n");
        else
            file.write(dumpJson({{"t", t}, {"dir", "recv"}, {"conn", 1}, {"raw", frame.toStdString()}}) + '\n');
    };
    auto event = [&](const char *type, const Json &data, const std::string &agent) {
        ++seq;
        const Json inner = {{"id", "evt-" + std::to_string(seq)}, {"type", type}, {"timestamp", t + 10}, {"data", data},
                            {"source", {{"agentId", agent}}}};
        recv(dumpJson({{"jsonrpc", "2.0"},
                       {"method", "map/event"},
                       {"params", {{"subscriptionId", "sub-1"}, {"sequenceNumber", seq}, {"eventId", inner["id"]}, {"event", inner}}}}));
    };
    const auto &rows = mapi_test::secretShapes();
    for (size_t i = 0; i < rows.size(); ++i) {
        const std::string m = marker(i).toStdString();
        const std::string agent = "ag-" + m;
        event("agent.registered",
              {{"agent", {{"id", agent}, {"name", m + " " + rows[i].text}, {"role", "worker"}, {"state", "idle"},
                          {"metadata", {{"marker", m}, {"description", rows[i].text}}}}}},
              agent);
        event("message.sent",
              {{"message", {{"id", "msg-" + m}, {"from", agent}, {"to", "ag-wo00"}, {"payload", {{"marker", m}, {"text", rows[i].text}}},
                            {"timestamp", t + 10}}}},
              agent);
        recv("{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"log\":" + dumpJson(Json(m + " " + rows[i].text)) + ",\"n\":");
    }
    return true;
}

// The secrets copied, and the markers / kept parts that were not.
QString audit(const QByteArray &copied, bool keptToo)
{
    QStringList problems;
    if (copied.trimmed().isEmpty())
        return QStringLiteral("nothing copied");
    const auto &rows = mapi_test::secretShapes();
    for (size_t i = 0; i < rows.size(); ++i) {
        if (holds(copied, rows[i].secret))
            problems << QStringLiteral("LEAK %1 (%2)").arg(QString::fromStdString(rows[i].name), QString::fromStdString(rows[i].secret));
        if (!holds(copied, marker(i).toStdString()))
            problems << QStringLiteral("no marker %1").arg(marker(i));
        if (keptToo && !rows[i].kept.empty() && !holds(copied, rows[i].kept))
            problems << QStringLiteral("kept part lost: %1 (%2)").arg(QString::fromStdString(rows[i].name), QString::fromStdString(rows[i].kept));
    }
    for (const char *secret : {"hunter2", "qt-1234abcd"})
        if (copied.contains(secret))
            problems << QStringLiteral("LEAK url (%1)").arg(QLatin1String(secret));
    return problems.join(QLatin1Char('\n'));
}

} // namespace

class TestClipboardSecrets : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        mapi::test::failOnQtWarnings();
        QVERIFY(m_dir.isValid());
        QVERIFY(writeRawTrace(m_dir.filePath(QStringLiteral("secrets.jsonl"))));
    }

    void inspectorCopiesNoSecret_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("button");
        for (const char *button : {"copyJsonButton", "copyRawButton"}) {
            QTest::addRow("agents %s", button) << int(Kind::Agent) << QString::fromLatin1(button);
            QTest::addRow("messages %s", button) << int(Kind::Message) << QString::fromLatin1(button);
            QTest::addRow("problems %s", button) << int(Kind::Problem) << QString::fromLatin1(button);
        }
    }

    void inspectorCopiesNoSecret()
    {
        QFETCH(int, kind);
        QFETCH(QString, button);
        InspectorSession session;
        SelectionHub hub;
        InspectorPanel panel(&session, &hub);
        QString error;
        QVERIFY2(session.openTraceAndWait(m_dir.filePath(QStringLiteral("secrets.jsonl")), &error), qPrintable(error));
        const SystemStore &store = *session.store();
        const size_t rows = mapi_test::secretShapes().size();
        QStringList keys;
        if (Kind(kind) == Kind::Agent)
            for (size_t i = 0; i < rows; ++i)
                keys << QStringLiteral("ag-") + marker(i);
        else
            for (size_t i = 0; i < (Kind(kind) == Kind::Message ? store.messages().size() : store.problems().size()); ++i)
                keys << QString::number(i);
        QCOMPARE(size_t(keys.size()), rows);
        auto *copy = panel.findChild<QPushButton *>(button);
        QVERIFY(copy);
        QByteArray copied;
        for (const QString &key : keys) {
            QGuiApplication::clipboard()->clear();
            hub.focus(Kind(kind), key);
            QVERIFY2(copy->isEnabled(), qPrintable(key));
            copy->click();
            const QString text = QGuiApplication::clipboard()->text();
            QVERIFY2(!text.isEmpty(), qPrintable(key));
            copied += text.toUtf8() + '\n';
        }
        // Agents and messages carry each row's whole text; a problem's frame is cut inside it.
        const QString check = audit(copied, Kind(kind) != Kind::Problem);
        QVERIFY2(check.isEmpty(), qPrintable(check));
    }

    // File → Copy link: the trace, the replay position and the selected agent; nothing the
    // frames hold (docs/security.md: a link names a local file, docs/interop.md).
    void copyLinkCopiesNoSecret()
    {
        InspectorSession session;
        SelectionHub hub;
        AlertMonitor monitor;
        QWidget window;
        auto *replayBar = new ReplayBar(&window);
        QAction openTrace, openSample, record, saveSession, saveRange, timeTravel, backToLive, incidentInfo, copyLink;
        record.setCheckable(true);
        monitor.setStore(session.store());
        TraceController traces{&session, &hub, &monitor, replayBar,
                               {&openTrace, &openSample, &record, &saveSession, &saveRange, &timeTravel, &backToLive,
                                &incidentInfo, &copyLink},
                               &window};
        QSignalSpy finished(&session, &InspectorSession::traceLoadFinished);
        QVERIFY(traces.openTrace(m_dir.filePath(QStringLiteral("secrets.jsonl"))));
        QVERIFY(finished.wait(30000) && finished.first().at(0).toBool());
        QVERIFY(copyLink.isEnabled());
        hub.selectAgents({QStringLiteral("ag-wo05")});
        QGuiApplication::clipboard()->clear();
        copyLink.trigger();
        const QByteArray link = QGuiApplication::clipboard()->text().toUtf8();
        QVERIFY2(link.startsWith("map-inspector://"), link.constData());
        QVERIFY2(link.contains("ag-wo05"), link.constData());
        QVERIFY2(link.contains("secrets.jsonl"), link.constData());
        for (const mapi_test::SecretShape &row : mapi_test::secretShapes())
            QVERIFY2(!holds(QByteArray::fromPercentEncoding(link), row.secret), row.name.c_str());
        for (const char *secret : {"hunter2", "qt-1234abcd"})
            QVERIFY2(!link.contains(secret), link.constData());
    }

    // The Problems panel: a server refusing a request quotes a credential in its error text; the
    // panel's detail (shown and in its tooltip) says which request failed and not the secret.
    void problemsPanelShowsNoSecret()
    {
        const QString path = m_dir.filePath(QStringLiteral("refused.jsonl"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(dumpJson({{"format", "map-inspector-trace"}, {"version", 2}, {"startedAt", kStart}, {"url", "ws://127.0.0.1:1/map"}})
                   + '\n');
        file.write("{\"t\":" + QByteArray::number(kStart + 10)
                   + ",\"dir\":\"send\",\"conn\":1,\"frame\":{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"map/agents/list\",\"params\":{}}}\n");
        file.write("{\"t\":" + QByteArray::number(kStart + 20)
                   + ",\"dir\":\"recv\",\"conn\":1,\"frame\":{\"jsonrpc\":\"2.0\",\"id\":99,\"error\":{\"code\":-32001,"
                     "\"message\":\"denied for Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBhcnQ.c2ln\"}}}\n");
        file.close();
        InspectorSession session;
        QString error;
        QVERIFY2(session.openTraceAndWait(path, &error), qPrintable(error));
        // The store keeps what the server sent (the secret is there to be hidden)...
        bool kept = false;
        for (const ProtocolProblem &p : session.store()->problems())
            kept = kept || p.detail.contains(QLatin1String("c2VjcmV0LXBhcnQ"));
        QVERIFY(kept);
        // ... and the table shows it redacted.
        ProblemModel model(session.store());
        QTRY_VERIFY(model.rowCount() > 0);
        bool named = false;
        for (int row = 0; row < model.rowCount(); ++row)
            for (const int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole)}) {
                const QString text = model.index(row, ProblemModel::DetailColumn).data(role).toString();
                QVERIFY2(!text.contains(QLatin1String("c2VjcmV0LXBhcnQ")), qPrintable(text));
                named = named || text.contains(QLatin1String("map/agents/list"));
            }
        QVERIFY(named);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestClipboardSecrets)
#include "tst_clipboard_secrets.moc"
