#include "panels/ProcessOutputPanel.h"

#include "client/StreamTransports.h"
#include "session/InspectorSession.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

namespace mapi::ui {

ProcessOutputPanel::ProcessOutputPanel(InspectorSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_header(new QLabel(this))
    , m_text(new QPlainTextEdit(this))
{
    m_header->setObjectName(QStringLiteral("processCommand"));
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setObjectName(QStringLiteral("processOutput"));
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setMaximumBlockCount(int(InspectorSession::kMaxProcessOutputLines));
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_header);
    layout->addWidget(m_text, 1);
    m_flush.setSingleShot(true);
    m_flush.setInterval(kFlushMs);
    connect(&m_flush, &QTimer::timeout, this, &ProcessOutputPanel::flush);
    connect(session, &InspectorSession::processOutputAdded, this, [this](const QStringList &lines, qint64 skipped) {
        // The text keeps no more than kMaxProcessOutputLines: the newest lines, and the notice
        // of those skipped just before them (said in the header's count too).
        const qsizetype room = InspectorSession::kMaxProcessOutputLines - (skipped > 0 ? 1 : 0);
        if (skipped > 0) {
            m_pending << tr("… %n lines not shown: the process wrote faster than they could be kept", nullptr,
                            int(std::min<qint64>(skipped, INT_MAX)));
            reload();
        }
        m_pending << (lines.size() > room ? lines.mid(lines.size() - room) : lines);
        if (const qsizetype over = m_pending.size() - InspectorSession::kMaxProcessOutputLines; over > 0)
            m_pending.remove(0, over);
        if (!m_flush.isActive())
            m_flush.start();
    });
    connect(session, &InspectorSession::sourceReplaced, this, [this] { // a new system: its own output
        m_text->clear();
        m_pending.clear();
    });
    connect(session, &InspectorSession::sourceChanged, this, &ProcessOutputPanel::reload);
    connect(session, &InspectorSession::stateChanged, this, [this] { reload(); });
    m_text->setPlainText(session->processOutput().join(u'\n'));
    reload();
}

QString ProcessOutputPanel::text() const
{
    return m_text->toPlainText();
}

void ProcessOutputPanel::reload()
{
    const QUrl url = m_session->connectionUrl();
    const bool launched = m_session->source() == InspectorSession::Source::Live && url.scheme() == QLatin1String("stdio");
    if (!launched) {
        m_header->setText(tr("No launched MAP system. Connect with \"Launch a command\" to see its standard error here."));
    } else {
        const QString command = redactedUrl(url).mid(int(qstrlen("stdio:")));
        const ClientState state = m_session->clientState();
        const bool ended = state == ClientState::Closed || state == ClientState::Failed;
        QString header = ended ? tr("%1 — ended: %2").arg(command, m_session->lastError()) : tr("%1 — standard error").arg(command);
        if (const qint64 trimmed = m_session->processOutputTrimmed(); trimmed > 0)
            header += tr(" (the newest %1 lines; %2 older lines not kept)").arg(InspectorSession::kMaxProcessOutputLines).arg(trimmed);
        m_header->setText(header);
    }
    if (launched != m_available) {
        m_available = launched;
        Q_EMIT availabilityChanged(launched);
    }
}

void ProcessOutputPanel::flush()
{
    if (m_pending.isEmpty())
        return;
    m_text->appendPlainText(m_pending.join(u'\n')); // one append: one layout
    m_pending.clear();
}

} // namespace mapi::ui
