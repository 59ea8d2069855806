#include "panels/AcpView.h"

#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace mapi::ui {

namespace {

enum Column { What, Method, Text, Answer, Took };
constexpr int kMessageRowRole = Qt::UserRole + 1; // the message that carried the row (-1: none)
constexpr int kStreamRole = Qt::UserRole + 2;     // a stream row: its stream id
// Rebuilt whole at every change: bounded to the newest streams and each one's first frames (the
// CSV export, --table acp, has them all).
constexpr int kMaxStreamsShown = 200;
constexpr int kMaxFramesShown = 500;

QString tookText(qint64 ms)
{
    return ms < 1000 ? QStringLiteral("%1 ms").arg(ms) : QStringLiteral("%1 s").arg(double(ms) / 1000.0, 0, 'f', 1);
}

QString firstLine(const QString &text)
{
    const qsizetype newline = text.indexOf(QLatin1Char('\n'));
    return newline < 0 ? text : text.left(newline) + QStringLiteral(" …");
}

} // namespace

AcpView::AcpView(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_summary(new QLabel(this))
    , m_tree(new QTreeWidget(this))
    , m_transcript(new QPlainTextEdit(this))
{
    m_summary->setObjectName(QStringLiteral("acpSummary"));
    m_tree->setObjectName(QStringLiteral("acpStreams"));
    m_tree->setHeaderLabels({tr("Stream / frame"), tr("Method"), tr("Text"), tr("Answer"), tr("Took")});
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(Text, QHeaderView::Stretch);
    m_transcript->setObjectName(QStringLiteral("acpTranscript"));
    m_transcript->setReadOnly(true);
    m_transcript->setPlaceholderText(tr("The selected ACP session's transcript (the agent's message chunks) and tool calls."));
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_tree);
    split->addWidget(m_transcript);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);

    connect(m_session->store(), &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (changes.acpChanged || changes.firstNewAgentRow >= 0)
            rebuild();
    });
    connect(m_session->store(), &SystemStore::wasReset, this, &AcpView::rebuild);
    connect(m_tree, &QTreeWidget::currentItemChanged, this, &AcpView::showTranscript);
    connect(m_tree, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem *item) {
        const QVariant carried = item->data(What, kMessageRowRole); // absent on the "not shown" rows
        const int row = carried.isValid() ? carried.toInt() : -1;
        if (row >= 0)
            m_selection->focus(SelectionHub::Kind::Message, QString::number(row), this);
    });
    rebuild();
}

void AcpView::setAgentId(const QString &agentId)
{
    if (agentId == m_agentId)
        return;
    m_agentId = agentId;
    rebuild();
}

int AcpView::streamCount() const
{
    return m_tree->topLevelItemCount();
}

void AcpView::rebuild()
{
    const SystemStore &store = *m_session->store();
    const QString current = m_tree->currentItem() ? m_tree->currentItem()->data(What, kStreamRole).toString() : QString();
    m_tree->clear();
    int waiting = 0;
    int notShown = 0;
    const auto &streams = store.acpStreams().streams();
    for (auto it = streams.rbegin(); it != streams.rend(); ++it) { // newest first
        const AcpStream &s = *it;
        if (!m_agentId.isEmpty() && s.agentId != m_agentId)
            continue;
        if (m_tree->topLevelItemCount() >= kMaxStreamsShown) {
            ++notShown;
            continue;
        }
        int framesShown = 0;
        auto *stream = new QTreeWidgetItem(m_tree);
        stream->setText(What, s.sessionId.isEmpty() ? s.streamId : tr("%1 · session %2").arg(s.streamId, s.sessionId));
        stream->setData(What, kStreamRole, s.streamId);
        stream->setData(What, kMessageRowRole, -1);
        stream->setText(Method, tr("%n request(s)", nullptr, int(s.exchanges.size())));
        // The IDE side is usually a client's session, not an agent: said so, its id in the tooltip.
        const QString opener = store.agentBehind(s.clientRef).isEmpty() ? tr("a client session") : store.participantName(s.clientRef);
        stream->setText(Text, tr("with %1, opened by %2").arg(store.agentName(s.agentId), opener));
        stream->setToolTip(Text, tr("opened by %1").arg(s.clientRef));
        stream->setText(Answer, s.pending() > 0 ? tr("%n waiting", nullptr, s.pending()) : QString());
        stream->setToolTip(What, s.streamId);
        waiting += s.pending();
        for (const AcpExchange &x : s.exchanges) {
            if (++framesShown > kMaxFramesShown)
                break;
            auto *item = new QTreeWidgetItem(stream);
            item->setText(What, tr("request %1").arg(x.id));
            item->setData(What, kMessageRowRole, x.requestRow >= 0 ? x.requestRow : x.responseRow);
            item->setText(Method, x.method);
            item->setText(Text, firstLine(x.text));
            item->setToolTip(Text, x.text);
            item->setText(Answer, x.responseRow < 0 ? tr("waiting") : x.error ? tr("error: %1").arg(x.answer) : x.answer);
            if (x.responseRow >= 0 && x.requestRow >= 0)
                item->setText(Took, tookText(x.responseMs - x.requestMs));
        }
        for (const AcpNotice &n : s.notices) {
            if (++framesShown > kMaxFramesShown)
                break;
            auto *item = new QTreeWidgetItem(stream);
            item->setText(What, n.update.isEmpty() ? n.method : n.update);
            item->setData(What, kMessageRowRole, n.messageRow);
            item->setText(Method, n.method);
            item->setText(Text, firstLine(n.text));
            item->setToolTip(Text, n.text);
            item->setText(Answer, n.toolStatus);
        }
        if (const qint64 hidden = qint64(s.exchanges.size() + s.notices.size()) - kMaxFramesShown + s.framesNotKept; hidden > 0)
            (new QTreeWidgetItem(stream))->setText(What, tr("%n more frame(s): export ACP sessions (CSV) for all", nullptr, int(hidden)));
        if (s.streamId == current) {
            m_tree->setCurrentItem(stream);
            stream->setExpanded(true);
        }
    }
    if (notShown > 0)
        (new QTreeWidgetItem(m_tree))->setText(What, tr("%n older session(s) not shown", nullptr, notShown));
    m_tree->resizeColumnToContents(What);
    m_tree->resizeColumnToContents(Method);
    m_summary->setText(m_tree->topLevelItemCount() == 0
                           ? tr("No ACP sessions (ACP travels in messages whose payload carries acp and acpContext.streamId).")
                           : tr("%n ACP session(s)", nullptr, m_tree->topLevelItemCount())
                                 + (waiting > 0 ? tr(" · %n request(s) waiting for an answer", nullptr, waiting) : QString()));
    showTranscript();
}

void AcpView::showTranscript()
{
    QTreeWidgetItem *item = m_tree->currentItem();
    while (item && item->parent())
        item = item->parent();
    const AcpStream *s = item ? m_session->store()->acpStreams().find(item->data(What, kStreamRole).toString()) : nullptr;
    if (!s) {
        m_transcript->clear();
        return;
    }
    QString text = s->transcript();
    QStringList tools;
    for (const AcpNotice &n : s->notices)
        if (n.update == QLatin1String("tool_call"))
            tools << tr("• %1 (%2)").arg(n.text, n.toolCallId);
        else if (n.update == QLatin1String("tool_call_update"))
            tools << tr("  %1 → %2").arg(n.toolCallId, n.toolStatus);
    if (!tools.isEmpty())
        text += QStringLiteral("\n\n") + tr("Tool calls:") + QLatin1Char('\n') + tools.join(QLatin1Char('\n'));
    m_transcript->setPlainText(text);
}

} // namespace mapi::ui
