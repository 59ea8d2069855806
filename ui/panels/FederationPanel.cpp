#include "panels/FederationPanel.h"

#include "common/TableSetup.h"
#include "common/Redaction.h"
#include "common/TimeText.h"
#include "client/Transport.h"
#include "session/InspectorSession.h"

#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace mapi::ui {

FederationPanel::FederationPanel(InspectorSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
{
    // Plain text: a server's words (its refusal, its peers' names) are not markup.
    for (const auto &[label, name] : {std::pair{m_status, "federationStatus"}, std::pair{m_buffer, "federationBuffer"}}) {
        label->setObjectName(QLatin1String(name));
        label->setWordWrap(true);
        label->setTextFormat(Qt::PlainText);
    }
    m_peers->setObjectName(QStringLiteral("federationPeers"));
    m_peers->setColumnCount(5);
    m_peers->setHorizontalHeaderLabels({tr("System"), tr("Endpoint"), tr("Status"), tr("Connected since"), tr("Last activity")});
    setUpReadOnlyTable(m_peers, QAbstractItemView::SingleSelection, 4);
    m_discard->setText(tr("Discard buffered messages…"));
    m_discard->setObjectName(QStringLiteral("federationDiscard"));
    m_discard->setToolTip(tr("map/federation/buffer/flush: the server deletes the messages it holds for a system; "
                             "it does not deliver them"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    for (QWidget *part : {static_cast<QWidget *>(m_status), static_cast<QWidget *>(m_peers), static_cast<QWidget *>(m_buffer)})
        layout->addWidget(part, part == m_peers ? 1 : 0);
    layout->addWidget(m_discard, 0, Qt::AlignLeft);
    m_outcome->setObjectName(QStringLiteral("federationOutcome"));
    m_outcome->setTextFormat(Qt::PlainText);
    m_outcome->setWordWrap(true);
    layout->addWidget(m_outcome);
    connect(m_discard, &QPushButton::clicked, this, &FederationPanel::discard);
    connect(session->store(), &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (changes.federationChanged)
            refresh();
    });
    connect(session, &InspectorSession::sourceChanged, this, &FederationPanel::refresh);
    connect(session, &InspectorSession::stateChanged, this, [this] { refresh(); });
    connect(session, &InspectorSession::observerOnlyChanged, this, [this] { refresh(); });
    connect(session, &InspectorSession::timeTravelChanged, this, [this] { refresh(); });
    refresh();
}

QString FederationPanel::statusText() const
{
    return m_status->text();
}

QString FederationPanel::bufferText() const
{
    return m_buffer->text();
}

QString FederationPanel::outcomeText() const
{
    return m_outcome->text();
}

QString FederationPanel::discardQuestion(const QString &system, qint64 count)
{
    return tr("Discard the %n message(s) the server holds for %1?\n\nmap/federation/buffer/flush deletes them: they are "
              "not delivered, now or later.", nullptr, int(std::min<qint64>(count, INT_MAX))).arg(system);
}

void FederationPanel::refresh()
{
    const FederationLedger &f = m_session->store()->federation();
    using Access = FederationLedger::Access;
    switch (f.peersAccess()) {
    case Access::NotAsked:
        m_status->setText(tr("Nothing read of this server's federation yet."));
        break;
    case Access::Missing:
        m_status->setText(tr("This server has no federation methods (map/federation/list: missing). Not an error: "
                             "federation is optional."));
        break;
    case Access::Refused:
        m_status->setText(tr("The server keeps its federation to gateway-role connections (\"%1\"). Connect as a gateway "
                             "to see its peers: an address of the server's that grants the role (the SDK's servers "
                             "choose the role when they accept a connection), or participantType gateway "
                             "(map-inspector-cli --gateway) where the server reads it.")
                              .arg(redactSecrets(f.peersRefusal())));
        break;
    case Access::Failed:
        m_status->setText(tr("map/federation/list failed: \"%1\". Asked again at the next connection.").arg(redactSecrets(f.peersRefusal())));
        break;
    case Access::Listed:
        m_status->setText(tr("%n peer system(s), as the server lists them (read again every 10 s).", nullptr, int(f.peers().size()))
                          + (f.peersNotKept() > 0 ? tr(" %1 more not kept.").arg(f.peersNotKept()) : QString()));
        break;
    }
    const bool newRows = m_peers->rowCount() != int(f.peers().size());
    m_peers->setRowCount(int(f.peers().size()));
    int row = 0;
    for (const FederationPeer &p : f.peers()) {
        const auto cell = [&](int column, const QString &text) { m_peers->setItem(row, column, new QTableWidgetItem(text)); };
        cell(0, p.systemId);
        cell(1, redactedUrl(QUrl(p.endpoint))); // a peer's address may carry a credential
        cell(2, p.status);
        cell(3, p.connectedAtMs > 0 ? dateAndTime(p.connectedAtMs) : QString());
        cell(4, p.lastActivityMs > 0 ? dateAndTime(p.lastActivityMs) : QString());
        ++row;
    }
    if (newRows)
        m_peers->resizeColumnsToContents();
    switch (f.bufferAccess()) {
    case Access::Listed: {
        QStringList by;
        for (const auto &[system, count] : f.bufferBySystem())
            by << QStringLiteral("%1: %2").arg(system).arg(count);
        m_buffer->setText(f.bufferTotal() == 0 ? tr("Outage buffer: empty.")
                                               : tr("Outage buffer: %1 message(s) held for systems it cannot reach (%2).")
                                                     .arg(f.bufferTotal()).arg(by.join(QLatin1String(", "))));
        break;
    }
    case Access::Missing:
        m_buffer->setText(tr("Outage buffer: this server has no map/federation/buffer/stats (missing)."));
        break;
    case Access::Refused:
    case Access::Failed:
        m_buffer->setText(tr("Outage buffer: not read (\"%1\").").arg(redactSecrets(f.bufferRefusal())));
        break;
    case Access::NotAsked:
        m_buffer->clear();
        break;
    }
    const bool live = m_session->source() == InspectorSession::Source::Live && !m_session->isTimeTravelling()
        && m_session->clientState() == ClientState::Live;
    m_discard->setVisible(f.bufferAccess() == Access::Listed);
    m_discard->setEnabled(live && !m_session->observerOnly() && f.bufferTotal() > 0);
    const bool available = f.hasSomethingToShow();
    if (available != m_available) {
        m_available = available;
        Q_EMIT availabilityChanged(available);
    }
}

void FederationPanel::discard()
{
    const FederationLedger &f = m_session->store()->federation();
    QStringList systems;
    for (const auto &[system, count] : f.bufferBySystem())
        if (count > 0)
            systems << system;
    if (systems.isEmpty())
        return;
    bool ok = true;
    const QString system = systems.size() == 1 ? systems.first()
                                               : QInputDialog::getItem(this, tr("Discard buffered messages"),
                                                                       tr("The messages held for which system?"), systems, 0, false, &ok);
    if (!ok || system.isEmpty())
        return;
    qint64 count = 0;
    for (const auto &[s, c] : f.bufferBySystem())
        if (s == system)
            count = c;
    QMessageBox box(QMessageBox::Warning, tr("Discard buffered messages"), discardQuestion(system, count),
                    QMessageBox::NoButton, this);
    box.setTextFormat(Qt::PlainText); // the system's name is the server's words
    QPushButton *yes = box.addButton(tr("Discard"), QMessageBox::DestructiveRole);
    QPushButton *no = box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(no);
    box.exec();
    if (box.clickedButton() != yes)
        return;
    m_session->discardFederationBuffer(system, [this, system](bool done, qint64 discarded, const QString &why) {
        m_outcome->setText(done ? tr("%1 message(s) held for %2 were discarded.").arg(discarded).arg(system)
                                : tr("Discarding the messages held for %1: %2").arg(system, why));
    });
}

} // namespace mapi::ui
