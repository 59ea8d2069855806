// Federation panel: what the server says of its federation to a gateway-role connection
// (core/model/FederationLedger: map/federation/list and /buffer/stats, read after each snapshot
// and every 10 s) — its peers (system, endpoint, status, since, last activity) and what waits in
// its outage buffer for each system — or why it says nothing: the server has no such method
// ("missing", not an error), or serves it to gateways only ("refused": connect as a gateway).
// Discard… asks the server to flush a system's buffer, said for what it does: the SDK's
// map/federation/buffer/flush deletes the messages, it delivers nothing (confirmed first, Cancel
// the default; refused in observer mode). availabilityChanged(): something to show (a server
// without federation shows no panel). Thread: GUI thread.
#pragma once

#include "model/SystemStore.h"

#include <QWidget>

#include <QLabel>
#include <QPushButton>
#include <QTableWidget>

namespace mapi {
class InspectorSession;
} // namespace mapi

namespace mapi::ui {

class FederationPanel : public QWidget
{
    Q_OBJECT
public:
    explicit FederationPanel(InspectorSession *session, QWidget *parent = nullptr);

    QTableWidget *peersTable() const { return m_peers; }
    QString statusText() const;
    QString bufferText() const;
    QString outcomeText() const;
    // Discard…'s question for `system` holding `count` messages (tests read it).
    static QString discardQuestion(const QString &system, qint64 count);

Q_SIGNALS:
    void availabilityChanged(bool available);

private:
    void refresh();
    void discard();

    InspectorSession *m_session;
    QLabel *m_status = new QLabel(this);
    QTableWidget *m_peers = new QTableWidget(this);
    QLabel *m_buffer = new QLabel(this);
    QPushButton *m_discard = new QPushButton(this);
    QLabel *m_outcome = new QLabel(this); // what the last Discard… came to
    bool m_available = false;
};

} // namespace mapi::ui
